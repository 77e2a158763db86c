/**
 * The status read (`vda_account_status`): many reads in one statement, each value's rows apart
 * (the counters of its own month, day and minute only, the month's billing terms, the keys in
 * the order lists show them), and the status built from them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { Principal } from "../../src/principal/Domain.js"
import { accountStatusReadAlong, AccountStatus, statusValueOf } from "../../src/accounts/Status.js"
import { usagePeriodsOf } from "../../src/metering/UsageReader.js"
import { Admission } from "../../src/metering/Admission.js"
import type { ReadRow } from "../../src/platform/ReadAlong.js"
import { ManualClock } from "../support/ManualClock.js"
import { makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"

const NOW = Date.parse("2026-11-21T15:00:30Z")
// the account's month and day (Buenos Aires, UTC-3) and the minute of NOW
const MONTH = "2026-11-01T03:00:00Z"
const MINUTE = "2026-11-21T15:00:00Z"

let app: TestApp
let custom: TestAccount
let other: TestAccount
let secondKeyId: string

const principalOf = (account: TestAccount) =>
  app.run(Effect.map(Effect.flatMap(Admission, (admission) => admission.admit(account.production.key, "production")), (admitted) => admitted.principal))

const readRows = (values: ReadonlyArray<string>) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<ReadRow>(`select * from ${accountStatusReadAlong.from(1)}`, accountStatusReadAlong.parameters(values))))

const rowsOf = (rows: ReadonlyArray<ReadRow>, value: string) => rows.filter((row) => accountStatusReadAlong.valueOf(row) === value)

beforeAll(async () => {
  const clock = new ManualClock(NOW - 10_000)
  app = await makeTestApp({ clock })
  custom = await app.createAccount()
  other = await app.createAccount()
  clock.set(NOW)
  await app.run(Effect.gen(function*() {
    const accounts = yield* Accounts
    yield* accounts.setCustom(custom.id, { modulePriceArs: 12, includedModules: 5 })
    // created later: listed after the first key
    secondKeyId = (yield* accounts.createKey({ accountId: custom.id, environment: "production", name: "second" })).id
    const sql = yield* SqlClient.SqlClient
    for (const [account, meter, at, used] of [
      [custom.id, "plate_queries", MONTH, 7],
      [custom.id, "requests", "2026-11-21T14:59:00Z", 99], // the minute before: not this status's
      [custom.id, "plate_queries", "2026-10-01T03:00:00Z", 55], // last month
      [other.id, "plate_queries", MONTH, 3]
    ] as const) {
      yield* sql`insert into meter_counters values (${account}, 'production', ${meter}, ${at}, ${used})`
    }
    yield* sql`insert into module_billing_periods values (${custom.id}, 'production', ${MONTH}, 1000, 4)`
  }))
})
afterAll(async () => {
  await app?.dispose()
})

describe("the status read", () => {
  it("reads many values in one statement, each its own periods, billing and keys; built as HttpApi's read builds it", async () => {
    const status = await app.run(Effect.service(AccountStatus))
    const customPrincipal: Principal = await principalOf(custom) // one request counted in NOW's minute
    const otherPrincipal = await principalOf(other)
    const valueAt = (principal: Principal, at: number) => statusValueOf(principal, usagePeriodsOf(principal, at))
    const values = [valueAt(customPrincipal, NOW), valueAt(customPrincipal, NOW + 60_000), valueAt(otherPrincipal, NOW)]
    expect(new Set(values).size).toBe(3)
    const rows = await readRows(values)

    const now = rowsOf(rows, values[0]!)
    const counters = now.filter((row) => row.kind === "counter").map((row) => [row.meter, (row.periodStart as Date).toISOString(), row.used])
    expect(counters).toEqual(expect.arrayContaining([["plate_queries", new Date(MONTH).toISOString(), 7], ["requests", new Date(MINUTE).toISOString(), 1]]))
    expect(counters.some(([meter, , used]) => meter === "requests" && used === 99)).toBe(false)
    expect(counters.some(([, , used]) => used === 55)).toBe(false)
    expect(now.filter((row) => row.kind === "key").map((row) => row.id)).toEqual([custom.production.id, secondKeyId])

    // the next minute: the same month, but none of this minute's requests
    const next = rowsOf(rows, values[1]!)
    expect(next.some((row) => row.kind === "counter" && row.meter === "requests")).toBe(false)
    expect(next.filter((row) => row.kind === "key")).toHaveLength(2)
    expect(rowsOf(rows, values[2]!).filter((row) => row.kind === "key").map((row) => row.id)).toEqual([other.production.id])

    const built = await app.run(status.read(customPrincipal))
    expect(built.usage.plateQueries.used).toBe(7)
    expect(built.usage.requests.used).toBe(1)
    expect(built.usage.modules?.fines).toMatchObject({ unitPriceCents: 1000, included: 4 })
    expect(built.keys.map((key) => key.id)).toEqual([custom.production.id, secondKeyId])
  })
})
