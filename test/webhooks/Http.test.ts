/**
 * The webhook endpoints in-process: configuration rules (every one, each refusal changing
 * nothing), the deliveries log with its paging bounds, the test event, environments kept apart,
 * and that none of it consumes plate or module queries (only requests per minute).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ManualClock } from "../support/ManualClock.js"
import { DeliveriesList, ErrorResponse, expectShape, TestDeliveryAccepted, WebhookConfig } from "../support/SpecShapes.js"
import { type Call, json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

/** The default policy: public HTTPS URLs only. Nothing here ever sends a delivery. */
let strict: TestApp
/** Private networks allowed, for deliveries to a closed local port (they fail, and stay pending). */
let local: TestApp
const clock = new ManualClock(Date.now())
const CLOSED = "https://127.0.0.1:1"

beforeAll(async () => {
  clock.follow()
  ;[strict, local] = await Promise.all([
    makeTestApp({ clock }),
    makeTestApp({ clock, config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } })
  ])
})
afterAll(async () => {
  await Promise.all([strict?.dispose(), local?.dispose()])
})

const client = (call: Call, key: string) => ({
  get: (path: string) => call(path, withKey(key)),
  patch: (path: string, body: unknown) =>
    call(path, withKey(key, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })),
  post: (path: string) => call(path, withKey(key, { method: "POST" }))
})

const production = (app: TestApp, account: TestAccount) => client(app.production, account.production.key)
const sandbox = (app: TestApp, account: TestAccount) => client(app.sandbox, account.sandbox.key)

const SECRET = /^whsec_[0-9A-Za-z]{32}$/

describe("GET /v2/webhooks/config", () => {
  it("starts disabled without a URL, with a secret that stays the same, per environment", async () => {
    const account = await strict.createAccount()
    const first = await production(strict, account).get("/v2/webhooks/config")
    expect(first.status).toBe(200)
    const config = await json(first)
    expectShape(config, WebhookConfig)
    expect(config).toEqual({ url: null, enabled: false, secret: expect.stringMatching(SECRET) })
    expect(await json(await production(strict, account).get("/v2/webhooks/config"))).toEqual(config)

    const other = await json(await sandbox(strict, account).get("/v2/webhooks/config"))
    expect(other.secret).toMatch(SECRET)
    expect(other.secret).not.toBe(config.secret)
  })

  it("needs a key of the environment", async () => {
    const account = await strict.createAccount()
    for (
      const [path, method] of [
        ["/v2/webhooks/config", "GET"],
        ["/v2/webhooks/config", "PATCH"],
        ["/v2/webhooks/deliveries", "GET"],
        ["/v2/webhooks/test", "POST"]
      ]
    ) {
      const missing = await strict.production(path!, { method: method! })
      expect(missing.status).toBe(401)
      expectShape(await json(missing), ErrorResponse("invalid_api_key"))
      const wrongEnvironment = await strict.production(path!, withKey(account.sandbox.key, { method: method! }))
      expect(wrongEnvironment.status).toBe(401)
    }
  })
})

describe("PATCH /v2/webhooks/config", () => {
  const URL = "https://93.184.216.34/hooks/vehicle-data"

  it("sets, keeps omitted fields, disables, removes and rotates", async () => {
    const account = await strict.createAccount()
    const api = production(strict, account)
    const { secret } = await json(await api.get("/v2/webhooks/config"))

    const set = await api.patch("/v2/webhooks/config", { url: URL, enabled: true })
    expect(set.status).toBe(200)
    expect(await json(set)).toEqual({ url: URL, enabled: true, secret })

    expect(await json(await api.patch("/v2/webhooks/config", {}))).toEqual({ url: URL, enabled: true, secret })
    expect(await json(await api.patch("/v2/webhooks/config", { enabled: false }))).toEqual({ url: URL, enabled: false, secret })
    expect(await json(await api.patch("/v2/webhooks/config", { enabled: true }))).toEqual({ url: URL, enabled: true, secret })
    expect(await json(await api.patch("/v2/webhooks/config", { rotateSecret: false }))).toEqual({ url: URL, enabled: true, secret })

    const rotated = await json(await api.patch("/v2/webhooks/config", { rotateSecret: true }))
    expect(rotated).toEqual({ url: URL, enabled: true, secret: expect.stringMatching(SECRET) })
    expect(rotated.secret).not.toBe(secret)
    expect(await json(await api.get("/v2/webhooks/config"))).toEqual(rotated)

    // null removes the URL and, since it was enabled, disables
    expect(await json(await api.patch("/v2/webhooks/config", { url: null }))).toEqual({ url: null, enabled: false, secret: rotated.secret })
    // the sandbox configuration was never touched
    expect(await json(await sandbox(strict, account).get("/v2/webhooks/config"))).toMatchObject({ url: null, enabled: false })
  })

  it("refuses every rule break with invalid_request, saying which rule, and changes nothing", async () => {
    const account = await strict.createAccount()
    const api = production(strict, account)
    await api.patch("/v2/webhooks/config", { url: URL })
    const before = await json(await api.get("/v2/webhooks/config"))
    const long = `https://93.184.216.34/${"a".repeat(2049 - "https://93.184.216.34/".length)}`
    const cases: Array<[unknown, RegExp]> = [
      [{ url: "http://93.184.216.34/hooks" }, /https/],
      [{ url: "not a url" }, /valid absolute URL/],
      [{ url: long }, /2048/],
      [{ url: "https://user:pass@93.184.216.34/hooks" }, /credentials/],
      [{ url: "https://localhost/hooks" }, /publicly reachable/],
      [{ url: "https://127.0.0.1/hooks" }, /publicly reachable/],
      [{ url: "https://10.0.0.8/hooks" }, /publicly reachable/],
      [{ url: "https://169.254.169.254/latest/meta-data" }, /publicly reachable/],
      [{ url: "https://100.64.1.1/hooks" }, /publicly reachable/],
      [{ url: "https://[::1]/hooks" }, /publicly reachable/],
      [{ url: "https://[::ffff:192.168.1.1]/hooks" }, /publicly reachable/],
      [{ url: "https://0x7f000001/hooks" }, /publicly reachable/],
      [{ url: "https://2130706433/hooks" }, /publicly reachable/],
      [{ url: "https://203.0.113.9/hooks" }, /publicly reachable/],
      [{ url: "https://no-such-host.invalid/hooks" }, /could not be resolved/],
      [{ url: null, enabled: true }, /requires a url/],
      [{ url: 5 }, /url/],
      [{ enabled: "yes" }, /enabled/],
      [{ rotateSecret: 1 }, /rotateSecret/],
      [{ url: URL, secret: "whsec_mine" }, /secret/],
      ["{not json", /JSON/],
      [[], /./]
    ]
    for (const [body, message] of cases) {
      const res = await api.patch("/v2/webhooks/config", body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      const error = await json(res)
      expectShape(error, ErrorResponse("invalid_request"))
      expect(error.error.message, JSON.stringify(body)).toMatch(message)
      expect(error.error.retryable).toBe(false)
    }
    expect(await json(await api.get("/v2/webhooks/config"))).toEqual(before)

    // enabling needs a URL: a configuration without one stays disabled
    await api.patch("/v2/webhooks/config", { url: null })
    const enable = await api.patch("/v2/webhooks/config", { enabled: true })
    expect(enable.status).toBe(400)
    expect((await json(enable)).error.message).toMatch(/requires a url/)
    expect(await json(await api.get("/v2/webhooks/config"))).toMatchObject({ url: null, enabled: false })
  })

  it("accepts a URL of exactly 2048 characters", async () => {
    const account = await strict.createAccount()
    const url = `https://93.184.216.34/${"a".repeat(2048 - "https://93.184.216.34/".length)}`
    const res = await production(strict, account).patch("/v2/webhooks/config", { url })
    expect(res.status).toBe(200)
    expect((await json(res)).url).toBe(url)
  })
})

describe("POST /v2/webhooks/test", () => {
  it("needs a URL and an enabled webhook, and records nothing otherwise", async () => {
    const account = await local.createAccount()
    const api = production(local, account)
    const noUrl = await api.post("/v2/webhooks/test")
    expect(noUrl.status).toBe(400)
    const noUrlBody = await json(noUrl)
    expectShape(noUrlBody, ErrorResponse("invalid_request"))
    expect(noUrlBody.error.message).toMatch(/URL/)

    await api.patch("/v2/webhooks/config", { url: `${CLOSED}/hooks` })
    const disabled = await api.post("/v2/webhooks/test")
    expect(disabled.status).toBe(400)
    expect((await json(disabled)).error.message).toMatch(/disabled/)
    expect((await json(await api.get("/v2/webhooks/deliveries"))).deliveries).toEqual([])
  })

  it("records a webhook.test event and starts its delivery", async () => {
    const account = await local.createAccount()
    const api = production(local, account)
    await api.patch("/v2/webhooks/config", { url: `${CLOSED}/hooks`, enabled: true })
    const res = await api.post("/v2/webhooks/test")
    expect(res.status).toBe(202)
    const accepted = await json(res)
    expectShape(accepted, TestDeliveryAccepted)

    const list = await json(await api.get("/v2/webhooks/deliveries"))
    expectShape(list, DeliveriesList)
    expect(list.deliveries).toHaveLength(1)
    const [delivery] = list.deliveries
    expect(delivery).toMatchObject({ id: accepted.id, event: "webhook.test", apiVersion: "v2" })
    expect(delivery.payload).toEqual({
      id: `evt_${accepted.id}`,
      type: "webhook.test",
      apiVersion: "v2",
      createdAt: delivery.createdAt,
      data: { message: expect.any(String) }
    })
    // the endpoint is a closed port: the first attempt fails with no answer and a retry is planned
    const attempted = await waitForAttempt(local, account, accepted.id)
    expect(attempted).toMatchObject({ status: "pending", attempts: 1, responseStatus: null })
    expect(Date.parse(attempted.nextAttemptAt)).toBeGreaterThan(Date.parse(attempted.createdAt))
    // nothing of it shows in the sandbox
    expect((await json(await sandbox(local, account).get("/v2/webhooks/deliveries"))).deliveries).toEqual([])
  })
})

const waitForAttempt = async (app: TestApp, account: TestAccount, id: string) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const list = await json(await production(app, account).get("/v2/webhooks/deliveries"))
    const found = list.deliveries.find((d: any) => d.id === id)
    if (found?.attempts >= 1) return found
    if (Date.now() > deadline) throw new Error("no attempt recorded")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("GET /v2/webhooks/deliveries", () => {
  it("pages newest first with limit and offset", async () => {
    const account = await local.createAccount()
    const api = production(local, account)
    await api.patch("/v2/webhooks/config", { url: `${CLOSED}/paging`, enabled: true })
    const ids: Array<string> = []
    clock.set(Date.parse("2026-11-20T12:00:00.000Z"))
    for (let i = 0; i < 7; i++) {
      clock.advance("1 second")
      ids.push((await json(await api.post("/v2/webhooks/test"))).id)
    }
    clock.follow()
    const newestFirst = [...ids].reverse()

    const page = async (query: string) => {
      const res = await api.get(`/v2/webhooks/deliveries${query}`)
      expect(res.status).toBe(200)
      const body = await json(res)
      expectShape(body, DeliveriesList)
      return body
    }
    const all = await page("")
    expect(all).toMatchObject({ limit: 25, offset: 0 })
    expect(all.deliveries.map((d: any) => d.id)).toEqual(newestFirst)
    const first = await page("?limit=3")
    expect(first).toMatchObject({ limit: 3, offset: 0 })
    expect(first.deliveries.map((d: any) => d.id)).toEqual(newestFirst.slice(0, 3))
    expect((await page("?limit=3&offset=3")).deliveries.map((d: any) => d.id)).toEqual(newestFirst.slice(3, 6))
    expect((await page("?offset=6&limit=3")).deliveries.map((d: any) => d.id)).toEqual(newestFirst.slice(6))
    expect((await page("?limit=100&offset=10000"))).toEqual({ deliveries: [], limit: 100, offset: 10000 })
    expect((await page("?limit=1")).deliveries).toHaveLength(1)
  })

  it("refuses limits and offsets out of bounds", async () => {
    const account = await strict.createAccount()
    const api = production(strict, account)
    for (const query of ["limit=0", "limit=101", "limit=-1", "limit=2.5", "limit=abc", "limit=", "offset=-1", "offset=10001", "offset=x", "offset=1e3"]) {
      const res = await api.get(`/v2/webhooks/deliveries?${query}`)
      expect(res.status, query).toBe(400)
      const body = await json(res)
      expectShape(body, ErrorResponse("invalid_request"))
      expect(body.error.message, query).toMatch(/limit|offset/)
    }
  })
})

describe("metering", () => {
  it("webhook administration counts toward requests per minute and consumes no queries", async () => {
    clock.set(Math.floor(Date.now() / 60_000) * 60_000 + 10_000)
    const account = await strict.createAccount()
    const api = production(strict, account)
    await api.get("/v2/webhooks/config")
    await api.patch("/v2/webhooks/config", { url: "https://93.184.216.34/h" })
    await api.patch("/v2/webhooks/config", { url: "http://93.184.216.34/h" }) // refused, still counted
    await api.get("/v2/webhooks/deliveries")
    await api.get("/v2/webhooks/deliveries?limit=0") // refused, still counted
    await api.post("/v2/webhooks/test") // refused (disabled), still counted
    const usage = (await json(await api.get("/v2/usage"))).data
    expect(usage.requests.used).toBe(7)
    expect(usage.plateQueries.used).toBe(0)
    expect(usage.moduleQueries.used).toBe(0)
    clock.follow()
  })
})
