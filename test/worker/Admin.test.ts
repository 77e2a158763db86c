/**
 * The worker's admin listener: alive while the process runs; ready only while every task queue's
 * worker polls; its metrics in Prometheus's text format, gauges refreshed first. The Temporal
 * SDK's own metrics are the SDK's to serve, on the port the runtime options give it.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Metric } from "effect"
import { AppConfig } from "../../src/platform/config/Config.js"
import { MetricsReader, onScrape, TelemetryLive, updateUnsafe } from "../../src/platform/observability/Telemetry.js"
import { startWorkerAdmin } from "../../worker/Admin.js"
import { sdkRuntimeOptions } from "../../worker/Workers.js"
import { testConfig } from "../support/TestApp.js"

let states: Record<string, string> = {}

/** The admin listener on an OS port, over the worker's telemetry; closed with the layer. */
class WorkerAdmin extends Context.Service<WorkerAdmin, { readonly port: number }>()("test/WorkerAdmin") {}

const WorkerAdminLive = Layer.effect(
  WorkerAdmin,
  Effect.gen(function*() {
    const reader = yield* MetricsReader
    const admin = yield* Effect.acquireRelease(
      Effect.promise(() => startWorkerAdmin({ host: "127.0.0.1", port: 0, states: () => states, reader })),
      (admin) => Effect.promise(() => admin.close())
    )
    return WorkerAdmin.of({ port: admin.port })
  })
).pipe(Layer.provideMerge(TelemetryLive({ serviceName: "vehicle-data-worker" })), Layer.provide(testConfig()))

const get = (path: string, method = "GET") =>
  Effect.flatMap(Effect.service(WorkerAdmin), ({ port }) =>
    Effect.promise(async () => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method })
      return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
    }))

layer(WorkerAdminLive, { excludeTestServices: true })("the worker's admin listener", (it) => {
  it.effect("is alive whatever the workers do", () =>
    Effect.gen(function*() {
      states = {}
      expect(yield* get("/healthz")).toMatchObject({ status: 200, text: JSON.stringify({ status: "ok" }) })
    }))

  it.effect("is ready only when every worker runs", () =>
    Effect.gen(function*() {
      const ready = Effect.map(get("/readyz"), (res) => ({ status: res.status, body: JSON.parse(res.text) }))
      states = {}
      expect((yield* ready).status).toBe(503)
      states = { "q-operations": "RUNNING", "q-deliveries": "INITIALIZED" }
      expect(yield* ready).toEqual({ status: 503, body: { status: "not ready", workers: states } })
      states = { "q-operations": "RUNNING", "q-deliveries": "RUNNING" }
      expect(yield* ready).toEqual({ status: 200, body: { status: "ready", workers: states } })
      states = { "q-operations": "DRAINING", "q-deliveries": "RUNNING" }
      expect((yield* ready).status).toBe(503)
    }))

  it.effect("serves the activities' metrics for Prometheus, state gauges refreshed before the scrape", () =>
    Effect.gen(function*() {
      const attempts = Metric.counter("vda_worker_admin_test_attempts", { description: "a counter of this test" })
      const depth = Metric.gauge("vda_worker_admin_test_depth")
      yield* Effect.acquireRelease(Effect.sync(() => onScrape(() => updateUnsafe(depth, 7))), (stop) => Effect.sync(stop))
      yield* Effect.all([Metric.update(attempts, 1), Metric.update(attempts, 1), Metric.update(attempts, 1)])
      const res = yield* get("/metrics")
      expect(res.status).toBe(200)
      expect(res.type).toMatch(/^text\/plain/)
      expect(res.text).toMatch(/^# HELP vda_worker_admin_test_attempts a counter of this test$/m)
      expect(res.text).toMatch(/^vda_worker_admin_test_attempts(\{[^}]*\})? 3$/m)
      expect(res.text).toMatch(/^vda_worker_admin_test_depth(\{[^}]*\})? 7$/m)
    }))

  it.effect("knows nothing else", () =>
    Effect.gen(function*() {
      expect((yield* get("/status")).status).toBe(404)
      expect((yield* get("/readyz", "POST")).status).toBe(405)
    }))
})

describe("the Temporal SDK's metrics", () => {
  const workerConfig = (env: Record<string, string>) =>
    Effect.service(AppConfig).pipe(Effect.provide(testConfig(env)), Effect.map((config) => config.temporal.worker))

  it.effect("are served for Prometheus on WORKER_ADMIN_HOST:WORKER_SDK_METRICS_PORT", () =>
    Effect.gen(function*() {
      expect(sdkRuntimeOptions(yield* workerConfig({ WORKER_SDK_METRICS_PORT: "9465" }))).toEqual({
        telemetryOptions: { metrics: { prometheus: { bindAddress: "127.0.0.1:9465" } } }
      })
      expect(sdkRuntimeOptions(yield* workerConfig({ WORKER_ADMIN_HOST: "::1", WORKER_SDK_METRICS_PORT: "9465" }))).toEqual({
        telemetryOptions: { metrics: { prometheus: { bindAddress: "[::1]:9465" } } }
      })
    }))

  it.effect("are off without that port", () =>
    Effect.gen(function*() {
      expect(sdkRuntimeOptions(yield* workerConfig({}))).toEqual({})
    }))
})
