/**
 * `legacyOpeningBalance`: set with `vda accounts set-opening-balance`, it counts toward this
 * month's plate-query limit and shows in usage; setting it again replaces it.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { runVda } from "../support/Processes.js"
import { expectShape, UsageResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(() => app?.dispose())

const usage = async (key: string) => {
  const call = key.startsWith("vda_live_") ? app.production : app.sandbox
  const body = await json(await call("/v2/usage", withKey(key)))
  expectShape(body, UsageResponse)
  return body.data
}

describe("legacy opening balance", () => {
  it("counts toward the monthly plate limit, shows in usage, and is replaced when set again", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (a) => a.setCustom(account.id, { plateQueriesMonthly: 10, requestsPerMinute: null })))
    const env = { DATABASE_URL: app.databaseUrl }
    expect((await usage(account.sandbox.key)).legacyOpeningBalance).toBeUndefined()

    const set = await runVda(["accounts", "set-opening-balance", "--account", account.id, "--environment", "sandbox", "--plate-queries", "7"], env)
    expect(set.code).toBe(0)
    expect(set.stdout).toContain(`opening balance of ${account.id} (sandbox)`)
    const after = await usage(account.sandbox.key)
    expect(after.plateQueries).toMatchObject({ used: 7, remaining: 3 })
    expect(after.legacyOpeningBalance).toEqual({ plateQueries: 7, source: "owner_quotas.monthly_used" })
    expect(after.byVersion).toEqual({ v2: { plateQueries: 0, moduleQueries: 0, reports: 0 } })
    expect((await usage(account.production.key)).legacyOpeningBalance).toBeUndefined()

    for (const plate of ["AB101CD", "AB102CD", "AB103CD"]) expect((await app.sandbox(`/v2/vehicles/${plate}`, withKey(account.sandbox.key))).status).toBe(200)
    expect((await app.sandbox("/v1/vehicles/basic?plate=AB104CD", withKey(account.sandbox.key))).status).toBe(429)

    await runVda(["accounts", "set-opening-balance", "--account", account.id, "--environment", "sandbox", "--plate-queries", "2"], env)
    const replaced = await usage(account.sandbox.key)
    expect(replaced.plateQueries).toMatchObject({ used: 5, remaining: 5 })
    expect(replaced.legacyOpeningBalance).toEqual({ plateQueries: 2, source: "owner_quotas.monthly_used" })
  })

  it("bad arguments exit 2, an unknown account 1, changing nothing", async () => {
    const env = { DATABASE_URL: app.databaseUrl }
    const account = await app.createAccount()
    for (const value of ["-1", "x", "1.5"]) {
      const result = await runVda(["accounts", "set-opening-balance", "--account", account.id, "--environment", "sandbox", "--plate-queries", value], env)
      expect(result.code, value).toBe(2)
      expect(result.stderr).toContain("--plate-queries must be a non-negative integer")
    }
    const unknown = await runVda(["accounts", "set-opening-balance", "--account", "acct_missing", "--environment", "sandbox", "--plate-queries", "3"], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("unknown account acct_missing")
    expect((await usage(account.sandbox.key)).legacyOpeningBalance).toBeUndefined()
  })
})
