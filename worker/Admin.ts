/**
 * The worker's own health endpoint, for orchestrators: `GET /healthz` answers while the process
 * lives; `GET /readyz` answers 200 once every worker polls its task queue, 503 before and while
 * draining. Plain HTTP on WORKER_ADMIN_HOST:WORKER_ADMIN_PORT (loopback by default).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface WorkerStates {
  /** Each task queue's worker state, as `Worker.getState()` gives it. */
  readonly states: () => Record<string, string>
}

export const startWorkerAdmin = async (options: WorkerStates & { readonly host: string; readonly port: number }) => {
  const server = Http.createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
      response.end(JSON.stringify(body))
    }
    if (request.method !== "GET" && request.method !== "HEAD") return reply(405, { status: "method not allowed" })
    if (request.url === "/healthz") return reply(200, { status: "ok" })
    if (request.url === "/readyz") {
      const workers = options.states()
      const ready = Object.values(workers).length > 0 && Object.values(workers).every((state) => state === "RUNNING")
      return reply(ready ? 200 : 503, { status: ready ? "ready" : "not ready", workers })
    }
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
