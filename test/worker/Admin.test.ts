/**
 * The worker's admin listener: alive while the process runs; ready only while every task queue's
 * worker polls; its metrics in Prometheus's text format, gauges refreshed first. The Temporal
 * SDK's own metrics are the SDK's to serve, on the port the runtime options give it.
 */
import { Effect, Layer, ManagedRuntime, Metric } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../src/platform/Config.js"
import { MetricsReader, onScrape, TelemetryLive } from "../../src/platform/Telemetry.js"
import { startWorkerAdmin } from "../../worker/Admin.js"
import { sdkRuntimeOptions } from "../../worker/Workers.js"
import { testConfig } from "../support/TestApp.js"

const runtime = ManagedRuntime.make(TelemetryLive({ serviceName: "vehicle-data-worker" }).pipe(Layer.provide(testConfig())))
let states: Record<string, string> = {}
let admin: Awaited<ReturnType<typeof startWorkerAdmin>>
beforeAll(async () => {
  admin = await startWorkerAdmin({ host: "127.0.0.1", port: 0, states: () => states, reader: await runtime.runPromise(MetricsReader) })
})
afterAll(async () => {
  await admin?.close()
  await runtime.dispose()
})

const get = async (path: string, method = "GET") => {
  const res = await fetch(`http://127.0.0.1:${admin.port}${path}`, { method })
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
}

describe("the worker's admin listener", () => {
  it("is alive whatever the workers do", async () => {
    states = {}
    expect(await get("/healthz")).toMatchObject({ status: 200, text: JSON.stringify({ status: "ok" }) })
  })

  it("is ready only when every worker runs", async () => {
    const ready = async () => {
      const res = await get("/readyz")
      return { status: res.status, body: JSON.parse(res.text) }
    }
    states = {}
    expect((await ready()).status).toBe(503)
    states = { "q-operations": "RUNNING", "q-deliveries": "INITIALIZED" }
    expect(await ready()).toEqual({ status: 503, body: { status: "not ready", workers: states } })
    states = { "q-operations": "RUNNING", "q-deliveries": "RUNNING" }
    expect(await ready()).toEqual({ status: 200, body: { status: "ready", workers: states } })
    states = { "q-operations": "DRAINING", "q-deliveries": "RUNNING" }
    expect((await ready()).status).toBe(503)
  })

  it("serves the activities' metrics for Prometheus, state gauges refreshed before the scrape", async () => {
    const attempts = Metric.counter("vda_worker_admin_test_attempts", { description: "a counter of this test" })
    const depth = Metric.gauge("vda_worker_admin_test_depth")
    const stop = onScrape(() => depth.unsafeUpdate(7, []))
    try {
      await runtime.runPromise(Effect.all([Metric.increment(attempts), Metric.increment(attempts), Metric.increment(attempts)]))
      const res = await get("/metrics")
      expect(res.status).toBe(200)
      expect(res.type).toMatch(/^text\/plain/)
      expect(res.text).toMatch(/^# HELP vda_worker_admin_test_attempts a counter of this test$/m)
      expect(res.text).toMatch(/^vda_worker_admin_test_attempts(\{[^}]*\})? 3$/m)
      expect(res.text).toMatch(/^vda_worker_admin_test_depth(\{[^}]*\})? 7$/m)
    } finally {
      stop()
    }
  })

  it("knows nothing else", async () => {
    expect((await get("/status")).status).toBe(404)
    expect((await get("/readyz", "POST")).status).toBe(405)
  })
})

describe("the Temporal SDK's metrics", () => {
  const workerConfig = (env: Record<string, string>) => Effect.runPromise(Effect.provide(AppConfig, testConfig(env))).then((c) => c.temporal.worker)

  it("are served for Prometheus on WORKER_ADMIN_HOST:WORKER_SDK_METRICS_PORT", async () => {
    expect(sdkRuntimeOptions(await workerConfig({ WORKER_SDK_METRICS_PORT: "9465" }))).toEqual({
      telemetryOptions: { metrics: { prometheus: { bindAddress: "127.0.0.1:9465" } } }
    })
    expect(sdkRuntimeOptions(await workerConfig({ WORKER_ADMIN_HOST: "::1", WORKER_SDK_METRICS_PORT: "9465" }))).toEqual({
      telemetryOptions: { metrics: { prometheus: { bindAddress: "[::1]:9465" } } }
    })
  })

  it("are off without that port", async () => {
    expect(sdkRuntimeOptions(await workerConfig({}))).toEqual({})
  })
})
