/**
 * The AES-256-GCM payload codec: what leaves the process holds no clear text, keys rotate through
 * the key id in each payload's metadata, tampering is detected, and bad key rings are refused
 * with messages that never contain key material.
 */
import { defaultPayloadConverter, type Payload } from "@temporalio/common"
import { describe, expect, it } from "vitest"
import { ENCODING, makeAesGcmCodec, METADATA_KEY_ID, parseKeyRing } from "../../src/platform/temporal/TemporalCodec.js"

const key = (seed: string) => Buffer.alloc(32, seed).toString("base64")
const OLD = `old-1:${key("a")}`
const NEW = `new-2:${key("b")}`
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString("utf8")

const clear = [
  defaultPayloadConverter.toPayload({ operationId: "op_1", plate: "AB123CD", owner: "Juana Pérez" }),
  defaultPayloadConverter.toPayload("AB123CD"),
  defaultPayloadConverter.toPayload(null)
]

describe("the payload codec", () => {
  it("encrypts every payload: no clear text, the key id and encoding in the metadata; decoding gives them back", async () => {
    const codec = makeAesGcmCodec(parseKeyRing(`${NEW},${OLD}`))
    const encoded = await codec.encode(clear)
    for (const payload of encoded) {
      expect(text(payload.metadata?.encoding)).toBe(ENCODING)
      expect(text(payload.metadata?.[METADATA_KEY_ID])).toBe("new-2")
      expect(Buffer.from(payload.data!).toString("latin1")).not.toContain("AB123CD")
      expect(Buffer.from(payload.data!).toString("latin1")).not.toContain("json/plain")
    }
    const decoded = await codec.decode(encoded)
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { operationId: "op_1", plate: "AB123CD", owner: "Juana Pérez" },
      "AB123CD",
      null
    ])
  })

  it("the same value encrypts differently every time (a fresh IV)", async () => {
    const codec = makeAesGcmCodec(parseKeyRing(NEW))
    const [a] = await codec.encode([clear[1]!])
    const [b] = await codec.encode([clear[1]!])
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false)
  })

  it("rotation: payloads written under the old key still decode once a new key comes first", async () => {
    const before = await makeAesGcmCodec(parseKeyRing(OLD)).encode(clear)
    const after = makeAesGcmCodec(parseKeyRing(`${NEW},${OLD}`))
    expect((await after.decode(before)).map((p) => defaultPayloadConverter.fromPayload(p))[1]).toBe("AB123CD")
    expect(text((await after.encode([clear[1]!]))[0]!.metadata?.[METADATA_KEY_ID])).toBe("new-2")
  })

  it("a payload whose key is no longer in the ring fails, naming the key id", async () => {
    const written = await makeAesGcmCodec(parseKeyRing(OLD)).encode([clear[1]!])
    await expect(makeAesGcmCodec(parseKeyRing(NEW)).decode(written)).rejects.toThrow(/no key "old-1"/)
  })

  it("a payload changed by one byte is refused", async () => {
    const codec = makeAesGcmCodec(parseKeyRing(NEW))
    const [payload] = await codec.encode([clear[0]!])
    const data = Buffer.from(payload!.data!)
    data[20] = data[20]! ^ 1
    const tampered: Payload = { ...payload, data: new Uint8Array(data) }
    await expect(codec.decode([tampered])).rejects.toThrow(/could not be decrypted/)
  })

  it("payloads that were never encrypted pass through unchanged", async () => {
    const codec = makeAesGcmCodec(parseKeyRing(NEW))
    expect(await codec.decode(clear)).toEqual(clear)
  })
})

describe("parsing the key ring", () => {
  const secret = key("z")
  it.each([
    ["", /empty/],
    [`:${secret}`, /key id/],
    [`bad id!:${secret}`, /key id/],
    [`k1:${Buffer.alloc(16, "z").toString("base64")}`, /32 bytes, got 16/],
    ["k1:not base64 at all!", /not base64/],
    [`k1:${secret},k1:${key("y")}`, /appears twice/]
  ])("refuses %j", (ring, message) => {
    let thrown: Error | undefined
    try {
      parseKeyRing(ring)
    } catch (error) {
      thrown = error as Error
    }
    expect(thrown?.message).toMatch(message)
    expect(thrown?.message).not.toContain(secret)
  })

  it("the first key encrypts; every key decrypts", () => {
    const ring = parseKeyRing(` ${NEW} , ${OLD} `)
    expect(ring.current.id).toBe("new-2")
    expect([...ring.keys.keys()]).toEqual(["new-2", "old-1"])
  })
})
