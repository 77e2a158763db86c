/**
 * Identifiers and secrets: ULIDs for resources, base62 for secrets, SHA-256 for stored key hashes.
 */
import * as Crypto from "node:crypto"
import { Clock, Effect } from "effect"

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random bytes drawn from a pool refilled 4 KiB at a time: one id per request is on the hot path.
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

// An id is written here a byte at a time, then read as one string: built by concatenation, its 26
// characters cost as many strings (about 0.7 KB and twice the time per id).
const CROCKFORD_CODES = Buffer.from(CROCKFORD, "latin1")
const idBytes = Buffer.alloc(26)

/** A ULID (26 characters, lexicographically sortable by creation time): 10 of time, 16 random. */
export const ulidAt = (millis: number): string => {
  let rest = millis
  for (let i = 9; i >= 0; i--) {
    idBytes[i] = CROCKFORD_CODES[rest % 32]!
    rest = Math.floor(rest / 32)
  }
  if (poolOffset + 16 > pool.length) {
    Crypto.randomFillSync(pool)
    poolOffset = 0
  }
  for (let i = 0; i < 16; i++) idBytes[10 + i] = CROCKFORD_CODES[pool[poolOffset + i]! % 32]!
  poolOffset += 16
  return idBytes.toString("latin1", 0, 26)
}

export const ulid: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, ulidAt)

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of Crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

/** One-shot: cheaper than a Hash object for a short value (an API key on every request). */
export const sha256Hex = (value: string): string => Crypto.hash("sha256", value, "hex")
