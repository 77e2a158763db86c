import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { makeCharge, Metering } from "../../src/metering/Metering.js"
import { monthOf } from "../../src/metering/Periods.js"
import { ManualClock } from "../support/ManualClock.js"
import { ErrorResponse, expectShape, UsageResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestApp, withKey } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:05Z"))
let app: TestApp

beforeAll(async () => {
  app = await makeTestApp({ clock })
})
afterAll(() => app.dispose())

const getUsage = async (call: TestApp["production"], key: string) => {
  const res = await call("/v2/usage", withKey(key))
  expect(res.status).toBe(200)
  const body = await json(res)
  expectShape(body, UsageResponse)
  return body.data
}

const setCustom = (accountId: string, changes: Parameters<Accounts["Service"]["setCustom"]>[1]) =>
  app.run(Effect.flatMap(Accounts, (a) => a.setCustom(accountId, changes)))

describe("GET /v2/usage", () => {
  it("reports allowances and the current periods in the account timezone", async () => {
    clock.set("2026-12-01T02:59:59Z")
    const account = await app.createAccount({ plan: "basic" })
    const usage = await getUsage(app.production, account.production.key)
    expect(usage).toMatchObject({
      environment: "production",
      apiVersion: "v2",
      meteringPolicyVersion: "2026-11",
      timezone: "America/Argentina/Buenos_Aires",
      entitlements: {
        plan: "basic",
        plateQueriesMonthly: 2000,
        moduleQueriesMonthly: 500,
        uniquePlatesDaily: 200,
        requestsPerMinute: 60,
        enabledModules: ["fines", "vtv", "tax_debt", "gnc"],
        timezone: "America/Argentina/Buenos_Aires"
      },
      plateQueries: { limit: 2000, used: 0, remaining: 2000, startsAt: "2026-11-01T03:00:00.000Z", endsAt: "2026-12-01T03:00:00.000Z" },
      moduleQueries: { limit: 500, used: 0, remaining: 500, startsAt: "2026-11-01T03:00:00.000Z" },
      uniquePlates: { limit: 200, used: 0, startsAt: "2026-11-30T03:00:00.000Z", endsAt: "2026-12-01T03:00:00.000Z" },
      requests: { limit: 60, used: 1, remaining: 59, startsAt: "2026-12-01T02:59:00.000Z", endsAt: "2026-12-01T03:00:00.000Z" },
      byVersion: { v2: { plateQueries: 0, moduleQueries: 0, reports: 0 } }
    })
    expect(usage.byVersion.v1).toBeUndefined()
    expect(usage.modules).toBeUndefined()

    clock.set("2026-12-01T03:00:00Z")
    const december = await getUsage(app.production, account.production.key)
    expect(december.plateQueries.startsAt).toBe("2026-12-01T03:00:00.000Z")
    expect(december.uniquePlates.startsAt).toBe("2026-12-01T03:00:00.000Z")
    expect(december.requests.used).toBe(1)
  })

  it("counts plate queries charged just before the month boundary in November", async () => {
    clock.set("2026-12-01T02:59:59Z")
    const account = await app.createAccount({ plan: "growth" })
    const charge = (at: number) =>
      app.run(Effect.flatMap(Metering, (m) => m.consume({
        accountId: account.id,
        environment: "production",
        charges: [
          makeCharge("plate_queries", 1, monthOf(at, "America/Argentina/Buenos_Aires"), 10000),
          makeCharge("v2:plate_queries", 1, monthOf(at, "America/Argentina/Buenos_Aires"))
        ]
      })))
    await charge(clock.currentTimeMillisUnsafe())
    const november = await getUsage(app.production, account.production.key)
    expect(november.plateQueries.used).toBe(1)
    expect(november.byVersion.v2.plateQueries).toBe(1)
    clock.set("2026-12-01T03:00:00Z")
    const december = await getUsage(app.production, account.production.key)
    expect(december.plateQueries.used).toBe(0)
    expect(december.byVersion.v2.plateQueries).toBe(0)
  })

  it("uses the account's own timezone", async () => {
    clock.set("2026-11-30T23:30:00Z")
    const account = await app.createAccount({ plan: "free", timezone: "Asia/Tokyo" })
    const usage = await getUsage(app.production, account.production.key)
    expect(usage.timezone).toBe("Asia/Tokyo")
    expect(usage.plateQueries.startsAt).toBe("2026-11-30T15:00:00.000Z") // December 1st in Tokyo
    expect(usage.uniquePlates.startsAt).toBe("2026-11-30T15:00:00.000Z")
  })

  it("keeps sandbox counters apart from production", async () => {
    clock.set("2026-11-21T15:10:05Z")
    const account = await app.createAccount()
    await getUsage(app.production, account.production.key)
    await getUsage(app.production, account.production.key)
    const sandbox = await getUsage(app.sandbox, account.sandbox.key)
    expect(sandbox.environment).toBe("sandbox")
    expect(sandbox.requests.used).toBe(1)
  })

  it("shows per-module billing for the custom plan, with unlimited allowances as null", async () => {
    clock.set("2026-11-21T15:20:05Z")
    const account = await app.createAccount({ plan: "free" })
    await setCustom(account.id, {
      plateQueriesMonthly: null, moduleQueriesMonthly: 1000, requestsPerMinute: null, modulePriceArs: 600,
      includedModules: 2, enabledModules: ["fines", "gnc"]
    })
    const usage = await getUsage(app.production, account.production.key)
    expect(usage.entitlements).toMatchObject({ plan: "custom", plateQueriesMonthly: null, moduleQueriesMonthly: 1000,
      uniquePlatesDaily: 5000, requestsPerMinute: null, enabledModules: ["fines", "gnc"] })
    expect(usage.plateQueries).toMatchObject({ limit: null, remaining: null })
    expect(usage.requests).toMatchObject({ limit: null, remaining: null, used: 1 })
    expect(usage.modules).toEqual({
      fines: { used: 0, included: 2, overage: 0, unitPriceCents: 60000, currency: "ARS" },
      gnc: { used: 0, included: 2, overage: 0, unitPriceCents: 60000, currency: "ARS" }
    })
  })

  it("freezes the module price and included units of a period once it opens", async () => {
    clock.set("2026-11-21T15:30:05Z")
    const account = await app.createAccount({ plan: "custom" })
    const month = monthOf(clock.currentTimeMillisUnsafe(), "America/Argentina/Buenos_Aires")
    await app.run(Effect.flatMap(Metering, (m) => m.consume({
      accountId: account.id,
      environment: "production",
      charges: [
        makeCharge("module_queries", 3, month, 15000),
        makeCharge("module:fines", 3, month)
      ],
      modulePricing: { period: month, unitPriceCents: 55000, included: 1 }
    })))
    await setCustom(account.id, { modulePriceArs: 900, includedModules: 10 })
    const usage = await getUsage(app.production, account.production.key)
    expect(usage.modules.fines).toEqual({ used: 3, included: 1, overage: 2, unitPriceCents: 55000, currency: "ARS" })
    expect(usage.moduleQueries.used).toBe(3)
    clock.set("2026-12-05T12:00:00Z") // the next period takes the new terms
    const december = await getUsage(app.production, account.production.key)
    expect(december.modules.fines).toEqual({ used: 0, included: 10, overage: 0, unitPriceCents: 90000, currency: "ARS" })
  })
})

describe("requests per minute", () => {
  it("counts every authenticated request, sets the headers, and answers 429 past the limit", async () => {
    clock.set("2026-11-21T16:00:00Z")
    const account = await app.createAccount({ plan: "free" }) // 30 per minute
    const key = account.production.key
    for (let i = 1; i <= 29; i++) {
      const res = await app.production(i % 2 === 0 ? "/v2/status" : "/v2/not-a-route", withKey(key))
      expect(res.headers.get("x-ratelimit-limit")).toBe("30")
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(30 - i))
      expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-11-21T16:01:00Z") / 1000))
      // the IETF fields say the same: 30 per 60 s window, what remains, seconds to the reset
      expect(res.headers.get("ratelimit-policy")).toBe("\"rpm\";q=30;w=60")
      expect(res.headers.get("ratelimit")).toBe(`"rpm";r=${30 - i};t=60`)
    }
    const last = await app.production("/v2/usage", withKey(key))
    expect(last.status).toBe(200)
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0")

    clock.set("2026-11-21T16:00:45Z")
    const limited = await app.production("/v2/usage", withKey(key))
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("15")
    expect(limited.headers.get("x-ratelimit-limit")).toBeNull()
    const body = await json(limited)
    expectShape(body, ErrorResponse("rate_limit_exceeded", true))
    expect(body.error).toMatchObject({
      retryable: true,
      details: { meter: "requests", limit: 30, used: 30, resetAt: "2026-11-21T16:01:00.000Z" }
    })
    // rejected requests are not counted: still 30 used after several more attempts
    await app.production("/v2/status", withKey(key))
    clock.set("2026-11-21T16:01:00Z")
    const usage = await getUsage(app.production, key)
    expect(usage.requests).toMatchObject({ used: 1, startsAt: "2026-11-21T16:01:00.000Z" })
    // the previous window ended with exactly the limit
    const sandboxUntouched = await getUsage(app.sandbox, account.sandbox.key)
    expect(sandboxUntouched.requests.used).toBe(1)
  })

  it("is exact under concurrency: limit 100, 200 simultaneous requests, exactly 100 pass", async () => {
    clock.set("2026-11-21T16:10:00Z")
    const account = await app.createAccount({ plan: "free" })
    await setCustom(account.id, { requestsPerMinute: 100 })
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => app.production("/v2/plans", withKey(account.production.key)))
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(100)
    expect(statuses.filter((s) => s === 429)).toHaveLength(100)
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining")))
    expect(new Set(remaining).size).toBe(100)
  })

  it("omits limit and remaining headers for an unlimited custom RPM", async () => {
    clock.set("2026-11-21T16:20:00Z")
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account.id, { requestsPerMinute: null })
    const res = await app.production("/v2/status", withKey(account.production.key))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect(res.headers.get("x-ratelimit-remaining")).toBeNull()
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-11-21T16:21:00Z") / 1000))
    expect(res.headers.get("ratelimit-policy")).toBeNull()
    expect(res.headers.get("ratelimit")).toBeNull()
  })

  it("RPM 0 disables the API for the account", async () => {
    clock.set("2026-11-21T16:30:00Z")
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account.id, { requestsPerMinute: 0 })
    const res = await app.production("/v2/status", withKey(account.production.key))
    expect(res.status).toBe(429)
    expect((await json(res)).error.details).toEqual({
      meter: "requests", limit: 0, used: 0, resetAt: "2026-11-21T16:31:00.000Z"
    })
  })

  it("all keys of an account share the window", async () => {
    clock.set("2026-11-21T16:40:00Z")
    const account = await app.createAccount({ plan: "free" })
    const second = await app.run(Effect.flatMap(Accounts, (a) =>
      a.createKey({ accountId: account.id, environment: "production", name: "second" })))
    for (let i = 0; i < 15; i++) await app.production("/v2/plans", withKey(account.production.key))
    for (let i = 0; i < 15; i++) await app.production("/v2/plans", withKey(second.key))
    expect((await app.production("/v2/plans", withKey(second.key))).status).toBe(429)
    expect((await app.production("/v2/plans", withKey(account.production.key))).status).toBe(429)
  })
})
