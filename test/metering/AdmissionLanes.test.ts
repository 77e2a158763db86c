/**
 * Admission queues are per key: while one account's admission is stuck (its request counter held
 * by a lock), another account's requests are admitted and answered. With one shared queue the
 * second account would wait behind the first.
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
})
