/**
 * The Node HTTP server's own limits (DESIGN §12): how long a client may take to send its headers
 * and its whole request, how long an idle keep-alive connection stays open, how large the headers
 * may be. Requests Node refuses itself (malformed, headers too large, too slow) still get the
 * contract's error body, written straight to the socket since no application code runs for them.
 */
import { createServer, type Server, type ServerOptions } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { ErrorBody } from "./Errors.js"
import { SingleWriteResponse } from "./SingleWriteResponse.js"
import { ulidAt } from "../ids/Ids.js"

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
const clientErrorResponse = (code: string | undefined, requestId = `req_${ulidAt(Date.now())}`) => {
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

/** How long a connection closed by us may go on sending (the rest of its body, say) before it is cut. */
const LINGER_MS = 2_000
/** How long our last bytes may take to reach a client that reads slowly. */
const FLUSH_MS = 30_000

/**
 * Closes after the answer, reading (and discarding) what the client still sends for a moment:
 * closing a socket with unread bytes resets it, and the reset can destroy our answer before the
 * client has read it (a refused oversized upload would see no answer at all).
 */
const lingeringClose = (socket: Duplex) => {
  const cut = setTimeout(() => socket.destroy(), FLUSH_MS).unref()
  socket.on("data", () => {})
  socket.resume()
  socket.end(() => {
    clearTimeout(cut)
    if (socket.readableEnded) return void socket.destroy()
    const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref()
    socket.once("end", () => {
      clearTimeout(linger)
      socket.destroy()
    })
  })
}

/** Answers Node's own refusals with the error body, then closes the connection. */
const answerClientErrors = (server: Server) =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET") return void socket.destroy()
    if (!socket.writable) return // answered already: the linger ends it
    socket.write(clientErrorResponse(error.code))
    lingeringClose(socket)
  })

/**
 * Node closes a connection after answering a request it will not keep alive (the client asked to
 * close, or the body was left unread) with the socket's destroySoon, which leaves no time for the
 * client's unread bytes: ours lingers instead.
 */
const lingerOnClose = (server: Server) =>
  server.on("connection", (socket: Socket & { destroySoon?: () => void }) => {
    socket.destroySoon = () => lingeringClose(socket)
  })

/**
 * An HTTP server holding to these limits. Node keeps only the first 2,000 header lines and drops
 * the rest without a word (a Content-Length or Content-Type among them): the header size limit
 * bounds their number instead.
 */
export const createLimitedServer = (limits: HttpServerLimits): Server => {
  const server = createServer({ ...serverOptions(limits), ServerResponse: SingleWriteResponse })
  server.maxHeadersCount = 0
  return lingerOnClose(answerClientErrors(server))
}
