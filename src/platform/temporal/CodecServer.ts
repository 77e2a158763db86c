/**
 * The codec endpoint of Temporal's remote-codec protocol (`POST /encode`, `POST /decode`, JSON
 * `{payloads:[{metadata:{k: base64}, data: base64}]}`), so the Temporal UI and CLI can show
 * encrypted payloads to operators. Only the configured browser origins may call it, and only
 * callers that present its token: `Authorization: Bearer <token>` (the CLI's `--codec-auth`), or
 * the token as the endpoint's first path segment, `/<token>/decode` (the UI, which cannot send a
 * header of its own, is given `http://host:port/<token>` as its endpoint).
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
  readonly token: string
}

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

export const startCodecServer = async (options: CodecServerOptions) => {
  /** The operation asked for, and whether the path carried the token. */
  const route = (url: string) => {
    const segments = (url.split("?")[0] ?? "/").split("/").filter((segment) => segment.length > 0)
    const operation = segments.at(-1)
    if ((operation !== "encode" && operation !== "decode") || segments.length > 2) return undefined
    return { operation, pathToken: segments.length === 2 ? segments[0]! : undefined }
  }
  const authorized = (pathToken: string | undefined, header: string | undefined) =>
    pathToken !== undefined ? sameSecret(pathToken, options.token) : sameSecret(header ?? "", `Bearer ${options.token}`)

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
    const found = route(request.url ?? "/")
    if (found === undefined) return reply(404, { error: { message: "not found" } })
    if (request.method === "OPTIONS") {
      if (origin !== undefined && options.corsOrigins.includes(origin)) {
        response.setHeader("access-control-allow-methods", "POST, OPTIONS")
        response.setHeader("access-control-allow-headers", "Content-Type, Authorization, X-Namespace")
      }
      response.writeHead(204).end()
      return
    }
    if (request.method !== "POST") return reply(405, { error: { message: "method not allowed" } })
    if (!authorized(found.pathToken, request.headers.authorization)) {
      return reply(401, { error: { message: "a valid token is required (Authorization: Bearer, or the endpoint's first path segment)" } })
    }
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
      const run = found.operation === "encode" ? options.codec.encode(payloads) : options.codec.decode(payloads)
      run.then(
        (result) => reply(200, { payloads: result.map(toJson) }),
        () => reply(400, { error: { message: `the payloads could not be ${found.operation}d` } })
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
