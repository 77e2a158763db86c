/**
 * An answer leaves the listener's server in one write, head and body together, even though
 * Effect's Node adapter asks Node to check its Content-Length (which makes Node's own server
 * write it as two chunks and finish in a step of its own).
 */
import { createServer, type Server } from "node:http"
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

/** Serves Effect's answer of `body` on `server` until the scope closes; answers one request's status, header and text. */
const answerThrough = Effect.fnUntraced(function*(server: Server) {
  const scope = yield* Effect.scope
  const handler = yield* NodeHttpServer.makeHandler(Effect.succeed(HttpServerResponse.jsonUnsafe(JSON.parse(body))), { scope })
  server.on("request", handler)
  yield* Effect.acquireRelease(
    Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
    () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)).closeAllConnections())
  )
  const { port } = server.address() as AddressInfo
  const response = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`))
  const text = yield* Effect.promise(() => response.text())
  return { status: response.status, length: response.headers.get("content-length"), text }
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

  it.effect("leaves Node's own server in two chunks, gathered, under the adapter's check", () =>
    Effect.gen(function*() {
      const server = createServer()
      const writes = countWrites(server)
      const answer = yield* answerThrough(server)
      expect(answer.text).toBe(body)
      expect(writes).toEqual({ single: 0, gathered: [2] })
    }).pipe(Effect.scoped))
})
