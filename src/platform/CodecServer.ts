/**
 * The codec endpoint of Temporal's remote-codec protocol (`POST /encode`, `POST /decode`, JSON
 * `{payloads:[{metadata:{k: base64}, data: base64}]}`), so the Temporal UI and CLI can show
 * encrypted payloads to operators. Only the configured browser origins may call it, and with a
 * token set only callers that present it.
 */
import { timingSafeEqual } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Payload, PayloadCodec } from "@temporalio/common"

const MAX_BODY_BYTES = 4 * 1024 * 1024

interface JsonPayload {
  readonly metadata?: Record<string, string>
  readonly data?: string
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, "base64"))])),
  data: new Uint8Array(Buffer.from(p.data ?? "", "base64"))
})

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString("base64")])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString("base64")
})

const isPayloadList = (body: unknown): body is { payloads: Array<JsonPayload> } =>
  typeof body === "object" && body !== null && Array.isArray((body as { payloads?: unknown }).payloads) &&
  (body as { payloads: Array<unknown> }).payloads.every((p) =>
    typeof p === "object" && p !== null &&
    (((p as JsonPayload).data ?? "") === "" || typeof (p as JsonPayload).data === "string") &&
    Object.values((p as JsonPayload).metadata ?? {}).every((v) => typeof v === "string")
  )

export interface CodecServerOptions {
  readonly codec: PayloadCodec
  readonly host: string
  readonly port: number
  readonly corsOrigins: ReadonlyArray<string>
  readonly token?: string | undefined
}

export const startCodecServer = async (options: CodecServerOptions) => {
  const authorized = (header: string | undefined) => {
    if (options.token === undefined) return true
    const expected = Buffer.from(`Bearer ${options.token}`)
    const given = Buffer.from(header ?? "")
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  const server = Http.createServer((request, response) => {
    const origin = request.headers.origin
    if (origin !== undefined && options.corsOrigins.includes(origin)) {
      response.setHeader("access-control-allow-origin", origin)
      response.setHeader("access-control-allow-credentials", "true")
      response.setHeader("vary", "Origin")
    }
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    const path = (request.url ?? "/").split("?")[0]
    if (path !== "/encode" && path !== "/decode") return reply(404, { error: { message: "not found" } })
    if (request.method === "OPTIONS") {
      if (origin !== undefined && options.corsOrigins.includes(origin)) {
        response.setHeader("access-control-allow-methods", "POST, OPTIONS")
        response.setHeader("access-control-allow-headers", "Content-Type, Authorization, X-Namespace")
      }
      response.writeHead(204).end()
      return
    }
    if (request.method !== "POST") return reply(405, { error: { message: "method not allowed" } })
    if (!authorized(request.headers.authorization)) return reply(401, { error: { message: "a valid bearer token is required" } })
    const chunks: Array<Buffer> = []
    let size = 0
    let refused = false
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES && !refused) {
        refused = true
        reply(413, { error: { message: "the body is larger than 4 MiB" } })
        request.resume()
      } else if (!refused) chunks.push(chunk)
    })
    request.on("end", () => {
      if (refused) return
      let body: unknown
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return reply(400, { error: { message: "the body is not JSON" } })
      }
      if (!isPayloadList(body)) return reply(400, { error: { message: "expected {\"payloads\": [{\"metadata\": {…}, \"data\": \"…\"}]}" } })
      const payloads = body.payloads.map(fromJson)
      const run = path === "/encode" ? options.codec.encode(payloads) : options.codec.decode(payloads)
      run.then(
        (result) => reply(200, { payloads: result.map(toJson) }),
        () => reply(400, { error: { message: `the payloads could not be ${path === "/encode" ? "encoded" : "decoded"}` } })
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
