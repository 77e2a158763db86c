/**
 * The status read (`vda_account_status`): many reads in one statement, each value's rows apart
 * (the counters of its own month, day and minute only, the month's billing terms, the keys in
 * the order lists show them), and the status built from them.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Accounts, type CreatedKey } from "../../src/accounts/Accounts.js"
import type { Principal } from "../../src/principal/Domain.js"
import { AccountStatus, STATUS_READ, statusReadParameters, statusValueOf, statusValueOfRow } from "../../src/accounts/Status.js"
import { usagePeriodsOf } from "../../src/metering/UsageReader.js"
import { AccountsForMeteringLive } from "../../src/accounts/ForMetering.js"
import { Admission } from "../../src/metering/Admission.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"

const NOW = Date.parse("2026-11-21T15:00:30Z")
// the account's month and day (Buenos Aires, UTC-3) and the minute of NOW
const MONTH = "2026-11-01T03:00:00Z"
const MINUTE = "2026-11-21T15:00:00Z"

// the services on a TestClock the test sets: the status's shared reads run in a fiber of the layer
const Services = Layer.mergeAll(Accounts.layer, Admission.layer.pipe(Layer.provide(AccountsForMeteringLive)), AccountStatus.layer).pipe(
  Layer.provideMerge(TestClock.layer()),
  Layer.provideMerge(freshDatabaseLayer(4)),
  Layer.provideMerge(testConfig())
)

const newAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: "Test owner", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })
  const production = yield* accounts.createKey({ accountId: account.id, environment: "production", name: "test" })
  return { id: account.id, production }
})

const principalOf = (account: { readonly production: CreatedKey }) =>
  Effect.map(Effect.flatMap(Admission, (admission) => admission.admit(account.production.key, "production")), (admitted) => admitted.principal)

const readRows = (values: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<ReadRow>(STATUS_READ, statusReadParameters(values)))

type ReadRow = Readonly<Record<string, unknown>>

const rowsOf = (rows: ReadonlyArray<ReadRow>, value: string) => rows.filter((row) => statusValueOfRow(row) === value)

layer(Services, { excludeTestServices: true })("the status read", (it) => {
  it.effect("reads many values in one statement, each its own periods, billing and keys; built as HttpApi's read builds it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW - 10_000)
      const custom = yield* newAccount
      const other = yield* newAccount
      yield* TestClock.setTime(NOW)
      const accounts = yield* Accounts
      yield* accounts.setCustom(custom.id, { modulePriceArs: 12, includedModules: 5 })
      // created later: listed after the first key
      const secondKeyId = (yield* accounts.createKey({ accountId: custom.id, environment: "production", name: "second" })).id
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

      const status = yield* AccountStatus
      const customPrincipal: Principal = yield* principalOf(custom) // one request counted in NOW's minute
      const otherPrincipal = yield* principalOf(other)
      const valueAt = (principal: Principal, at: number) => statusValueOf(principal, usagePeriodsOf(principal, at))
      const values = [valueAt(customPrincipal, NOW), valueAt(customPrincipal, NOW + 60_000), valueAt(otherPrincipal, NOW)]
      expect(new Set(values).size).toBe(3)
      const rows = yield* readRows(values)

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

      const built = yield* status.read(customPrincipal)
      expect(built.usage.plateQueries.used).toBe(7)
      expect(built.usage.requests.used).toBe(1)
      expect(built.usage.modules?.fines).toMatchObject({ unitPriceCents: 1000, included: 4 })
      expect(built.keys.map((key) => key.id)).toEqual([custom.production.id, secondKeyId])
    }))
})
