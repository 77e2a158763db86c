/**
 * The worker's admin listener, for orchestrators and Prometheus: `GET /healthz` answers while the
 * process lives; `GET /readyz` answers 200 once every worker polls its task queue, 503 before and
 * while draining; `GET /metrics` serves the activities' metrics (operations finished, delivery
 * attempts…) in Prometheus's text format. Plain HTTP on WORKER_ADMIN_HOST:WORKER_ADMIN_PORT
 * (loopback by default). The Temporal SDK's own metrics have their own port (`sdkRuntimeOptions`).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
import { refreshGauges } from "../src/platform/observability/Telemetry.js"

export interface WorkerStates {
  /** Each task queue's worker state, as `Worker.getState()` gives it. */
  readonly states: () => Record<string, string>
}

export const startWorkerAdmin = async (options: WorkerStates & {
  readonly host: string
  readonly port: number
  /** The process's metrics (Telemetry.ts's MetricsReader). */
  readonly reader: PrometheusExporter
}) => {
  const server = Http.createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
      response.end(JSON.stringify(body))
    }
    if (request.method !== "GET" && request.method !== "HEAD") return reply(405, { status: "method not allowed" })
    const path = (request.url ?? "/").split("?", 1)[0]
    if (path === "/healthz") return reply(200, { status: "ok" })
    if (path === "/readyz") {
      const workers = options.states()
      const ready = Object.values(workers).length > 0 && Object.values(workers).every((state) => state === "RUNNING")
      return reply(ready ? 200 : 503, { status: ready ? "ready" : "not ready", workers })
    }
    if (path === "/metrics") return void refreshGauges().then(() => options.reader.getMetricsRequestHandler(request, response))
    return reply(404, { status: "not found" })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
