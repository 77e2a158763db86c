/**
 * The access log's `bytes` is what the client received for the answer, head and body: for each
 * answer of one keep-alive connection, and for a connection's first answer alike.
 */
import { createServer, type Server } from "node:http"
import { connect, type AddressInfo } from "node:net"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RequestLine } from "../../src/platform/observability/Logging.js"
import { makeObserver } from "../../src/platform/observability/HttpObservation.js"
import { waitFor } from "../support/Processes.js"

const lines: Array<RequestLine> = []
let server: Server

beforeAll(async () => {
  const observe = makeObserver({
    environment: "production",
    routeOf: () => "/sized/{n}",
    tracer: Option.none(),
    accessLog: { enabled: true, write: (line) => void lines.push(line) }
  })
  // answers /sized/n with a body of n bytes
  server = createServer(observe((request, response) => {
    const size = Number(request.url!.split("/").pop())
    response.writeHead(200, { "content-type": "text/plain", "content-length": String(size) })
    response.end("x".repeat(size))
  }))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** Sends the paths one after another on one connection; answers what arrived for each answer. */
const exchange = (paths: ReadonlyArray<string>) =>
  new Promise<Array<number>>((resolve, reject) => {
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
    const received: Array<number> = []
    let pending = Buffer.alloc(0)
    const send = () => socket.write(`GET ${paths[received.length]} HTTP/1.1\r\nhost: test\r\n\r\n`)
    socket.on("error", reject)
    socket.on("connect", send)
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      const headEnd = pending.indexOf("\r\n\r\n")
      if (headEnd < 0) return
      const length = Number(/content-length: (\d+)/i.exec(pending.subarray(0, headEnd).toString())![1])
      const total = headEnd + 4 + length
      if (pending.length < total) return
      received.push(total)
      pending = pending.subarray(total)
      if (received.length < paths.length) send()
      else socket.end(() => resolve(received))
    })
  })

/** The logged answers' sizes, once the server has logged `count` of them. */
const loggedSizes = (count: number) =>
  waitFor(() => lines.length >= count ? lines.slice(0, count).map((line) => line.bytes) : undefined, `${count} access-log lines`, 5_000)

describe("the access log's size of an answer", () => {
  it("is what the client received for it, for every answer of a keep-alive connection", async () => {
    lines.length = 0
    const received = await exchange(["/sized/10", "/sized/2000", "/sized/0", "/sized/70000"])
    expect(await loggedSizes(4)).toEqual(received)
  })

  it("starts again from zero on a new connection", async () => {
    lines.length = 0
    const received = await exchange(["/sized/5"])
    expect(await loggedSizes(1)).toEqual(received)
  })
})
