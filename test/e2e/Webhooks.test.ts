/**
 * Webhooks through the real server, delivered to a real HTTPS endpoint on localhost (trusted
 * through NODE_EXTRA_CA_CERTS, as an operator would trust a private CA). Signatures are checked
 * by the receiver with its own HMAC code, and each delivery is taken in with parseWebhookEvent as
 * an integrator's receiver would. Retries are fast here: 400 ms, then doubling up to 1 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { digestOf } from "../../src/reports/Digest.js"
import { freshDatabase } from "../support/Postgres.js"
import { runVda, type ServerProcess, startServer, waitFor } from "../support/Processes.js"
import { DeliveriesList, ErrorResponse, expectShape, TestDeliveryAccepted, WebhookConfig, WebhookEvent } from "../support/SpecShapes.js"
import { json } from "../support/TestApp.js"
import { apiOf } from "../support/ApiClient.js"
import {
  FAST_RETRY,
  makeTlsFixture,
  type Received,
  receivedEvent,
  type Receiver,
  refusalOf,
  signatureIsValid,
  startReceiver,
  type TlsFixture,
  trustingReceiver
} from "../support/WebhookReceiver.js"

type Env = "production" | "sandbox"

let tls: TlsFixture
let receiver: Receiver
let env: Record<string, string>
let server: ServerProcess
const keys = {} as Record<Env, string>

beforeAll(async () => {
  tls = await makeTlsFixture()
  receiver = await startReceiver(tls)
  env = {
    DATABASE_URL: await freshDatabase(),
    ...trustingReceiver(tls),
    SANDBOX_MODULE_LATENCY_MS: "50",
    SOURCE_RETRY_INITIAL_MS: "20",
    ...FAST_RETRY
  }
  const account = JSON.parse((await runVda(["accounts", "create", "--owner", "Hooks", "--plan", "custom", "--json"], env)).stdout)
  // the tests poll the deliveries log often: no per-minute limit to trip over
  await runVda(["accounts", "set-custom", account.id, "--rpm", "unlimited"], env)
  for (const environment of ["production", "sandbox"] as const) {
    const created = await runVda(["keys", "create", "--account", account.id, "--environment", environment, "--json"], env)
    keys[environment] = JSON.parse(created.stdout).key
  }
  server = await startServer(env)
}, 60_000)

afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
  await receiver?.close()
  await tls?.dispose()
})

/** A raw request, for what the client would refuse to send (out-of-bounds query values). */
const call = (environment: Env, path: string) =>
  fetch(`${environment === "production" ? server.productionUrl : server.sandboxUrl}${path}`, { headers: { "x-api-key": keys[environment] } })

const api = (environment: Env, on = server) => apiOf(environment === "production" ? on.productionUrl : on.sandboxUrl, keys[environment])

/** Points the environment's webhook at `path` on the receiver and enables it; the secret. */
const configure = async (environment: Env, path: string, on = server): Promise<string> => {
  const res = await api(environment, on).answer((c) =>
    c.webhooks.updateWebhookConfig({ payload: { url: `${receiver.url}${path}`, enabled: true } }))
  expect(res.status).toBe(200)
  const body = res.body
  expect(body).toMatchObject({ url: `${receiver.url}${path}`, enabled: true })
  return body.secret
}

const deliveries = async (environment: Env, on = server) => {
  const { body } = await api(environment, on).answer((c) => c.webhooks.listWebhookDeliveries({ query: { limit: 100 } }))
  expectShape(body, DeliveriesList)
  return body.deliveries as Array<any>
}

const delivery = async (environment: Env, id: string, on = server) => (await deliveries(environment, on)).find((d) => d.id === id)

const waitForDelivery = (environment: Env, id: string, done: (d: any) => boolean, on = server) =>
  waitFor(async () => {
    const found = await delivery(environment, id, on)
    return found !== undefined && done(found) ? found : undefined
  }, `delivery ${id}`)

const sendTest = async (environment: Env, on = server): Promise<string> => {
  const res = await api(environment, on).answer((c) => c.webhooks.sendWebhookTest())
  expect(res.status).toBe(202)
  expectShape(res.body, TestDeliveryAccepted)
  return res.body.id
}

const eventOf = (request: Received) => JSON.parse(request.rawBody.toString("utf8"))

/** The operation as polled, on the wire, once it is final. */
const poll = async (environment: Env, id: string) => {
  const { body } = await api(environment).answer((c) => c.operations.getOperation({ params: { id } }))
  return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
}

describe("configuration on a server with the default URL policy", () => {
  // runs first, while no delivery is pending: this server's engine would pick pending ones up
  it("refuses every non-public or non-HTTPS URL with the rule broken, and changes nothing", async () => {
    const { WEBHOOK_ALLOW_PRIVATE_NETWORKS: _allowed, ...defaults } = env
    const strict = await startServer(defaults)
    try {
      const production = api("production", strict)
      const before = (await production.answer((c) => c.webhooks.getWebhookConfig())).body
      expectShape(before, WebhookConfig)
      const cases: Array<[string, RegExp]> = [
        [`${receiver.url}/hook`, /publicly reachable: 127\.0\.0\.1/],
        ["https://localhost/hook", /localhost/],
        ["https://10.0.0.1/hook", /publicly reachable/],
        ["https://192.168.1.20/hook", /publicly reachable/],
        ["https://172.16.0.5/hook", /publicly reachable/],
        ["https://169.254.169.254/latest/meta-data/", /publicly reachable/],
        ["https://100.64.0.1/hook", /publicly reachable/],
        ["https://0.0.0.0/hook", /publicly reachable/],
        ["https://224.0.0.1/hook", /publicly reachable/],
        ["https://198.51.100.7/hook", /publicly reachable/],
        ["https://2130706433/hook", /publicly reachable: 127\.0\.0\.1/],
        ["https://0x7f.1/hook", /publicly reachable: 127\.0\.0\.1/],
        ["https://0177.0.0.1/hook", /publicly reachable: 127\.0\.0\.1/],
        ["https://[::1]/hook", /publicly reachable/],
        ["https://[fd00::1]/hook", /publicly reachable/],
        ["https://[fe80::1]/hook", /publicly reachable/],
        ["https://[::ffff:127.0.0.1]/hook", /publicly reachable: 127\.0\.0\.1/],
        ["https://[::ffff:a9fe:a9fe]/hook", /publicly reachable: 169\.254\.169\.254/],
        ["http://93.184.216.34/hook", /https/],
        [`https://93.184.216.34/${"x".repeat(2048)}`, /2048/]
      ]
      for (const [url, rule] of cases) {
        const res = await production.answer((c) => c.webhooks.updateWebhookConfig({ payload: { url, enabled: true } }))
        expect(res.status, url).toBe(400)
        expectShape(res.body, ErrorResponse("invalid_request"))
        expect(res.body.error.message, url).toMatch(rule)
        expect(res.error, url).toMatchObject({ code: "invalid_request", message: res.body.error.message })
      }
      expect((await production.answer((c) => c.webhooks.getWebhookConfig())).body).toEqual(before)
      const enableWithout = await production.answer((c) => c.webhooks.updateWebhookConfig({ payload: { enabled: true } }))
      expect(enableWithout.status).toBe(400)
      expect(enableWithout.body.error.message).toMatch(/requires a url/)
      const test = await production.answer((c) => c.webhooks.sendWebhookTest())
      expect(test.status).toBe(400)
      expect(test.body.error.code).toBe("invalid_request")
      expect(await deliveries("production", strict)).toEqual([])
    } finally {
      expect(await strict.stop("SIGTERM")).toBe(0)
    }
  })
})

describe("webhook events", () => {
  it("an operation's final state arrives once, signed, with the polled Operation as data", async () => {
    const secret = await configure("sandbox", "/operations")
    const created = await api("sandbox").answer((c) =>
      c.operations.createModulesOperation({ params: { plate: "AB000CD" }, payload: { modules: ["fines", "vtv"] } }))
    expect(created.status).toBe(202)
    const { id } = created.body
    const [request] = await waitFor(() => (receiver.at("/operations").length > 0 ? receiver.at("/operations") : undefined), "the event")
    const polled = await waitFor(() => poll("sandbox", id), "the final state")

    const event = eventOf(request!)
    expectShape(event, WebhookEvent)
    expect(event).toMatchObject({ type: "modules.completed", apiVersion: "v2" })
    expect(event.data).toEqual(polled)
    expect(event.id).toMatch(/^evt_[0-9a-f-]{36}$/)
    expect(request!.headers["x-service-event"]).toBe("v2.modules.completed")
    expect(request!.headers["x-service-delivery"]).toBe(event.id.slice("evt_".length))
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(signatureIsValid(secret, request!)).toBe(true)
    expect(signatureIsValid(`${secret}x`, request!)).toBe(false)
    expect(receivedEvent(secret, request!)).toMatchObject({ event: "v2.modules.completed", apiVersion: "v2", eventId: event.id })
    expect(refusalOf(`${secret}x`, request!)).toBe("signature")
    expect(Math.abs(Number(request!.headers["x-service-timestamp"]) - Date.now() / 1000)).toBeLessThan(60)

    const recorded = await waitForDelivery("sandbox", event.id.slice(4), (d) => d.status === "processed")
    expect(recorded).toEqual({
      id: event.id.slice(4),
      event: "modules.completed",
      apiVersion: "v2",
      status: "processed",
      attempts: 1,
      responseStatus: 200,
      nextAttemptAt: expect.any(String),
      createdAt: event.createdAt,
      payload: event
    })
  })

  it("partial and failed operations and vehicle searches have their events; an immediate answer has none", async () => {
    const secret = await configure("sandbox", "/kinds")
    const sandbox = api("sandbox")
    const start = async (request: Parameters<typeof sandbox.answer>[0]) => {
      const res = await sandbox.answer(request)
      expect(res.status).toBe(202)
      return res.body.id as string
    }
    const modules = (plate: string, modules: Array<string>) =>
      start((c) => c.operations.createModulesOperation({ params: { plate }, payload: { modules } }))
    const partial = await modules("AB222CD", ["fines", "vtv", "tax_debt"])
    const failed = await modules("AB444CD", ["fines"])
    const search = await start((c) => c.vehicles.getVehicle({ params: { plate: "AB202CD" }, query: { onMiss: "search" } }))
    expect((await sandbox.answer((c) => c.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: {} }))).status).toBe(200)

    const received = await waitFor(() => (receiver.at("/kinds").length >= 3 ? receiver.at("/kinds") : undefined), "three events")
    const byOperation = new Map(received.map((r) => [eventOf(r).data.id as string, r]))
    expect([...byOperation.keys()].sort()).toEqual([partial, failed, search].sort())
    for (const r of received) {
      expect(signatureIsValid(secret, r)).toBe(true)
      expect(receivedEvent(secret, r).eventId).toBe(eventOf(r).id)
    }

    const expected = { [partial]: ["modules.completed", "partial"], [failed]: ["modules.failed", "failed"], [search]: ["vehicle.completed", "completed"] }
    for (const [id, [type, status]] of Object.entries(expected)) {
      const event = eventOf(byOperation.get(id)!)
      expectShape(event, WebhookEvent)
      expect(event.type).toBe(type)
      expect(event.data.status).toBe(status)
      expect(event.data).toEqual(await poll("sandbox", id))
      expect(byOperation.get(id)!.headers["x-service-event"]).toBe(`v2.${type}`)
      expect(receivedEvent(secret, byOperation.get(id)!).event).toBe(`v2.${type}`)
    }
    // every operation is final and delivered: the immediate vehicle answer added nothing
    expect(receiver.at("/kinds")).toHaveLength(3)
  })
})

describe("v1 events", () => {
  it("a v1 module operation's event: v1's payload and header, signed like v2, in both deliveries lists as v1", async () => {
    const secret = await configure("sandbox", "/v1-modules")
    const sandbox = api("sandbox")
    const created = await sandbox.answer((c) => c.v1.v1CreateModulesOperation({ payload: { plate: "AB001CD", modules: ["fines", "gnc"] } }))
    expect(created.status).toBe(202)
    const { data: { id } } = created.body
    const [request] = await waitFor(() => (receiver.at("/v1-modules").length > 0 ? receiver.at("/v1-modules") : undefined), "the v1 event")
    const polled = (await sandbox.answer((c) => c.v1.v1GetModulesOperation({ params: { id } }))).body.data
    const event = eventOf(request!)
    expect(event).toEqual({ eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}$/), event: "modules.completed", ...polled })
    expect(polled.completedAt).toBe(polled.updatedAt)
    expect(request!.headers["x-service-event"]).toBe("v1.modules.completed")
    expect(request!.headers["x-service-delivery"]).toBe(event.eventId.slice("evt_".length))
    expect(signatureIsValid(secret, request!)).toBe(true)
    expect(receivedEvent(secret, request!)).toMatchObject({ event: "v1.modules.completed", apiVersion: "v1", eventId: event.eventId })

    const recorded = await waitForDelivery("sandbox", event.eventId.slice(4), (d) => d.status === "processed")
    expect(recorded).toMatchObject({ event: "modules.completed", apiVersion: "v1", payload: event })
    const v1List = (await sandbox.answer((c) => c.v1.v1ListWebhookDeliveries({ query: { limit: 100 } }))).body.data.deliveries
    expect(v1List.find((d: any) => d.id === recorded.id)).toMatchObject({ event_type: "modules.completed", api_version: "v1", status: "processed", payload: event })
  })

  it("a report's event: report.completed with the polled report, signed, header v1.report.completed", async () => {
    const secret = await configure("sandbox", "/v1-report")
    const sandbox = api("sandbox")
    const created = await sandbox.answer((c) => c.v1.v1CreateReport({ payload: { plate: "AB002CD" } }))
    expect(created.status).toBe(202)
    const { data: { id } } = created.body
    const [request] = await waitFor(() => (receiver.at("/v1-report").length > 0 ? receiver.at("/v1-report") : undefined), "the report event")
    const polled = (await sandbox.answer((c) => c.v1.v1GetReport({ params: { id } }))).body.data
    const event = eventOf(request!)
    expect(event).toEqual({ eventId: expect.stringMatching(/^evt_/), event: "report.completed", ...polled })
    expect(request!.headers["x-service-event"]).toBe("v1.report.completed")
    expect(signatureIsValid(secret, request!)).toBe(true)
    expect(receivedEvent(secret, request!)).toMatchObject({ event: "v1.report.completed", apiVersion: "v1", eventId: event.eventId })
    expect(event.report.digest).toEqual(digestOf(event.report.results, event.updatedAt.slice(0, 10)))
  })

  it("v1's test event: a sample report.completed with its digest, sent even while the webhook is disabled", async () => {
    const secret = await configure("production", "/v1-test")
    const production = api("production")
    const disabled = await production.answer((c) => c.v1.v1UpdateWebhookConfig({ payload: { enabled: false } }))
    expect(disabled.body.data).toMatchObject({ enabled: false, url: `${receiver.url}/v1-test` })
    const res = await production.answer((c) => c.v1.v1SendWebhookTest())
    expect(res.status).toBe(200)
    const { data } = res.body
    expect(data).toMatchObject({ event_type: "report.completed", is_test: true, status: "pending" })
    const [request] = await waitFor(() => (receiver.at("/v1-test").length > 0 ? receiver.at("/v1-test") : undefined), "the v1 test event")
    const event = eventOf(request!)
    expect(event).toEqual(data.payload)
    expect(request!.headers["x-service-event"]).toBe("v1.report.completed")
    expect(signatureIsValid(secret, request!)).toBe(true)
    expect(receivedEvent(secret, request!)).toMatchObject({ event: "v1.report.completed", eventId: `evt_${data.id}` })
    expect(event).toMatchObject({ eventId: `evt_${data.id}`, event: "report.completed", status: "completed", id: expect.stringMatching(/^rep_/) })
    expect(Object.keys(event.report)).toEqual(["vehicle", "results", "digest"])
    expect(event.report.digest).toEqual(digestOf(event.report.results, event.createdAt.slice(0, 10)))
    expect(event.report.vehicle).toMatchObject({ plate: event.plate })
    const recorded = await waitForDelivery("production", data.id, (d) => d.status === "processed")
    expect(recorded).toMatchObject({ event: "report.completed", apiVersion: "v1", attempts: 1 })
  })
})

describe("deliveries", () => {
  it("succeed on the third attempt after two 500s, the same body signed on every attempt", async () => {
    const secret = await configure("production", "/third")
    receiver.script("/third", [500, 500, 200])
    const id = await sendTest("production")
    const done = await waitForDelivery("production", id, (d) => d.status !== "pending")
    expect(done).toMatchObject({ status: "processed", attempts: 3, responseStatus: 200, event: "webhook.test", apiVersion: "v2" })

    const attempts = receiver.at("/third")
    expect(attempts).toHaveLength(3)
    for (const attempt of attempts) {
      expect(attempt.rawBody.equals(attempts[0]!.rawBody)).toBe(true)
      expect(attempt.headers["x-service-delivery"]).toBe(id)
      expect(attempt.headers["x-service-event"]).toBe("v2.webhook.test")
      expect(signatureIsValid(secret, attempt)).toBe(true)
      expect(receivedEvent(secret, attempt)).toMatchObject({ event: "v2.webhook.test", eventId: `evt_${id}` })
    }
    const event = eventOf(attempts[0]!)
    expectShape(event, WebhookEvent)
    expect(event).toMatchObject({ id: `evt_${id}`, type: "webhook.test", apiVersion: "v2", data: { message: expect.any(String) } })
    expect(done.payload).toEqual(event)
    // the policy's delays between attempts: 400 ms, then 800 ms
    expect(attempts[1]!.receivedAt - attempts[0]!.receivedAt).toBeGreaterThanOrEqual(350)
    expect(attempts[2]!.receivedAt - attempts[1]!.receivedAt).toBeGreaterThanOrEqual(750)
  })

  it("a redirect is an answer that does not confirm, and is not followed", async () => {
    await configure("production", "/redirects")
    receiver.script("/redirects", [{ redirect: "/moved" }, 200])
    const id = await sendTest("production")
    const pending = await waitForDelivery("production", id, (d) => d.attempts >= 1)
    expect(pending).toMatchObject({ status: "pending", attempts: 1, responseStatus: 302 })
    expect(await waitForDelivery("production", id, (d) => d.status !== "pending")).toMatchObject({
      status: "processed",
      attempts: 2,
      responseStatus: 200
    })
    expect(receiver.at("/redirects")).toHaveLength(2)
    expect(receiver.at("/moved")).toHaveLength(0)
  })

  it("five failures end failed, with exactly five attempts and a planned time for each retry", async () => {
    await configure("production", "/down")
    receiver.script("/down", [503])
    const id = await sendTest("production")
    const waiting = await waitForDelivery("production", id, (d) => d.attempts >= 1)
    expect(waiting).toMatchObject({ status: "pending", responseStatus: 503 })
    expect(Date.parse(waiting.nextAttemptAt)).toBeGreaterThan(Date.parse(waiting.createdAt))
    const failed = await waitForDelivery("production", id, (d) => d.status === "failed")
    expect(failed).toMatchObject({ attempts: 5, responseStatus: 503 })
    expect(receiver.at("/down")).toHaveLength(5)
  })

  it("a rotated secret signs every later attempt", async () => {
    const before = await configure("production", "/rotate")
    let after = ""
    receiver.script("/rotate", [
      async () => {
        // rotated while the first attempt waits for its answer: the retry must use the new secret
        after = (await api("production").client.webhooks.updateWebhookConfig({ payload: { rotateSecret: true } })).secret
        return 500
      },
      200
    ])
    const id = await sendTest("production")
    await waitForDelivery("production", id, (d) => d.status === "processed")
    expect(after).toMatch(/^whsec_[0-9A-Za-z]{32}$/)
    expect(after).not.toBe(before)
    const [first, second] = receiver.at("/rotate")
    expect(signatureIsValid(before, first!)).toBe(true)
    expect(signatureIsValid(after, second!)).toBe(true)
    expect(signatureIsValid(before, second!)).toBe(false)
    expect(receivedEvent(before, first!).eventId).toBe(`evt_${id}`)
    expect(receivedEvent(after, second!).eventId).toBe(`evt_${id}`)
    expect(refusalOf(before, second!)).toBe("signature")
    // a receiver given both secrets while it changes over takes either attempt
    expect(receivedEvent([after, before], first!).eventId).toBe(`evt_${id}`)
    expect(receivedEvent([after, before], second!).eventId).toBe(`evt_${id}`)
    expect(first!.rawBody.equals(second!.rawBody)).toBe(true)
  })

  it("event ids identify events: one per event, the same on every retry", async () => {
    const byDelivery = new Map<string, Set<string>>()
    for (const request of receiver.received) {
      const delivery = String(request.headers["x-service-delivery"])
      byDelivery.set(delivery, (byDelivery.get(delivery) ?? new Set()).add(eventOf(request).id))
    }
    const eventIds = [...byDelivery.values()].map((ids) => [...ids])
    for (const ids of eventIds) expect(ids).toHaveLength(1)
    expect(new Set(eventIds.flat()).size).toBe(byDelivery.size)
    // the failed delivery was not attempted again
    expect(receiver.at("/down")).toHaveLength(5)
    const production = await deliveries("production")
    const listed = [...production, ...await deliveries("sandbox")]
    expect(new Set(listed.map((d) => d.id))).toEqual(new Set(byDelivery.keys()))

    // the log pages newest first, within its bounds
    const page = (await api("production").answer((c) => c.webhooks.listWebhookDeliveries({ query: { limit: 2, offset: 1 } }))).body
    expectShape(page, DeliveriesList)
    expect(page).toMatchObject({ limit: 2, offset: 1 })
    expect(page.deliveries.map((d: any) => d.id)).toEqual(production.slice(1, 3).map((d) => d.id))
    const created = production.map((d) => Date.parse(d.createdAt))
    expect(created).toEqual([...created].sort((a, b) => b - a))
    // out of bounds: the client would not send them
    for (const query of ["limit=0", "limit=101", "offset=-1", "offset=10001", "limit=ten"]) {
      const res = await call("production", `/v2/webhooks/deliveries?${query}`)
      expect(res.status, query).toBe(400)
      expectShape(await json(res), ErrorResponse("invalid_request"))
    }
  })

  it("a restart resumes a pending delivery at its planned time", async () => {
    expect(await server.stop("SIGTERM")).toBe(0)
    const slow = { ...env, WEBHOOK_RETRY_INITIAL_MS: "2500" }
    const first = await startServer(slow)
    await configure("production", "/restart", first)
    receiver.script("/restart", [500, 200])
    const id = await sendTest("production", first)
    const pending = await waitForDelivery("production", id, (d) => d.attempts === 1, first)
    expect(pending.status).toBe("pending")
    expect(await first.stop("SIGKILL")).toBeNull()

    server = await startServer(slow)
    const done = await waitForDelivery("production", id, (d) => d.status === "processed")
    expect(server.output()).toContain("resuming 1 pending webhook delivery")
    expect(done.attempts).toBe(2)
    const [, retry] = receiver.at("/restart")
    expect(retry!.receivedAt).toBeGreaterThanOrEqual(Date.parse(pending.nextAttemptAt) - 50)
  })
})
