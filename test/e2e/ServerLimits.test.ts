/**
 * What Node's HTTP server refuses before the application sees a request still gets the error
 * body: malformed requests (400), oversized headers (431), and clients too slow to send their
 * headers (408, closed after HTTP_HEADERS_TIMEOUT_MS rather than Node's minute-long defaults).
 * The server keeps serving others meanwhile.
 */
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase } from "../support/Postgres.js"
import { type ServerProcess, startServer } from "../support/Processes.js"

let server: ServerProcess

beforeAll(async () => {
  server = await startServer({ DATABASE_URL: await freshDatabase(), HTTP_HEADERS_TIMEOUT_MS: "1000" })
}, 60_000)
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

/** Sends raw bytes (optionally leaving the request unfinished) and collects the answer until the server closes. */
const raw = (payload: string) =>
  new Promise<{ text: string; elapsedMs: number }>((resolve, reject) => {
    const { hostname, port } = new URL(server.productionUrl)
    const started = Date.now()
    const socket = Net.connect(Number(port), hostname === "localhost" ? "127.0.0.1" : hostname)
    let text = ""
    socket.setTimeout(15_000, () => socket.destroy(new Error("the server never closed the connection")))
    socket.on("data", (chunk) => (text += chunk.toString("utf8")))
    socket.on("error", reject)
    socket.on("close", () => resolve({ text, elapsedMs: Date.now() - started }))
    socket.write(payload)
  })

const parse = (text: string) => {
  const [head = "", body = ""] = text.split("\r\n\r\n")
  return { statusLine: head.split("\r\n")[0], head, body: JSON.parse(body) }
}

const errorBody = (retryable: boolean) => ({
  error: { code: "invalid_request", message: expect.any(String), requestId: expect.stringMatching(/^req_/), retryable }
})

describe("requests Node refuses itself", () => {
  it("a malformed request: 400 with the error body", async () => {
    const answer = parse((await raw("THIS IS NOT HTTP\r\n\r\n")).text)
    expect(answer.statusLine).toBe("HTTP/1.1 400 Bad Request")
    expect(answer.head).toMatch(/content-type: application\/json/i)
    expect(answer.body).toEqual(errorBody(false))
  })

  it("headers over 16 KiB: 431 with the error body", async () => {
    const answer = parse((await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}\r\n\r\n`)).text)
    expect(answer.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large")
    expect(answer.body).toEqual(errorBody(false))
  })

  it("a client that never finishes its headers: 408 and closed after the headers timeout", async () => {
    const { elapsedMs, text } = await raw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
    const answer = parse(text)
    expect(answer.statusLine).toBe("HTTP/1.1 408 Request Timeout")
    expect(answer.body).toEqual(errorBody(true))
    expect(elapsedMs).toBeLessThan(5_000)
  })

  it("meanwhile the server answers everyone else", async () => {
    const slow = raw("GET /healthz HTTP/1.1\r\nHost: x\r\n")
    expect((await fetch(`${server.productionUrl}/healthz`)).status).toBe(200)
    await slow
  })
})
