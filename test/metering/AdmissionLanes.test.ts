/**
 * A listener's requests are admitted together, whatever their keys, and each is counted once for
 * its own account. While one account's admission is stuck (its request counter held by a lock),
 * its requests wait in a lane of their own: another account's requests are admitted and answered.
 */
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ManualClock } from "../support/ManualClock.js"
import { makeTestApp, type TestApp, withKey } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:10Z"))
let app: TestApp
let blocker: Pg.Client

beforeAll(async () => {
  app = await makeTestApp({ clock, databaseTimeouts: { statementMs: 20_000, lockMs: 20_000, acquireMs: 5_000 } })
  blocker = new Pg.Client({ connectionString: app.databaseUrl })
  await blocker.connect()
})
afterAll(async () => {
  await blocker?.end()
  await app?.dispose()
})

describe("admission", () => {
  it("one account stuck in admission does not hold another account back", async () => {
    const busy = await app.createAccount()
    const other = await app.createAccount()
    expect((await app.sandbox("/v2/usage", withKey(busy.sandbox.key))).status).toBe(200) // its counter row exists now
    await blocker.query("begin")
    await blocker.query("select * from meter_counters where account_id = $1 and meter = 'requests' for update", [busy.id])

    const settled: Array<string> = []
    const stuck = app.sandbox("/v2/usage", withKey(busy.sandbox.key)).then((res) => (settled.push("busy"), res.status))
    const free = await app.sandbox("/v2/usage", withKey(other.sandbox.key))
    settled.push("other")
    expect(free.status).toBe(200)
    expect(settled).toEqual(["other"]) // answered while the busy account still waits

    await blocker.query("rollback")
    expect(await stuck).toBe(200)
    expect(settled).toEqual(["other", "busy"])
  })

  it("concurrent requests of many accounts are each admitted and counted once, for their own account", async () => {
    const accounts = await Promise.all(Array.from({ length: 6 }, () => app.createAccount()))
    const perAccount = 5
    // each wave sends one request per account at once: the first wave's batches hold only keys
    // this process has not seen yet
    for (let wave = 0; wave < perAccount; wave++) {
      const statuses = await Promise.all(accounts.map((account) => app.sandbox("/v2/usage", withKey(account.sandbox.key)).then((res) => res.status)))
      expect(statuses).toEqual(accounts.map(() => 200))
    }
    const { rows } = await blocker.query<{ account_id: string; used: number }>(
      "select account_id, sum(used)::int as used from meter_counters where account_id = any($1) and meter = 'requests' group by account_id",
      [accounts.map((account) => account.id)]
    )
    expect(Object.fromEntries(rows.map((row) => [row.account_id, row.used])))
      .toEqual(Object.fromEntries(accounts.map((account) => [account.id, perAccount])))
  })
})
