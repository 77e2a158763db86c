/**
 * One trace on the inline engine, from the request to the webhook: a `POST` modules request on
 * the real listener (its server span continuing the client's `traceparent`), the workflow's start,
 * the workflow, each module's activities, the event, the delivery workflow and its first attempt,
 * which also links to what caused it. Spans are read from an in-memory exporter; nothing in any
 * span names the plate or the key. With tracing off, nothing is recorded at all.
 */
import * as Http from "node:http"
import * as Net from "node:net"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RequestTracer } from "../../src/platform/observability/Telemetry.js"
import { waitFor } from "../support/Processes.js"
import { makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"

const PLATE = "AB123CD"
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const CLIENT_SPAN = "00f067aa0ba902b7"

/** A port nothing listens on: the delivery's attempt fails (connection refused), fast. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const exporter = new InMemorySpanExporter()
let app: TestApp
let account: TestAccount
let urls: { readonly production: string; readonly sandbox: string }

beforeAll(async () => {
  app = await makeTestApp({
    spanProcessor: new SimpleSpanProcessor(exporter),
    // the delivery's five attempts fail at once, so its workflow (and span) ends within the test
    config: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_INITIAL_MS: "10", WEBHOOK_RETRY_COEFFICIENT: "1" }
  })
  urls = await app.listen()
  account = await app.createAccount({ plan: "growth" })
})

afterAll(() => app?.dispose())

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${urls.sandbox}${path}`, {
    ...init,
    headers: { "x-api-key": account.sandbox.key, "content-type": "application/json", ...(init.headers as Record<string, string>) }
  })

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((span) => span.name === name)

/** The spans of SQL statements. */
const statements = (spans: ReadonlyArray<ReadableSpan>) => spans.filter((span) => span.attributes["db.system.name"] === "postgresql")

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

/** The names of a span's ancestors, nearest first, within the spans recorded. */
const ancestry = (spans: ReadonlyArray<ReadableSpan>, span: ReadableSpan) => {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const names: Array<string> = []
  for (let parent = byId.get(parentOf(span) ?? ""); parent !== undefined; parent = byId.get(parentOf(parent) ?? "")) {
    names.push(parent.name)
  }
  return names
}

describe("tracing on the inline engine", () => {
  it("one trace goes from the POST modules request through each module activity to the delivery attempt", async () => {
    const hook = `https://127.0.0.1:${await closedPort()}/hook`
    expect((await call("/v2/webhooks/config", { method: "PATCH", body: JSON.stringify({ url: hook, enabled: true }) })).status).toBe(200)

    const created = await call(`/v2/vehicles/${PLATE}/modules`, {
      method: "POST",
      body: JSON.stringify({ modules: ["fines", "vtv"] }),
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }
    })
    expect(created.status).toBe(202)
    const operationId = ((await created.json()) as { id: string }).id

    const spans = await waitFor(() => {
      const finished = exporter.getFinishedSpans()
      return named(finished, "workflow.webhook-delivery").length > 0 ? finished : undefined
    }, "the delivery's workflow to end")

    // the request: a server span named by its route template, continuing the client's trace
    const [server] = named(spans, "POST /v2/vehicles/{plate}/modules")
    expect(server).toBeDefined()
    expect(server!.spanContext().traceId).toBe(CLIENT_TRACE)
    expect(parentOf(server!)).toBe(CLIENT_SPAN)
    expect(server!.attributes).toMatchObject({
      "http.route": "/v2/vehicles/{plate}/modules",
      "http.request.method": "POST",
      "http.response.status_code": 202,
      "vda.environment": "sandbox",
      "vda.account_id": account.id
    })
    expect(server!.attributes["vda.request_id"]).toBe(created.headers.get("x-request-id"))

    // everything after it is in the same trace
    const trace = spans.filter((span) => span.spanContext().traceId === CLIENT_TRACE)
    const start = named(trace, "workflow.start")
    expect(start.map((span) => span.attributes["vda.operation_id"])).toEqual([operationId])
    expect(ancestry(trace, start[0]!)).toContain(server!.name)
    // the request's own statement, the one that creates the operation (its batched reads run with
    // other requests', outside any one trace): a statement's span is named after its database
    // (OpenTelemetry's convention, Effect 4), so it is known by its `db.system.name`
    expect(statements(trace).some((span) => ancestry(trace, span).join(" < ") === server!.name)).toBe(true)

    const [workflow] = named(trace, "workflow.modules")
    expect(ancestry(trace, workflow!)).toEqual(["workflow.start", server!.name])

    for (const module of ["fines", "vtv"]) {
      const fetched = named(trace, "activity.fetchModule").filter((span) => span.attributes["vda.module"] === module)
      expect(fetched, module).toHaveLength(1)
      expect(ancestry(trace, fetched[0]!)[0]).toBe("workflow.modules")
      expect(fetched[0]!.attributes["vda.operation_id"]).toBe(operationId)
      expect(named(trace, "activity.recordModule").filter((span) => span.attributes["vda.module"] === module)).toHaveLength(1)
    }
    for (const step of ["activity.markProcessing", "activity.finalizeOperation", "activity.emitEvent"]) {
      expect(named(trace, step).map((span) => ancestry(trace, span)[0]), step).toEqual(["workflow.modules"])
    }

    const attempts = named(trace, "webhook.delivery.attempt")
    expect(attempts.map((span) => span.attributes["vda.attempt"]).sort()).toEqual([1, 2, 3, 4, 5])
    const attempt = attempts.find((span) => span.attributes["vda.attempt"] === 1)
    expect(ancestry(trace, attempt!)).toEqual([
      "activity.attemptDelivery",
      "workflow.webhook-delivery",
      "workflow.modules",
      "workflow.start",
      server!.name
    ])
    expect(attempt!.attributes).toMatchObject({ "vda.operation_id": operationId, "vda.attempt": 1 })
    // linked to what recorded its event: the operation's event step
    const [emitted] = named(trace, "activity.emitEvent")
    for (const each of attempts) expect(each.links.map((link) => link.context.spanId)).toEqual([emitted!.spanContext().spanId])

    // nothing recorded names the plate or carries the key
    const recorded = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })))
    expect(recorded).not.toContain(PLATE)
    expect(recorded).not.toContain(account.sandbox.key)
  })
})

describe("upstream calls", () => {
  it("are traced by host alone (their URL ends in the plate), and carry no trace context to the third party", async () => {
    const seen: Array<{ readonly url: string; readonly traceparent: string | undefined }> = []
    const upstream = Http.createServer((request, response) => {
      seen.push({ url: request.url ?? "", traceparent: request.headers["traceparent"] as string | undefined })
      response.writeHead(404, { "content-type": "application/json" }).end("{}")
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const spans = new InMemorySpanExporter()
    const withUpstream = await makeTestApp({
      spanProcessor: new SimpleSpanProcessor(spans),
      config: { VEHICLE_UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as Net.AddressInfo).port}` }
    })
    try {
      const { production } = await withUpstream.listen()
      const other = await withUpstream.createAccount()
      const answer = await fetch(`${production}/v2/vehicles/${PLATE}`, { headers: { "x-api-key": other.production.key } })
      expect(answer.status).toBe(200)
      expect(seen).toEqual([{ url: `/vehicles/${PLATE}`, traceparent: undefined }])
      const finished = await waitFor(() => {
        const all = spans.getFinishedSpans()
        return all.some((span) => span.name === "GET /v2/vehicles/{plate}") ? all : undefined
      }, "the request's spans")
      const [call] = named(finished, "upstream.get")
      expect(call?.attributes).toMatchObject({ "server.address": `127.0.0.1:${(upstream.address() as Net.AddressInfo).port}`, "http.response.status_code": 404 })
      expect(named(finished, "http.client GET")).toEqual([])
      expect(JSON.stringify(finished.map((span) => ({ name: span.name, attributes: span.attributes })))).not.toContain(PLATE)
    } finally {
      await withUpstream.dispose()
      upstream.close()
    }
  })
})

describe("tracing off", () => {
  it("spans are no-ops and requests get no server span, while the traced app records real ones", async () => {
    const probe = Effect.withSpan(Effect.currentSpan, "probe")
    const traced = await app.run(probe)
    expect(traced.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(Option.isSome(await app.run(RequestTracer))).toBe(true)

    const untraced = await makeTestApp()
    try {
      expect((await untraced.run(probe)).traceId).toBe("noop")
      expect(Option.isNone(await untraced.run(RequestTracer))).toBe(true)
      const { production } = await untraced.listen()
      const other = await untraced.createAccount()
      const before = exporter.getFinishedSpans().length
      expect((await fetch(`${production}/v2/status`, { headers: { "x-api-key": other.production.key } })).status).toBe(200)
      // the untraced app has no processor: the traced app's exporter saw nothing of it
      expect(exporter.getFinishedSpans().length).toBe(before)
    } finally {
      await untraced.dispose()
    }
  })
})
