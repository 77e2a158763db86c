/**
 * Fuzzing on the wire, against the real server process: what only raw bytes can carry. Requests
 * aim at metered routes with hostile traits mixed in (a wrong or odd content type, an oversized
 * body, JSON nested too deep, invalid UTF-8, a flood of headers, a body shorter than its
 * Content-Length). Each must get one complete answer, never a 500; a refusal has the contract's
 * error shape with nothing internal in it and consumes nothing. FUZZ_RUNS sets the number of runs.
 */
import * as Net from "node:net"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectErrorBody } from "../support/ErrorShape.js"
import { freshDatabase } from "../support/Postgres.js"
import { cliAccount, type ServerProcess, startServer } from "../support/Processes.js"

const RUNS = Number(process.env.FUZZ_RUNS ?? 60)

let server: ServerProcess
let key: string

beforeAll(async () => {
  const env = { DATABASE_URL: await freshDatabase(), SANDBOX_MODULE_LATENCY_MS: "50", HTTP_HEADERS_TIMEOUT_MS: "1500", HTTP_REQUEST_TIMEOUT_MS: "1500" }
  key = (await cliAccount(env, { owner: "Wire", plan: "custom", custom: ["--rpm", "unlimited"], environments: ["sandbox"] })).keys.sandbox
  server = await startServer(env)
}, 60_000)
afterAll(async () => {
  if (server?.child.exitCode === null) await server.stop("SIGKILL")
})

/** Writes the bytes and reads until the server closes; write errors after an early answer are expected. */
const send = (bytes: Buffer) =>
  new Promise<Buffer>((resolve, reject) => {
    const { hostname, port } = new URL(server.sandboxUrl)
    const socket = Net.connect(Number(port), hostname === "localhost" ? "127.0.0.1" : hostname)
    const chunks: Array<Buffer> = []
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")))
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (chunks.length === 0 && error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error)
    })
    socket.on("close", () => resolve(Buffer.concat(chunks)))
    // no half-close: Node's server drops a request whose client has ended its side
    socket.write(bytes)
  })

/** The first response in the bytes: status, headers and body (fixed length or chunked). */
const parseResponse = (bytes: Buffer) => {
  const text = bytes.toString("utf8")
  const split = text.indexOf("\r\n\r\n")
  expect(split, `an HTTP answer, got ${JSON.stringify(text.slice(0, 200))}`).toBeGreaterThan(0)
  const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n")
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]))
  let body = text.slice(split + 4)
  if (headers.get("transfer-encoding") === "chunked") {
    let decoded = ""
    for (let rest = body; ;) {
      const size = parseInt(rest.slice(0, rest.indexOf("\r\n")), 16)
      if (!(size > 0)) break
      const start = rest.indexOf("\r\n") + 2
      decoded += rest.slice(start, start + size)
      rest = rest.slice(start + size + 2)
    }
    body = decoded
  } else if (headers.has("content-length")) {
    body = body.slice(0, Number(headers.get("content-length")))
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body }
}

const usage = async () => {
  const res = await fetch(`${server.sandboxUrl}/v2/usage`, { headers: { "x-api-key": key } })
  const { data } = (await res.json()) as any
  return [data.plateQueries.used, data.moduleQueries.used, data.uniquePlates.used]
}

/** A request's hostile traits, described compactly (the bytes are built from it). */
interface Hostile {
  readonly target: "modules" | "vehicle"
  readonly contentType: string | undefined
  readonly body: { readonly kind: "valid" | "deep" | "oversized" | "invalid-utf8" | "random"; readonly size: number; readonly seed: number }
  readonly declaredLength: "exact" | "longer" | "chunked"
  readonly headers: { readonly count: number; readonly bigValueBytes: number }
}

const validBody = Buffer.from(JSON.stringify({ modules: ["fines"] }))

const bodyBytes = ({ kind, seed, size }: Hostile["body"]) => {
  switch (kind) {
    case "valid":
      return validBody
    case "deep":
      return Buffer.from(`{"modules":["fines"],"x":${"[".repeat(size)}${"]".repeat(size)}}`)
    case "oversized":
      return Buffer.alloc(size, 0x61)
    case "invalid-utf8":
      return Buffer.concat([Buffer.from(`{"modules":["fi`), Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80, 0xff]), Buffer.from(`nes"]}`)])
    case "random":
      return Buffer.from(Array.from({ length: size }, (_, i) => (seed * 31 + i * 17) % 256))
  }
}

const contentType = fc.oneof(
  fc.constantFrom(undefined, "application/json", "application/json; charset=utf-8", "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded", "text/plain", "application/xml", "application/json; charset=latin1", "*/*", "", "application/json\u0000"),
  fc.string({ unit: "binary-ascii", maxLength: 30 })
)
const body = fc.oneof(
  fc.record({ kind: fc.constant("valid" as const), size: fc.constant(0), seed: fc.constant(0) }),
  fc.record({ kind: fc.constant("deep" as const), size: fc.integer({ min: 33, max: 20_000 }), seed: fc.constant(0) }),
  fc.record({ kind: fc.constant("oversized" as const), size: fc.integer({ min: 64 * 1024 + 1, max: 1536 * 1024 }), seed: fc.constant(0) }),
  fc.record({ kind: fc.constant("invalid-utf8" as const), size: fc.constant(0), seed: fc.constant(0) }),
  fc.record({ kind: fc.constant("random" as const), size: fc.integer({ min: 0, max: 200 }), seed: fc.nat() })
)
const headers = fc.oneof(
  fc.constant({ count: 0, bigValueBytes: 0 }),
  fc.record({ count: fc.integer({ min: 1, max: 3_000 }), bigValueBytes: fc.constant(0) }),
  fc.record({ count: fc.constant(0), bigValueBytes: fc.integer({ min: 1, max: 40 * 1024 }) })
)
const hostile: fc.Arbitrary<Hostile> = fc.record({
  target: fc.constantFrom("modules" as const, "vehicle" as const),
  contentType,
  body,
  declaredLength: fc.constantFrom("exact" as const, "longer" as const, "chunked" as const),
  headers
})

const encode = (h: Hostile) => {
  const method = h.target === "modules" ? "POST" : "GET"
  const path = h.target === "modules" ? "/v2/vehicles/AB123CD/modules" : "/v2/vehicles/AB123CD"
  const head = [`${method} ${path} HTTP/1.1`, "Host: vda.test", `x-api-key: ${key}`, "Connection: close"]
  if (h.contentType !== undefined) head.push(`Content-Type: ${h.contentType}`)
  for (let i = 0; i < h.headers.count; i++) head.push(`x-flood-${i}: 1`)
  if (h.headers.bigValueBytes > 0) head.push(`x-big: ${"a".repeat(h.headers.bigValueBytes)}`)
  const payload = bodyBytes(h.body)
  if (h.declaredLength === "chunked") {
    head.push("Transfer-Encoding: chunked")
    const framed = payload.length === 0
      ? Buffer.from("0\r\n\r\n")
      : Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from("\r\n0\r\n\r\n")])
    return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), framed])
  }
  head.push(`Content-Length: ${payload.length + (h.declaredLength === "longer" ? 10 : 0)}`)
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), payload])
}

describe("fuzzing on the wire", () => {
  it("hostile bytes on metered routes: one complete answer each; a refusal in the contract's shape, consuming nothing", async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (h) => {
        const label = JSON.stringify(h)
        const before = await usage()
        const answer = parseResponse(await send(encode(h)))
        expect(answer.status, label).not.toBe(500)
        expect(answer.status, label).toBeLessThan(500)
        if (answer.status < 400) return
        const error = expectErrorBody(answer.body, answer.headers.get("x-request-id"), label)
        expect(error.retryable, label).toBe(answer.status === 408)
        expect(await usage(), label).toEqual(before)
      }),
      { numRuns: RUNS }
    )
  }, 240_000)

  it("meanwhile the server answers a well-formed request", async () => {
    // a plate the fuzz never used: a valid fuzzed request on AB123CD may have left an active operation, which is reused (200)
    const res = await fetch(`${server.sandboxUrl}/v2/vehicles/AC456DE/modules`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: validBody
    })
    expect(res.status).toBe(202)
  })
})
