/**
 * PostgreSQL never keeps a request waiting without bound: a statement blocked by a lock gives up
 * after the lock timeout and the client gets 503 temporarily_unavailable with Retry-After, having
 * been charged nothing; once the lock is gone the same request succeeds.
 */
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
let account: TestAccount
let blocker: Pg.Client

beforeAll(async () => {
  app = await makeTestApp({ databaseTimeouts: { statementMs: 1_000, lockMs: 300, acquireMs: 1_000 } })
  account = await app.createAccount()
  blocker = new Pg.Client({ connectionString: app.databaseUrl })
  await blocker.connect()
})
afterAll(async () => {
  await blocker?.end()
  await app?.dispose()
})

describe("database timeouts", () => {
  it("a request blocked by a lock: 503 with Retry-After after the lock timeout, nothing charged; then it works", async () => {
    await blocker.query("begin")
    await blocker.query("lock table meter_counters in access exclusive mode")
    const blocked = await app.sandbox("/v2/vehicles/AB123CD", withKey(account.sandbox.key))
    expect(blocked.status).toBe(503)
    expect(blocked.headers.get("retry-after")).not.toBeNull()
    const body = await json(blocked)
    expectShape(body, ErrorResponse("temporarily_unavailable"))
    expect(JSON.stringify(body)).not.toMatch(/lock|meter_counters|select/i)
    await blocker.query("rollback")

    const usage = await json(await app.sandbox("/v2/usage", withKey(account.sandbox.key)))
    expect(usage.data.plateQueries.used).toBe(0)
    expect((await app.sandbox("/v2/vehicles/AB123CD", withKey(account.sandbox.key))).status).toBe(200)
  })
})
