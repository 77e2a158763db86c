/**
 * The admin listener: `GET /metrics` in Prometheus's text format, on ADMIN_HOST:ADMIN_PORT
 * (loopback by default), never on a public port. Plain Node HTTP: a scrape must answer even when
 * the API's own stack is saturated.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { MetricsReader, refreshGauges } from "./Telemetry.js"

export interface AdminListener {
  readonly host: string
  readonly port: number
}

/** Serves the metrics until the scope closes. */
export const serveAdmin = Effect.fnUntraced(function*(host: string, port: number) {
  const reader = yield* MetricsReader
  const server = Http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0]
    if (path !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
      return
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { "content-type": "text/plain", allow: "GET, HEAD" }).end("method not allowed\n")
      return
    }
    refreshGauges().then(() => reader.getMetricsRequestHandler(request, response))
  })
  yield* Effect.acquireRelease(
    Effect.callback<void, Error>((resume) => {
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen({ port, host, exclusive: true }, () => resume(Effect.void))
    }),
    () => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )
  return { host, port: (server.address() as AddressInfo).port } satisfies AdminListener
})
