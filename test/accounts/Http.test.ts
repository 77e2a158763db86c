import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { ManualClock } from "../support/ManualClock.js"
import { ErrorResponse, expectShape, PlansResponse, StatusResponse, UsageResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:10Z"))
let app: TestApp
let account: TestAccount

beforeAll(async () => {
  app = await makeTestApp({ clock })
  account = await app.createAccount({ plan: "growth", owner: "ACME Seguros" })
})
afterAll(() => app.dispose())

const requestsUsed = async (key: string) => {
  const res = await app.production("/v2/usage", withKey(key))
  const body = await json(res)
  return body.data.requests.used as number
}

describe("GET /v2/status", () => {
  it("returns the owner, plan, usage and this environment's keys, never their secrets", async () => {
    const res = await app.production("/v2/status", withKey(account.production.key))
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain(account.production.key)
    expect(text).not.toContain(account.sandbox.key)
    const body = JSON.parse(text)
    expectShape(body, StatusResponse)
    expect(body.data.owner).toBe("ACME Seguros")
    expect(body.data.plan).toBe("growth")
    expect(body.data.usage.environment).toBe("production")
    const entry = {
      id: account.production.id,
      prefix: account.production.key.slice(0, 13),
      last4: account.production.key.slice(-4),
      name: "test",
      status: "active",
      createdAt: expect.any(String)
    }
    expect(body.data.keys).toEqual([{ ...entry, lastUsedAt: expect.toBeOneOf([null, "2026-11-21T15:00:10.000Z"]) }])
    // the key's use is recorded beside the request (never slowing it): it shows once written
    const deadline = Date.now() + 5_000
    let keys = body.data.keys
    while (keys[0].lastUsedAt === null && Date.now() < deadline) {
      keys = (await json(await app.production("/v2/status", withKey(account.production.key)))).data.keys
    }
    expect(keys).toEqual([{ ...entry, lastUsedAt: "2026-11-21T15:00:10.000Z" }])
    expect(account.production.prefix).toMatch(/^vda_live_[0-9A-Za-z]{4}$/)
  })

  it("concurrent reads (which share one read) each show a usage that counts the request itself", async () => {
    const fresh = await app.createAccount({ plan: "growth" })
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.production("/v2/status", withKey(fresh.production.key))))
    const used = (await Promise.all(answers.map(json))).map((body) => body.data.usage.requests.used as number).sort((a, b) => a - b)
    // the k-th request admitted sees at least k requests: sorted, the k-th answer shows at least k
    used.forEach((count, k) => expect(count, `answer ${k + 1} of ${used.join(",")}`).toBeGreaterThanOrEqual(k + 1))
    expect(used.at(-1)).toBe(20)
  })

  it("on the sandbox listener shows the sandbox keys and counters", async () => {
    const res = await app.sandbox("/v2/status", withKey(account.sandbox.key))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectShape(body, StatusResponse)
    expect(body.data.usage.environment).toBe("sandbox")
    expect(body.data.keys.map((k: { id: string }) => k.id)).toEqual([account.sandbox.id])
    expect(body.data.keys[0].prefix).toMatch(/^vda_test_/)
    expect(body.data.keys[0].name).toBeNull()
  })

  it("lists revoked keys as revoked", async () => {
    const extra = await app.run(Effect.flatMap(Accounts, (a) =>
      a.createKey({ accountId: account.id, environment: "production", name: "old" })))
    await app.run(Effect.flatMap(Accounts, (a) => a.revokeKey(extra.id)))
    const body = await json(await app.production("/v2/status", withKey(account.production.key)))
    const entry = body.data.keys.find((k: { id: string }) => k.id === extra.id)
    expect(entry).toMatchObject({ status: "revoked", name: "old", lastUsedAt: null })
  })
})

describe("GET /v2/plans", () => {
  it("lists the four plans with their prices and allowances", async () => {
    const res = await app.production("/v2/plans", withKey(account.production.key))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectShape(body, PlansResponse)
    const row = (p: Record<string, unknown>) => [
      p.id, p.plateQueriesMonthly, p.moduleQueriesMonthly, p.uniquePlatesDaily, p.requestsPerMinute,
      (p.enabledModules as Array<string>).join(","), p.priceArs
    ]
    expect(body.plans.map(row)).toEqual([
      ["free", 100, 20, 25, 30, "fines,vtv", 0],
      ["basic", 2000, 500, 200, 60, "fines,vtv,tax_debt,gnc", 19900],
      ["growth", 10000, 3000, 1000, 120, "fines,vtv,tax_debt,gnc", 59900],
      ["scale", 50000, 15000, 5000, 240, "fines,vtv,tax_debt,gnc", 199900]
    ])
    expect(new Set(body.plans.map((p: { timezone: string }) => p.timezone))).toEqual(new Set(["America/Argentina/Buenos_Aires"]))
  })
})

describe("authentication", () => {
  const expect401 = async (res: Response, message: RegExp) => {
    expect(res.status).toBe(401)
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect(res.headers.get("x-request-id")).toBeTruthy()
    const body = await json(res)
    expectShape(body, ErrorResponse("invalid_api_key"))
    expect(body.error.retryable).toBe(false)
    expect(body.error.requestId).toBe(res.headers.get("x-request-id"))
    expect(body.error.message).toMatch(message)
  }

  it("rejects a missing key", async () => {
    await expect401(await app.production("/v2/status"), /Missing x-api-key/)
    await expect401(await app.production("/v2/usage", withKey("")), /Missing x-api-key/)
  })

  it("rejects unknown and malformed keys", async () => {
    await expect401(await app.production("/v2/status", withKey(`vda_live_${"A".repeat(32)}`)), /Invalid or revoked/)
    await expect401(await app.production("/v2/status", withKey("not-a-key")), /Invalid or revoked/)
    await expect401(await app.production("/v2/status", withKey(account.production.key.slice(0, -1))), /Invalid or revoked/)
  })

  it("rejects a key on the other environment's listener, both ways", async () => {
    await expect401(await app.sandbox("/v2/status", withKey(account.production.key)), /other environment/)
    await expect401(await app.production("/v2/status", withKey(account.sandbox.key)), /other environment/)
  })

  it("a revoked key fails on the very next request", async () => {
    const key = await app.run(Effect.flatMap(Accounts, (a) =>
      a.createKey({ accountId: account.id, environment: "production", name: null })))
    expect((await app.production("/v2/status", withKey(key.key))).status).toBe(200)
    await app.run(Effect.flatMap(Accounts, (a) => a.revokeKey(key.id)))
    await expect401(await app.production("/v2/status", withKey(key.key)), /Invalid or revoked/)
    // the account's other keys keep working
    expect((await app.production("/v2/status", withKey(account.production.key))).status).toBe(200)
  })

  it("answers 401 before looking at the route, and rejected requests count nothing", async () => {
    const before = await requestsUsed(account.production.key)
    await expect401(await app.production("/v2/no-such-route"), /Missing/)
    await expect401(await app.production("/v2/status", withKey(account.sandbox.key)), /other environment/)
    expect(await requestsUsed(account.production.key)).toBe(before + 1) // only the usage call itself
  })

  it("does not require a key outside /v2", async () => {
    expect((await app.production("/healthz")).status).toBe(200)
    expect((await app.production("/readyz")).status).toBe(200)
    expect((await app.production("/openapi.json")).status).toBe(200)
  })
})

describe("request ids", () => {
  it("echoes a sane X-Request-Id and generates one otherwise", async () => {
    const echoed = await app.production("/v2/status", withKey(account.production.key, { headers: { "x-request-id": "client-42.a:b" } }))
    expect(echoed.headers.get("x-request-id")).toBe("client-42.a:b")
    const replaced = await app.production("/v2/status", { headers: { "x-request-id": "bad id\twith spaces" } })
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_[0-9A-Z]{26}$/)
    expect((await json(replaced)).error.requestId).toBe(replaced.headers.get("x-request-id"))
    const health = await app.production("/healthz")
    expect(health.headers.get("x-request-id")).toMatch(/^req_/)
  })
})

describe("unknown routes", () => {
  it("answer 404 invalid_request with our body, counted toward RPM for a valid key", async () => {
    const before = await requestsUsed(account.production.key)
    const res = await app.production("/v2/nothing/here?x=1", withKey(account.production.key))
    expect(res.status).toBe(404)
    const body = await json(res)
    expectShape(body, ErrorResponse("invalid_request"))
    expect(body.error.message).toBe("No route for GET /v2/nothing/here")
    expect(res.headers.get("x-ratelimit-remaining")).not.toBeNull()
    expect(await requestsUsed(account.production.key)).toBe(before + 2)
    const outside = await app.production("/nope")
    expect(outside.status).toBe(404)
    expectShape(await json(outside), ErrorResponse("invalid_request"))
  })

  it("a known path with the wrong method is an unknown route too", async () => {
    const res = await app.production("/v2/status", withKey(account.production.key, { method: "DELETE" }))
    expect(res.status).toBe(404)
    expectShape(await json(res), ErrorResponse("invalid_request"))
  })
})

describe("GET /v2/usage", () => {
  it("validates against the contract", async () => {
    const body = await json(await app.production("/v2/usage", withKey(account.production.key)))
    expectShape(body, UsageResponse)
  })
})
