/**
 * The request pipeline answers a plain vehicle query itself, without the router (src/Http.ts,
 * `answeredDirectly`): these tests watch what reaches the router, and hold each direct answer to
 * the one the same request gets when it is routed (its URL ending in an empty query, `?`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { ManualClock } from "../support/ManualClock.js"
import { registryVehicle } from "../support/VehicleFixtures.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:00Z"))
let app: TestApp
let routed = 0

beforeAll(async () => {
  app = await makeTestApp({ clock, routing: (router) => Effect.andThen(Effect.sync(() => routed++), router) })
  await app.run(Effect.flatMap(VehicleStore, (store) => store.importRegistry([registryVehicle("AC123BD")], new Date())))
})
afterAll(() => app.dispose())

/** A response as the client sees it: status, headers and body, less what differs per request. */
interface Seen {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** Whether the request reached the router. */
  readonly routed: boolean
}

// the remaining requests of the minute, in both rate-limit headers, fall by one a request
const PER_REQUEST_HEADERS = new Set(["x-request-id", "x-ratelimit-remaining", "ratelimit"])

const get = async (account: TestAccount, path: string): Promise<Seen> => {
  const before = routed
  const res = await app.production(`/v2/vehicles/${path}`, withKey(account.production.key))
  const requestId = res.headers.get("x-request-id")!
  return {
    status: res.status,
    headers: Object.fromEntries([...res.headers].filter(([name]) => !PER_REQUEST_HEADERS.has(name))),
    body: (await res.text()).replace(requestId, "<request id>"),
    routed: routed > before
  }
}

/** The query answered directly, then routed: both answers, the routed one without `routed`. */
const bothWays = async (account: TestAccount, plate: string) => {
  const direct = await get(account, plate)
  const viaRouter = await get(account, `${plate}?`)
  expect(direct.routed, `${plate} answered directly`).toBe(false)
  expect(viaRouter.routed, `${plate}? routed`).toBe(true)
  return { direct, viaRouter }
}

const plateQueriesUsed = async (account: TestAccount) =>
  (await json(await app.production("/v2/usage", withKey(account.production.key)))).data.plateQueries.used

describe("a plain vehicle query, answered by the pipeline", () => {
  it("is not routed, and answers what the routed query answers, byte for byte: found, not found, any case", async () => {
    const account = await app.createAccount()
    for (const plate of ["AC123BD", "ac123bd", "ZZ999ZZ"]) {
      const { direct, viaRouter } = await bothWays(account, plate)
      expect(direct.status, plate).toBe(200)
      expect(direct.body, plate).toBe(viaRouter.body)
      expect(direct.headers, plate).toEqual(viaRouter.headers)
    }
    expect(JSON.parse((await get(account, "AC123BD")).body)).toMatchObject({ found: true, data: { plate: "AC123BD" } })
    expect(JSON.parse((await get(account, "ZZ999ZZ")).body)).toEqual({ success: true, found: false, data: null })
    // each query charged once, whichever way it went
    expect(await plateQueriesUsed(account)).toBe(8)
  })

  it("a plate of letters and digits that is no plate: the routed 400 invalid_plate, nothing consumed", async () => {
    const account = await app.createAccount()
    const { direct, viaRouter } = await bothWays(account, "ABC12")
    expect(direct.status).toBe(400)
    expect(JSON.parse(direct.body).error.code).toBe("invalid_plate")
    expect(direct.body).toBe(viaRouter.body)
    expect(direct.headers).toEqual(viaRouter.headers)
    expect(await plateQueriesUsed(account)).toBe(0)
  })

  it("past the plate quota: the routed 429, its details and Retry-After the same, nothing consumed", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await app.run(Effect.flatMap(Accounts, (accounts) =>
      accounts.setCustom(account.id, { plateQueriesMonthly: 1, uniquePlatesDaily: null, requestsPerMinute: null })))
    expect((await get(account, "AC123BD")).status).toBe(200)
    const { direct, viaRouter } = await bothWays(account, "AC123BD")
    expect(direct.status).toBe(429)
    expect(JSON.parse(direct.body).error).toMatchObject({
      code: "quota_exceeded",
      details: { meter: "plate_queries", limit: 1, used: 1 }
    })
    expect(direct.headers["retry-after"]).toBeDefined()
    expect(direct.body).toBe(viaRouter.body)
    expect(direct.headers).toEqual(viaRouter.headers)
    expect(await plateQueriesUsed(account)).toBe(1)
  })

  it("what the router must decode is routed: a query string, a percent-escape, a plate of other characters", async () => {
    const account = await app.createAccount()
    for (const path of ["AC123BD?debug=false", "AC%31%323BD", "AC-123-BD", "%C3%91AB123"]) {
      expect((await get(account, path)).routed, path).toBe(true)
    }
    // the escaped plate is the plate: the same answer as the one answered directly
    expect((await get(account, "AC%31%323BD")).body).toBe((await get(account, "AC123BD")).body)
  })

  it("other routes are routed", async () => {
    const account = await app.createAccount()
    for (const path of ["/v2/status", "/v2/usage"]) {
      const before = routed
      expect((await app.production(path, withKey(account.production.key))).status, path).toBe(200)
      expect(routed, path).toBe(before + 1)
    }
  })
})
