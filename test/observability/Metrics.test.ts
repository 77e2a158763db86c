/**
 * `/metrics` on the admin listener, read as Prometheus reads it, after a scripted sequence on the
 * real listeners (in-process app, OS ports, real HTTP): every counter the sequence moves is
 * asserted by its exact delta between a scrape before and a scrape after (Effect's metrics are
 * process-global, so counters accumulate within this file). Also: no series names a plate or a
 * key, the state gauges are there, and only the admin listener serves the metrics.
 */
import * as Net from "node:net"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { waitFor } from "../support/Processes.js"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"

/** The plates of the sequence; none may ever show in a metric. */
const QUERIED = ["KLM482", "QRS771", "TU905VW"] as const
const QUOTA_PLATE = "BCD246"
const LIMITED_PLATE = "XY357ZW"
const MODULES_PLATE = "AB123CD" // digits 123: the sandbox's default scenario (completed)
const ALL_PLATES = [...QUERIED, QUOTA_PLATE, LIMITED_PLATE, MODULES_PLATE]

const QUOTA = 2 // monthly plate queries of the quota account
const REFUSED_BY_QUOTA = 3
const RPM = 3 // requests per minute of the rate-limited account
const REFUSED_BY_RPM = 2

// ---------------------------------------------------------------------------------------------
// A tiny parser of the Prometheus text exposition format: `name{label="value",…} value`.

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const unescape = (value: string) => value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c))

const parseMetrics = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = unescape(value!)
    }
    return { name: match[1]!, labels, value: Number(match[3]) }
  })

const matching = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))

/** The sum of the series of `name` whose labels include `labels` (0 when there is none). */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  matching(samples, name, labels).reduce((sum, s) => sum + s.value, 0)

interface Scrape {
  readonly text: string
  readonly samples: ReadonlyArray<Sample>
}

// ---------------------------------------------------------------------------------------------

/** A port nothing listens on: a webhook attempt to it fails at once (connection refused). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

let app: TestApp
let urls: { readonly production: string; readonly sandbox: string; readonly metrics: string }
let main: TestAccount
let quota: TestAccount
let limited: TestAccount

const setCustom = (account: TestAccount, terms: Parameters<Accounts["Service"]["setCustom"]>[1]) =>
  app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(account.id, terms)))

beforeAll(async () => {
  app = await makeTestApp({
    config: {
      // long enough for the second identical POST to find the first operation still active
      SANDBOX_MODULE_LATENCY_MS: "2000",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      // only the first attempt of a delivery happens during the test
      WEBHOOK_RETRY_INITIAL_MS: "60000",
      // no access-log noise in the test output
      LOG_LEVEL: "warn"
    }
  })
  urls = await app.listen()
  main = await app.createAccount({ plan: "custom" })
  await setCustom(main, { requestsPerMinute: null })
  quota = await app.createAccount({ plan: "custom" })
  await setCustom(quota, { plateQueriesMonthly: QUOTA, requestsPerMinute: null })
  limited = await app.createAccount({ plan: "custom" })
  await setCustom(limited, { requestsPerMinute: RPM })
})

afterAll(() => app?.dispose())

const scrape = async (): Promise<Scrape> => {
  const res = await fetch(urls.metrics)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toContain("text/plain")
  const text = await res.text()
  return { text, samples: parseMetrics(text) }
}

const call = (environment: "production" | "sandbox", key: string, path: string, init: RequestInit = {}) =>
  fetch(`${urls[environment]}${path}`, {
    ...init,
    headers: { "x-api-key": key, "content-type": "application/json", ...(init.headers as Record<string, string> | undefined) }
  })

const vehicle = (account: TestAccount, plate: string) => call("production", account.production.key, `/v2/vehicles/${plate}`)

const FINAL = ["completed", "partial", "failed"]

describe("/metrics after a scripted sequence", () => {
  it("counts every request, metering decision, operation and delivery attempt exactly, naming no plate or key", async () => {
    const before = await scrape()

    // 1. accepted vehicle queries (production, nothing in the registry: found:false still consumes)
    for (const plate of QUERIED) {
      const res = await vehicle(main, plate)
      expect(res.status, plate).toBe(200)
      expect((await json(res)).success).toBe(true)
    }

    // 2. a monthly allowance of QUOTA plate queries, then refusals on plate_queries
    for (let i = 0; i < QUOTA; i++) expect((await vehicle(quota, QUOTA_PLATE)).status).toBe(200)
    for (let i = 0; i < REFUSED_BY_QUOTA; i++) {
      const res = await vehicle(quota, QUOTA_PLATE)
      expect(res.status).toBe(429)
      const body = await json(res)
      expectShape(body, ErrorResponse("quota_exceeded", true))
      expect(body.error.details).toMatchObject({ meter: "plate_queries", limit: QUOTA, used: QUOTA })
    }

    // 3. RPM requests in one UTC minute, then refusals on requests (not in a minute's last
    //    seconds, so that the burst cannot straddle two windows)
    await waitFor(() => (new Date().getUTCSeconds() < 50 ? true : undefined), "a minute with room for the burst", 15_000)
    for (let i = 0; i < RPM; i++) expect((await vehicle(limited, LIMITED_PLATE)).status).toBe(200)
    for (let i = 0; i < REFUSED_BY_RPM; i++) {
      const res = await vehicle(limited, LIMITED_PLATE)
      expect(res.status).toBe(429)
      const body = await json(res)
      expectShape(body, ErrorResponse("rate_limit_exceeded", true))
      expect(body.error.details).toMatchObject({ meter: "requests", limit: RPM })
    }

    // 4. a delivery whose first attempt fails (production webhook; the sandbox has none, so the
    //    operation below sends nothing)
    const hook = `https://127.0.0.1:${await closedPort()}/hook`
    const configured = await call("production", main.production.key, "/v2/webhooks/config", {
      method: "PATCH",
      body: JSON.stringify({ url: hook, enabled: true })
    })
    expect(configured.status).toBe(200)
    const sent = await call("production", main.production.key, "/v2/webhooks/test", { method: "POST" })
    expect(sent.status).toBe(202)
    expect((await json(sent)).status).toBe("pending")

    // 5. a modules operation in the sandbox, and the identical request again while it runs: reused
    const post = () =>
      call("sandbox", main.sandbox.key, `/v2/vehicles/${MODULES_PLATE}/modules`, {
        method: "POST",
        body: JSON.stringify({ modules: ["fines", "vtv"] })
      })
    const created = await post()
    expect(created.status).toBe(202)
    const operation = await json(created)
    const again = await post()
    expect(again.status).toBe(200)
    expect((await json(again)).id).toBe(operation.id)

    // the delivery's first attempt has failed
    await waitFor(async () => {
      const now = await scrape()
      return valueOf(now.samples, "vda_webhook_delivery_attempts_total", { outcome: "failed" })
          > valueOf(before.samples, "vda_webhook_delivery_attempts_total", { outcome: "failed" })
        ? true
        : undefined
    }, "the delivery's first attempt to fail", 20_000)

    // the operation reaches its final status (polling costs only RPM: unlimited here)
    const final = await waitFor(async () => {
      const body = await json(await call("sandbox", main.sandbox.key, `/v2/operations/${operation.id}`))
      return FINAL.includes(body.status) ? body : undefined
    }, `operation ${operation.id} to finish`, 20_000)
    // counted where it became final, right after the statement that made it so
    await waitFor(async () =>
      valueOf((await scrape()).samples, "vda_operations_finished_total", { kind: "modules", status: final.status })
          > valueOf(before.samples, "vda_operations_finished_total", { kind: "modules", status: final.status })
        ? true
        : undefined, "the operation to be counted", 5_000)
    const polls = await countPolls(before)

    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after.samples, name, labels) - valueOf(before.samples, name, labels)

    // metering outcomes, per environment
    const ACCEPTED_PRODUCTION = QUERIED.length + QUOTA + RPM
    expect(delta("vda_metering_outcomes_total", { environment: "production", outcome: "accepted", meter: "none" }))
      .toBe(ACCEPTED_PRODUCTION)
    expect(delta("vda_metering_outcomes_total", { environment: "production", outcome: "quota_exceeded", meter: "plate_queries" }))
      .toBe(REFUSED_BY_QUOTA)
    expect(delta("vda_metering_outcomes_total", { environment: "production", outcome: "quota_exceeded" })).toBe(REFUSED_BY_QUOTA)
    expect(delta("vda_metering_outcomes_total", { environment: "production", outcome: "rate_limited", meter: "requests" }))
      .toBe(REFUSED_BY_RPM)
    expect(delta("vda_metering_outcomes_total", { environment: "production", outcome: "reused" })).toBe(0)
    expect(delta("vda_metering_outcomes_total", { environment: "sandbox", outcome: "accepted", meter: "none" })).toBe(1)
    expect(delta("vda_metering_outcomes_total", { environment: "sandbox", outcome: "reused", meter: "none" })).toBe(1)
    expect(delta("vda_metering_outcomes_total", { environment: "sandbox", outcome: "quota_exceeded" })).toBe(0)
    expect(delta("vda_metering_outcomes_total", { environment: "sandbox", outcome: "rate_limited" })).toBe(0)
    expect(delta("vda_metering_outcomes_total")).toBe(ACCEPTED_PRODUCTION + REFUSED_BY_QUOTA + REFUSED_BY_RPM + 2)

    // requests by route template and status
    const vehicles = { environment: "production", method: "GET", route: "/v2/vehicles/{plate}" }
    expect(delta("vda_http_requests_total", { ...vehicles, status: "200" })).toBe(ACCEPTED_PRODUCTION)
    expect(delta("vda_http_requests_total", { ...vehicles, status: "429" })).toBe(REFUSED_BY_QUOTA + REFUSED_BY_RPM)
    expect(delta("vda_http_requests_total", vehicles)).toBe(ACCEPTED_PRODUCTION + REFUSED_BY_QUOTA + REFUSED_BY_RPM)
    expect(delta("vda_http_request_duration_seconds_count", { ...vehicles, status: "200" })).toBe(ACCEPTED_PRODUCTION)
    expect(delta("vda_http_request_duration_seconds_bucket", { ...vehicles, status: "429", le: "+Inf" }))
      .toBe(REFUSED_BY_QUOTA + REFUSED_BY_RPM)
    const modules = { environment: "sandbox", method: "POST", route: "/v2/vehicles/{plate}/modules" }
    expect(delta("vda_http_requests_total", { ...modules, status: "202" })).toBe(1)
    expect(delta("vda_http_requests_total", { ...modules, status: "200" })).toBe(1)
    expect(delta("vda_http_requests_total", { environment: "sandbox", method: "GET", route: "/v2/operations/{id}", status: "200" }))
      .toBe(polls)
    expect(delta("vda_http_requests_total", { environment: "production", method: "PATCH", route: "/v2/webhooks/config", status: "200" }))
      .toBe(1)
    expect(delta("vda_http_requests_total", { environment: "production", method: "POST", route: "/v2/webhooks/test", status: "202" }))
      .toBe(1)
    // every request of the sequence, and nothing else, on the public listeners
    expect(delta("vda_http_requests_total")).toBe(ACCEPTED_PRODUCTION + REFUSED_BY_QUOTA + REFUSED_BY_RPM + 2 + 2 + polls)

    // the operation, once
    expect(delta("vda_operations_finished_total", { kind: "modules", status: final.status })).toBe(1)
    expect(delta("vda_operations_finished_total")).toBe(1)
    expect(delta("vda_operation_duration_seconds_count", { kind: "modules", status: final.status })).toBe(1)
    // it ran at least the sandbox's simulated latency
    expect(delta("vda_operation_duration_seconds_sum", { kind: "modules", status: final.status })).toBeGreaterThanOrEqual(2)

    // the delivery: one failed attempt, still pending (its retry is a minute away)
    expect(delta("vda_webhook_delivery_attempts_total", { outcome: "failed" })).toBe(1)
    expect(delta("vda_webhook_delivery_attempts_total", { outcome: "delivered" })).toBe(0)
    expect(valueOf(after.samples, "vda_webhook_deliveries_pending")).toBe(1)
    expect(valueOf(after.samples, "vda_webhook_oldest_pending_delivery_age_seconds")).toBeGreaterThan(0)
    expect(valueOf(after.samples, "vda_webhook_oldest_pending_delivery_age_seconds")).toBeLessThan(60)

    // the state gauges are there
    expect(matching(after.samples, "vda_db_pool_connections", { state: "in_use" })).toHaveLength(1)
    expect(matching(after.samples, "vda_db_pool_connections", { state: "idle" })).toHaveLength(1)
    expect(valueOf(after.samples, "vda_db_pool_connections")).toBeGreaterThan(0)
    // the driver of Effect 4 keeps no count of statements waiting for a connection: no such gauge
    expect(matching(after.samples, "vda_db_pool_waiting")).toHaveLength(0)
    expect(matching(after.samples, "vda_event_loop_lag_seconds")).toHaveLength(1)
    expect(valueOf(after.samples, "vda_event_loop_lag_seconds")).toBeGreaterThanOrEqual(0)

    // every series of ours carries its scope (target_info is the resource's); none names a plate,
    // a key or an account
    for (const sample of after.samples.filter((s) => s.name.startsWith("vda_"))) {
      expect(sample.labels.otel_scope_name, sample.name).toBeDefined()
    }
    for (const plate of ALL_PLATES) {
      expect(after.text).not.toContain(plate)
      expect(after.text).not.toContain(plate.toLowerCase())
    }
    for (const account of [main, quota, limited]) {
      expect(after.text).not.toContain(account.production.key)
      expect(after.text).not.toContain(account.sandbox.key)
      expect(after.text).not.toContain(account.id)
    }
    expect(after.text).not.toContain(operation.id)
  }, 60_000)
})

/**
 * How many polls of the operation the public listener has counted since `before` (the test polls
 * until the status is final, so their number is whatever it took).
 */
const countPolls = async (before: Scrape) => {
  const labels = { environment: "sandbox", method: "GET", route: "/v2/operations/{id}" }
  const now = await scrape()
  return valueOf(now.samples, "vda_http_requests_total", labels) - valueOf(before.samples, "vda_http_requests_total", labels)
}

describe("where the metrics are served", () => {
  it("the admin listener serves GET /metrics only: 404 for other paths, 405 for other methods", async () => {
    const admin = new URL(urls.metrics).origin
    for (const path of ["/", "/metric", "/metrics/", "/healthz", "/v2/status"]) {
      const res = await fetch(`${admin}${path}`)
      expect(res.status, path).toBe(404)
      await res.arrayBuffer()
    }
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await fetch(urls.metrics, { method })
      expect(res.status, method).toBe(405)
      expect(res.headers.get("allow")).toBe("GET, HEAD")
      await res.arrayBuffer()
    }
    expect((await fetch(`${urls.metrics}?name=vda_http_requests_total`)).status).toBe(200)
  })

  it("the public listeners answer /metrics like any unknown path (404 with the API's error body)", async () => {
    const before = await scrape()
    for (const environment of ["production", "sandbox"] as const) {
      for (const key of [undefined, environment === "production" ? main.production.key : main.sandbox.key]) {
        const res = await fetch(`${urls[environment]}/metrics`, { headers: key === undefined ? {} : { "x-api-key": key } })
        expect(res.status, `${environment} ${key === undefined ? "without" : "with"} a key`).toBe(404)
        const body = await json(res)
        expectShape(body, ErrorResponse("invalid_request"))
        expect(body.error.requestId).toBe(res.headers.get("x-request-id"))
        expect(JSON.stringify(body)).not.toContain("vda_")
      }
    }
    const after = await scrape()
    // counted under `unmatched`, never under the path it was asked for
    for (const environment of ["production", "sandbox"]) {
      const labels = { environment, method: "GET", route: "unmatched", status: "404" }
      expect(valueOf(after.samples, "vda_http_requests_total", labels) - valueOf(before.samples, "vda_http_requests_total", labels))
        .toBe(2)
    }
    expect(matching(after.samples, "vda_http_requests_total", { route: "/metrics" })).toEqual([])
  })
})
