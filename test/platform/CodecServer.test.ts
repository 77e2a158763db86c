/**
 * The codec endpoint for the Temporal UI: decode and encode in Temporal's remote-codec JSON, CORS
 * for the UI's origin only, its token (as a bearer, or as the endpoint's first path segment for
 * the UI), and refusals that say nothing internal.
 */
import { defaultPayloadConverter, type Payload } from "@temporalio/common"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startCodecServer } from "../../src/platform/temporal/CodecServer.js"
import { makeAesGcmCodec, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"

const codec = makeAesGcmCodec(parseKeyRing(`k1:${Buffer.alloc(32, "k").toString("base64")}`))
const UI = "http://localhost:8233"
const TOKEN = "s3cret-token"
const BEARER = { authorization: `Bearer ${TOKEN}` }
let open: Awaited<ReturnType<typeof startCodecServer>>

beforeAll(async () => {
  open = await startCodecServer({ codec, host: "127.0.0.1", port: 0, corsOrigins: [UI], token: TOKEN })
})
afterAll(async () => {
  await open?.close()
})

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString("base64")])),
  data: Buffer.from(p.data ?? []).toString("base64")
})
const post = (server: { port: number }, path: string, body: string, headers: Record<string, string> = BEARER) =>
  fetch(`http://127.0.0.1:${server.port}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

describe("the codec endpoint", () => {
  it("decodes what the codec encoded, and encodes", async () => {
    const encoded = await codec.encode([defaultPayloadConverter.toPayload({ plate: "AB123CD" })])
    const res = await post(open, "/decode", JSON.stringify({ payloads: encoded.map(toJson) }))
    expect(res.status).toBe(200)
    const { payloads } = await res.json() as { payloads: Array<{ metadata: Record<string, string>; data: string }> }
    expect(JSON.parse(Buffer.from(payloads[0]!.data, "base64").toString("utf8"))).toEqual({ plate: "AB123CD" })
    expect(Buffer.from(payloads[0]!.metadata.encoding!, "base64").toString()).toBe("json/plain")

    const again = await post(open, "/encode", JSON.stringify({ payloads }))
    const reencoded = (await again.json() as { payloads: Array<{ metadata: Record<string, string> }> }).payloads
    expect(Buffer.from(reencoded[0]!.metadata.encoding!, "base64").toString()).toBe("binary/encrypted")
  })

  it("answers the UI's preflight, and no other origin", async () => {
    const allowed = await fetch(`http://127.0.0.1:${open.port}/decode`, { method: "OPTIONS", headers: { origin: UI } })
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get("access-control-allow-origin")).toBe(UI)
    expect(allowed.headers.get("access-control-allow-headers")).toContain("X-Namespace")
    const other = await fetch(`http://127.0.0.1:${open.port}/decode`, { method: "OPTIONS", headers: { origin: "https://evil.example" } })
    expect(other.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("refuses callers without its token", async () => {
    const body = JSON.stringify({ payloads: [] })
    for (const [path, headers] of [
      ["/decode", {}],
      ["/decode", { authorization: "Bearer wrong" }],
      ["/decode", { authorization: TOKEN }],
      ["/wrong/decode", {}],
      ["/wrong/encode", BEARER],
      [`/${TOKEN}x/decode`, {}]
    ] as const) {
      const res = await post(open, path, body, headers)
      expect(res.status, path).toBe(401)
      expect(await res.json()).toEqual({ error: { message: "a valid token is required (Authorization: Bearer, or the endpoint's first path segment)" } })
    }
    expect((await post(open, "/decode", body)).status).toBe(200)
  })

  it("takes the token as the endpoint's first path segment, as the UI calls it, preflight included", async () => {
    const encoded = await codec.encode([defaultPayloadConverter.toPayload({ plate: "AB123CD" })])
    const preflight = await fetch(`http://127.0.0.1:${open.port}/${TOKEN}/decode`, { method: "OPTIONS", headers: { origin: UI } })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe(UI)
    const res = await post(open, `/${TOKEN}/decode`, JSON.stringify({ payloads: encoded.map(toJson) }), { origin: UI })
    expect(res.status).toBe(200)
    expect(res.headers.get("access-control-allow-origin")).toBe(UI)
    const { payloads } = await res.json() as { payloads: Array<{ data: string }> }
    expect(JSON.parse(Buffer.from(payloads[0]!.data, "base64").toString("utf8"))).toEqual({ plate: "AB123CD" })
    expect((await post(open, `/${TOKEN}/elsewhere`, "{}", {})).status).toBe(404)
  })

  it("refuses bad requests with a plain message: malformed, wrong shape, undecryptable, too large, unknown, wrong method", async () => {
    const cases: Array<[Promise<Response>, number]> = [
      [post(open, "/decode", "{not json"), 400],
      [post(open, "/decode", JSON.stringify({ payload: [] })), 400],
      [post(open, "/decode", JSON.stringify({ payloads: [{ metadata: { encoding: Buffer.from("binary/encrypted").toString("base64") }, data: "AAAA" }] })), 400],
      [post(open, "/decode", "x".repeat(5 * 1024 * 1024)), 413],
      [post(open, "/elsewhere", "{}"), 404],
      [post(open, `/a/${TOKEN}/decode`, "{}"), 404],
      [fetch(`http://127.0.0.1:${open.port}/decode`), 405]
    ]
    for (const [response, status] of cases) {
      const res = await response
      expect(res.status).toBe(status)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({ error: { message: expect.any(String) } })
      expect(text).not.toMatch(/at .*\.ts|\/work\/|node_modules|k1:/)
    }
  })
})
