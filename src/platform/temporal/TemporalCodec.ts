/**
 * An AES-256-GCM payload codec, so Temporal histories hold no personal data in clear. The key id
 * travels in each payload's metadata, so keys rotate: the first key of the ring encrypts, every
 * key of the ring decrypts.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import type { Payload, PayloadCodec } from "@temporalio/common"
// a CommonJS package without statically detectable named exports: loaded whole when external to the bundle
import proto from "@temporalio/proto"

export const ENCODING = "binary/encrypted"
export const METADATA_ENCODING = "encoding"
export const METADATA_KEY_ID = "encryption-key-id"

const IV_BYTES = 12
const TAG_BYTES = 16

export interface KeyRing {
  readonly current: { readonly id: string; readonly key: Buffer }
  readonly keys: ReadonlyMap<string, Buffer>
}

/** `keyId:base64key[,keyId:base64key…]`: each key 32 bytes; the first one encrypts. */
export const parseKeyRing = (text: string): KeyRing => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  if (entries.length === 0) throw new Error("the key ring is empty: expected keyId:base64key[,keyId:base64key…]")
  const keys = new Map<string, Buffer>()
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(":")
    const id = colon < 0 ? "" : entry.slice(0, colon)
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new Error(`key ${index + 1}: the key id must be 1-64 characters of A-Z a-z 0-9 . _ -`)
    const encoded = entry.slice(colon + 1)
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new Error(`key "${id}": not base64`)
    const key = Buffer.from(encoded, "base64")
    if (key.length !== 32) throw new Error(`key "${id}": must decode to 32 bytes, got ${key.length}`)
    if (keys.has(id)) throw new Error(`key "${id}" appears twice`)
    keys.set(id, key)
  }
  const [firstId] = keys.keys()
  return { current: { id: firstId!, key: keys.get(firstId!)! }, keys }
}

const utf8 = (text: string) => new TextEncoder().encode(text)
const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString("utf8") : undefined)

export const makeAesGcmCodec = (ring: KeyRing): PayloadCodec => ({
  encode: async (payloads) =>
    payloads.map((payload): Payload => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", ring.current.key, iv)
      const clear = proto.temporal.api.common.v1.Payload.encode(payload).finish()
      const sealed = Buffer.concat([iv, cipher.update(clear), cipher.final(), cipher.getAuthTag()])
      return {
        metadata: { [METADATA_ENCODING]: utf8(ENCODING), [METADATA_KEY_ID]: utf8(ring.current.id) },
        data: new Uint8Array(sealed)
      }
    }),
  decode: async (payloads) =>
    payloads.map((payload): Payload => {
      if (text(payload.metadata?.[METADATA_ENCODING]) !== ENCODING) return payload
      const id = text(payload.metadata?.[METADATA_KEY_ID]) ?? ""
      const key = ring.keys.get(id)
      if (key === undefined) throw new Error(`no key "${id}" in the key ring to decrypt this payload`)
      const data = Buffer.from(payload.data ?? new Uint8Array())
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, data.subarray(0, IV_BYTES))
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
        const clear = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()])
        return proto.temporal.api.common.v1.Payload.decode(clear)
      } catch {
        throw new Error(`a payload encrypted with key "${id}" could not be decrypted (tampered, or another key with that id)`)
      }
    })
})
