/**
 * The Node HTTP server's own limits (DESIGN §12): how long a client may take to send its headers
 * and its whole request, how long an idle keep-alive connection stays open, how large the headers
 * may be. Requests Node refuses itself (malformed, headers too large, too slow) still get the
 * contract's error body, written straight to the socket since no application code runs for them.
 */
import type { Server, ServerOptions } from "node:http"
import type { Duplex } from "node:stream"
import type { ErrorBody } from "./Errors.js"
import { ulidAt } from "./Ids.js"

export interface HttpServerLimits {
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  readonly maxHeaderBytes: number
}

export const serverOptions = (limits: HttpServerLimits): ServerOptions => ({
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  maxHeaderSize: limits.maxHeaderBytes,
  // how often Node looks for connections past those timeouts (30 s by default: slow clients
  // would otherwise hold a connection for a minute or more)
  connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)))
})

const REFUSALS = {
  400: { reason: "Bad Request", message: "Malformed HTTP request", retryable: false },
  408: { reason: "Request Timeout", message: "The request was not received in time", retryable: true },
  431: { reason: "Request Header Fields Too Large", message: "The request headers are too large", retryable: false }
} as const

const statusOf = (code: string | undefined): keyof typeof REFUSALS =>
  code === "HPE_HEADER_OVERFLOW" ? 431 : code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400

/** The raw HTTP response for a request Node refused before the application saw it. */
export const refusalResponse = (code: string | undefined, requestId = `req_${ulidAt(Date.now())}`) => {
  const status = statusOf(code)
  const { message, reason, retryable } = REFUSALS[status]
  const error: ErrorBody = { code: "invalid_request", message, requestId, retryable }
  const body = JSON.stringify({ error })
  return [
    `HTTP/1.1 ${status} ${reason}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")
}

/** Answers Node's own refusals with the error body, then closes the connection. */
export const answerClientErrors = (server: Server) =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy()
    socket.end(refusalResponse(error.code))
  })
