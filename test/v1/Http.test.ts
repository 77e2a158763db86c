/**
 * The v1 API in-process: every endpoint's success shape checked exactly, every error with its
 * status, code and v1 envelope and consuming nothing, and v1 and v2 drawing on one allowance, one
 * RPM window and one webhook configuration, without ever sharing an operation.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { expectShape, UsageResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"
import { V1BasicVehicle, V1DeliveriesList, V1Error, V1ModulesOperation, V1Status, V1WebhookConfig } from "../support/V1Shapes.js"

let app: TestApp

beforeAll(async () => {
  app = await makeTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } })
})
afterAll(() => app?.dispose())

const setCustom = (account: TestAccount, terms: Parameters<Accounts["Service"]["setCustom"]>[1]) =>
  app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(account.id, terms)))

const get = (account: TestAccount, path: string) => app.sandbox(path, withKey(account.sandbox.key))
const send = (account: TestAccount, method: string, path: string, body: unknown) =>
  app.sandbox(path, withKey(account.sandbox.key, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) }))

const usage = async (account: TestAccount) => {
  const body = await json(await get(account, "/v2/usage"))
  expectShape(body, UsageResponse)
  return body.data
}

/** A refusal in the v1 envelope, with the request id, that changed no usage. */
const expectRefused = async (res: Response, status: number, code: string, withDetails = false) => {
  expect(res.status).toBe(status)
  const body = await json(res)
  expectShape(body, V1Error(code, withDetails))
  expect(body.error.requestId).toBe(res.headers.get("x-request-id"))
  return body
}

const poll = async (account: TestAccount, id: string) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const body = await json(await get(account, `/v1/vehicles/modules/${id}`))
    if (body.data.completedAt !== null || Date.now() > deadline) return body
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("GET /v1/vehicles/basic", () => {
  it("answers v2's vehicle without enrichments, one plate query counted under v1", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const res = await get(account, "/v1/vehicles/basic?plate=ab123cd")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectShape(body, V1BasicVehicle)
    expect(body).toMatchObject({ success: true, found: true, data: { plate: "AB123CD", sandbox: true } })
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(1)
    expect(after.uniquePlates.used).toBe(1)
    expect(after.byVersion).toEqual({ v1: { plateQueries: 1, moduleQueries: 0, reports: 0 }, v2: { plateQueries: 0, moduleQueries: 0, reports: 0 } })
  })

  it("a plate not found is still answered and charged", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const body = await json(await get(account, "/v1/vehicles/basic?plate=AB404CD"))
    expectShape(body, V1BasicVehicle)
    expect(body).toEqual({ success: true, found: false, data: null })
    expect((await usage(account)).plateQueries.used).toBe(1)
  })

  it("a missing or invalid plate: 400 invalid_plate in v1's envelope, nothing consumed", async () => {
    const account = await app.createAccount({ plan: "growth" })
    for (const path of ["/v1/vehicles/basic", "/v1/vehicles/basic?plate=", "/v1/vehicles/basic?plate=ABC12", "/v1/vehicles/basic?plate=%C4%B1AB123"]) {
      await expectRefused(await get(account, path), 400, "invalid_plate")
    }
    expect((await usage(account)).plateQueries.used).toBe(0)
  })

  it("a missing or unknown key: 401 invalid_api_key in v1's envelope", async () => {
    const res = await app.sandbox("/v1/vehicles/basic?plate=AB123CD", { headers: { "x-api-key": "vda_test_unknown" } })
    expect(res.status).toBe(401)
    expectShape(await json(res), V1Error("invalid_api_key"))
    const none = await app.sandbox("/v1/status")
    expect(none.status).toBe(401)
    expectShape(await json(none), V1Error("invalid_api_key"))
  })
})

describe("v1 module operations", () => {
  it("202 with Location, reused by an identical v1 request (200), never by a v2 one; completes like v2", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const created = await send(account, "POST", "/v1/vehicles/modules", { plate: "ac100de", modules: ["fines", "vtv"] })
    expect(created.status).toBe(202)
    const body = await json(created)
    expectShape(body, V1ModulesOperation)
    expect(created.headers.get("location")).toBe(`/v1/vehicles/modules/${body.data.id}`)
    expect(body.data).toMatchObject({ plate: "AC100DE", completedAt: null })

    const reused = await send(account, "POST", "/v1/vehicles/modules", { plate: "AC100DE", modules: ["vtv", "fines"] })
    expect(reused.status).toBe(200)
    expect((await json(reused)).data.id).toBe(body.data.id)

    const v2 = await send(account, "POST", "/v2/vehicles/AC100DE/modules", { modules: ["fines", "vtv"] })
    expect(v2.status).toBe(202)
    const v2Id = (await json(v2)).id
    expect(v2Id).not.toBe(body.data.id)
    const v2Again = await send(account, "POST", "/v2/vehicles/AC100DE/modules", { modules: ["fines", "vtv"] })
    expect(v2Again.status).toBe(200)
    expect((await json(v2Again)).id).toBe(v2Id)

    const after = await usage(account)
    expect(after.moduleQueries.used).toBe(4)
    expect(after.byVersion.v1).toEqual({ plateQueries: 0, moduleQueries: 2, reports: 0 })
    expect(after.byVersion.v2).toEqual({ plateQueries: 0, moduleQueries: 2, reports: 0 })

    const done = await poll(account, body.data.id)
    expectShape(done, V1ModulesOperation)
    expect(done.data.status).toBe("completed")
    expect(done.data.completedAt).toBe(done.data.updatedAt)
    expect(Object.keys(done.data.modules)).toEqual(["fines", "vtv"])
  })

  it("polling: only the account's own v1 operations; a v2 operation or an unknown id is 404 operation_not_found", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const other = await app.createAccount({ plan: "growth" })
    const mine = (await json(await send(account, "POST", "/v1/vehicles/modules", { plate: "AC101DE", modules: ["gnc"] }))).data.id
    const v2 = (await json(await send(account, "POST", "/v2/vehicles/AC101DE/modules", { modules: ["gnc"] }))).id
    await expectRefused(await get(other, `/v1/vehicles/modules/${mine}`), 404, "operation_not_found")
    await expectRefused(await get(account, `/v1/vehicles/modules/${v2}`), 404, "operation_not_found")
    await expectRefused(await get(account, "/v1/vehicles/modules/op_unknown"), 404, "operation_not_found")
  })

  it("refusals in v1's envelope, nothing consumed: plate, module, duplicate, not enabled, body", async () => {
    const account = await app.createAccount({ plan: "free" })
    const post = (body: unknown) => send(account, "POST", "/v1/vehicles/modules", body)
    await expectRefused(await post({ plate: "A1", modules: ["fines"] }), 400, "invalid_plate")
    await expectRefused(await post({ plate: "AC102DE", modules: ["weather"] }), 400, "unsupported_module")
    await expectRefused(await post({ plate: "AC102DE", modules: ["fines", "fines"] }), 400, "duplicate_module")
    await expectRefused(await post({ plate: "AC102DE", modules: ["gnc"] }), 403, "module_not_enabled")
    await expectRefused(await post({ plate: "AC102DE", modules: ["fines"], extra: 1 }), 400, "invalid_request")
    await expectRefused(await post({ modules: ["fines"] }), 400, "invalid_request")
    await expectRefused(await post({ plate: "AC102DE", modules: [] }), 400, "invalid_request")
    const wrongType = await app.sandbox("/v1/vehicles/modules", withKey(account.sandbox.key, { method: "POST", headers: { "content-type": "text/plain", "content-length": "1" }, body: "x" }))
    await expectRefused(wrongType, 415, "invalid_request")
    expect((await usage(account)).moduleQueries.used).toBe(0)
  })
})

describe("one allowance and one RPM window for v1 and v2", () => {
  it("plate queries: v1 and v2 draw on one monthly allowance; past it, 429 quota_exceeded in each version's envelope", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account, { plateQueriesMonthly: 2, requestsPerMinute: null })
    expect((await get(account, "/v1/vehicles/basic?plate=AB123CD")).status).toBe(200)
    expect((await get(account, "/v2/vehicles/AB124CD")).status).toBe(200)
    const v1 = await expectRefused(await get(account, "/v1/vehicles/basic?plate=AB125CD"), 429, "quota_exceeded", true)
    expect(v1.error.details).toMatchObject({ meter: "plate_queries", limit: 2, used: 2 })
    const v2 = await get(account, "/v2/vehicles/AB125CD")
    expect(v2.status).toBe(429)
    expect(Object.keys(await json(v2))).toEqual(["error"])
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(2)
    expect(after.byVersion.v1.plateQueries + after.byVersion.v2.plateQueries).toBe(2)
  })

  it("requests per minute: one window across versions; past it, 429 rate_limit_exceeded with Retry-After", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account, { requestsPerMinute: 4 })
    for (const path of ["/v1/status", "/v2/status", "/v1/webhooks/config", "/v2/usage"]) expect((await get(account, path)).status).toBe(200)
    const res = await get(account, "/v1/status")
    await expectRefused(res, 429, "rate_limit_exceeded", true)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("GET /v1/status", () => {
  it("v1's plan names (starter is v2's basic), its meters, rate limits and reset; no custom billing", async () => {
    const account = await app.createAccount({ plan: "basic" })
    await get(account, "/v1/vehicles/basic?plate=AB123CD")
    const res = await get(account, "/v1/status")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectShape(body, V1Status)
    const v2 = (await usage(account))
    expect(body.data).toMatchObject({
      owner: "Test owner",
      plan: "starter",
      usage: {
        fast: { used: 1, limit: v2.plateQueries.limit },
        intelligent: { used: 0, limit: v2.moduleQueries.limit },
        miss: { used: 1, limit: v2.uniquePlates.limit }
      },
      rateLimits: { rpm_total: v2.requests.limit, rpm_intelligent: v2.requests.limit },
      resetAt: v2.plateQueries.endsAt,
      customBilling: null
    })
    expect(body.data.keys).toHaveLength(1)
  })

  it("a custom plan's billing: the period, its meters, and overage at the frozen module price", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account, { moduleQueriesMonthly: 100, includedModules: 1, modulePriceArs: 550, requestsPerMinute: null })
    expect((await send(account, "POST", "/v1/vehicles/modules", { plate: "AC103DE", modules: ["fines", "vtv", "gnc"] })).status).toBe(202)
    expect((await send(account, "POST", "/v2/vehicles/AC104DE/modules", { modules: ["fines"] })).status).toBe(202)
    const body = await json(await get(account, "/v1/status"))
    expectShape(body, V1Status)
    const v2 = await usage(account)
    // fines 2 (1 over), vtv 1, gnc 1: one unit beyond the included one, at ARS 550
    expect(body.data.customBilling).toEqual({
      contract: { status: "active" },
      // Buenos Aires is behind UTC: the local first of the month is the same date in UTC
      period: { key: v2.plateQueries.startsAt.slice(0, 7), start: v2.plateQueries.startsAt, end: v2.plateQueries.endsAt },
      usage: {
        basic: { used: 0, limit: v2.plateQueries.limit, remaining: v2.plateQueries.remaining },
        report: { used: 0, limit: null, remaining: null },
        modules: { used: 4, limit: 100, remaining: 96, overage: 1, subtotal_cents: 55_000, currency: "ARS" }
      },
      billing: {
        base: { estimated_total_cents: 55_000, currency: "ARS", pricing_mode: "custom", tier_name: "custom" },
        modules: { estimated_overage_cents: 55_000, currency: "ARS" }
      }
    })
  })
})

describe("v1 webhook configuration and deliveries", () => {
  it("GET and PATCH the same configuration as v2, in v1's shape; v2 sees every change", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const initial = await json(await get(account, "/v1/webhooks/config"))
    expectShape(initial, V1WebhookConfig)
    expect(initial.data).toMatchObject({ owner_ref: account.id, url: null, enabled: false })

    const patched = await send(account, "PATCH", "/v1/webhooks/config", { url: "https://127.0.0.1:9/hook", enabled: true, rotate_secret: true })
    expect(patched.status).toBe(200)
    const body = await json(patched)
    expectShape(body, V1WebhookConfig)
    expect(body.data).toMatchObject({ url: "https://127.0.0.1:9/hook", enabled: true })
    expect(body.data.secret).not.toBe(initial.data.secret)
    expect(Date.parse(body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(initial.data.updated_at))
    expect(await json(await get(account, "/v2/webhooks/config"))).toEqual({ url: "https://127.0.0.1:9/hook", enabled: true, secret: body.data.secret })
  })

  it("the same rules and errors as v2, in v1's envelope, changing nothing", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const before = await json(await get(account, "/v1/webhooks/config"))
    await expectRefused(await send(account, "PATCH", "/v1/webhooks/config", { url: "http://insecure.example.com/" }), 400, "invalid_request")
    await expectRefused(await send(account, "PATCH", "/v1/webhooks/config", { enabled: true }), 400, "invalid_request")
    await expectRefused(await send(account, "PATCH", "/v1/webhooks/config", { rotateSecret: true }), 400, "invalid_request")
    expect(await json(await get(account, "/v1/webhooks/config"))).toEqual(before)
  })

  it("the deliveries log is v2's, in v1's shape, with its limit and offset rules", async () => {
    const account = await app.createAccount({ plan: "growth" })
    const empty = await json(await get(account, "/v1/webhooks/deliveries"))
    expectShape(empty, V1DeliveriesList)
    expect(empty.data).toEqual({ deliveries: [], limit: 25, offset: 0 })
    await send(account, "PATCH", "/v2/webhooks/config", { url: "https://127.0.0.1:9/hook", enabled: true })
    const test = await json(await send(account, "POST", "/v2/webhooks/test", {}))
    const listed = await json(await get(account, "/v1/webhooks/deliveries?limit=5"))
    expectShape(listed, V1DeliveriesList)
    expect(listed.data.limit).toBe(5)
    expect(listed.data.deliveries).toHaveLength(1)
    expect(listed.data.deliveries[0]).toMatchObject({ id: test.id, event_type: "webhook.test", api_version: "v2" })
    await expectRefused(await get(account, "/v1/webhooks/deliveries?limit=0"), 400, "invalid_request")
  })

  it("the test event: 403 access_denied on the free plan, 400 without a URL, in v1's envelope and recording nothing", async () => {
    const free = await app.createAccount({ plan: "free" })
    await send(free, "PATCH", "/v1/webhooks/config", { url: "https://127.0.0.1:9/hook" })
    await expectRefused(await send(free, "POST", "/v1/webhooks/test", {}), 403, "access_denied")
    const paid = await app.createAccount({ plan: "growth" })
    await expectRefused(await send(paid, "POST", "/v1/webhooks/test", {}), 400, "invalid_request")
    for (const account of [free, paid]) expect((await json(await get(account, "/v1/webhooks/deliveries"))).data.deliveries).toEqual([])
  })

  it("an unknown v1 path is 404 in v1's envelope", async () => {
    const account = await app.createAccount({ plan: "growth" })
    await expectRefused(await get(account, "/v1/vehicles"), 404, "invalid_request")
    await expectRefused(await get(account, "/v1/status/"), 404, "invalid_request")
  })
})
