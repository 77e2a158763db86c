/**
 * An answer leaves the listener's server in one write, head and body together, even though
 * Effect's Node adapter asks Node to check its Content-Length (which makes Node's own server
 * write it as two chunks and finish in a step of its own); and the check still holds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { createLimitedServer } from "../../src/platform/http/HttpServerLimits.js"

const limits = { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, maxHeaderBytes: 16_384 }

// not ASCII: Node counts its bytes, not its characters
const body = JSON.stringify({ success: true, data: { city: "Río Gallegos", plate: "AB123CD" } })

interface Writes {
  single: number
  gathered: Array<number>
}

/** Counts the writes of every connection `server` takes: single chunks, and the chunk counts of gathered ones. */
const countWrites = (server: Server): Writes => {
  const writes: Writes = { single: 0, gathered: [] }
  server.on("connection", (socket: Socket & { _writev?: (chunks: Array<unknown>, callback: () => void) => void }) => {
    const write = socket._write.bind(socket)
    const writev = socket._writev!.bind(socket)
    socket._write = (chunk, encoding, callback) => {
      writes.single++
      write(chunk, encoding, callback)
    }
    socket._writev = (chunks, callback) => {
      writes.gathered.push(chunks.length)
      writev(chunks, callback)
    }
  })
  return writes
}

/** `server` listening until the scope closes, with `handler`; answers its URL. */
const listening = Effect.fnUntraced(function*(server: Server, handler: (request: IncomingMessage, response: ServerResponse) => void) {
  server.on("request", handler)
  yield* Effect.acquireRelease(
    Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)).closeAllConnections())
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

/** Serves Effect's answer of `body` on `server` until the scope closes; answers one request's status, header and text. */
const answerThrough = Effect.fnUntraced(function*(server: Server, method = "GET") {
  const handler = yield* NodeHttpServer.makeHandler(Effect.succeed(HttpServerResponse.jsonUnsafe(JSON.parse(body))), { scope: yield* Effect.scope })
  const url = yield* listening(server, handler)
  const response = yield* Effect.promise(() => fetch(url, { method }))
  const text = yield* Effect.promise(() => response.text())
  return { status: response.status, length: response.headers.get("content-length"), text }
})

/** What a handler's writes threw (Node's code), the client seeing the connection cut. */
const thrownBy = Effect.fnUntraced(function*(answer: (response: ServerResponse) => void) {
  const server = createLimitedServer(limits)
  const writes = countWrites(server)
  let thrown: string | undefined
  const url = yield* listening(server, (_request, response) => {
    try {
      answer(response)
    } catch (error) {
      thrown = (error as NodeJS.ErrnoException).code
      response.destroy()
    }
  })
  const received = yield* Effect.promise(() => fetch(url).then(() => "an answer", () => "the connection cut"))
  return { thrown, received, writes }
})

describe("an answer's write", () => {
  it.effect("leaves the listener's server in one write, head and body together", () =>
    Effect.gen(function*() {
      const server = createLimitedServer(limits)
      const writes = countWrites(server)
      const answer = yield* answerThrough(server)
      expect(answer).toEqual({ status: 200, length: String(Buffer.byteLength(body)), text: body })
      expect(writes).toEqual({ single: 1, gathered: [] })
    }).pipe(Effect.scoped))

  it.effect("of a HEAD request is its head alone, its Content-Length the body's it would have had", () =>
    Effect.gen(function*() {
      const server = createLimitedServer(limits)
      const writes = countWrites(server)
      const answer = yield* answerThrough(server, "HEAD")
      expect(answer).toEqual({ status: 200, length: String(Buffer.byteLength(body)), text: "" })
      expect(writes.single + writes.gathered.length).toBe(1)
    }).pipe(Effect.scoped))

  it.effect("throws when written whole with a Content-Length not its body's, as Node does, and sends nothing", () =>
    Effect.gen(function*() {
      const outcome = yield* thrownBy((response) => {
        response.strictContentLength = true
        response.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) })
        response.end(body)
      })
      // the body has two-byte characters: its length in characters is not its length in bytes
      expect(outcome).toEqual({ thrown: "ERR_HTTP_CONTENT_LENGTH_MISMATCH", received: "the connection cut", writes: { single: 0, gathered: [] } })
    }).pipe(Effect.scoped))

  it.effect("throws when written in pieces past its Content-Length (Node's own check)", () =>
    Effect.gen(function*() {
      const outcome = yield* thrownBy((response) => {
        response.strictContentLength = true
        response.writeHead(200, { "content-type": "application/json", "content-length": "4" })
        response.write("{}")
        response.write("[1,2]")
      })
      expect(outcome.thrown).toBe("ERR_HTTP_CONTENT_LENGTH_MISMATCH")
      expect(outcome.received).toBe("the connection cut")
    }).pipe(Effect.scoped))

  it.effect("leaves Node's own server in two chunks, gathered, under the adapter's check", () =>
    Effect.gen(function*() {
      const server = createServer()
      const writes = countWrites(server)
      const answer = yield* answerThrough(server)
      expect(answer.text).toBe(body)
      expect(writes).toEqual({ single: 0, gathered: [2] })
    }).pipe(Effect.scoped))
})
