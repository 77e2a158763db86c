/**
 * The plate as operators' tools may see it: a keyed hash (HMAC-SHA256 with PLATE_HASH_SALT,
 * 20 hex characters). Stable for a plate, so an operator who knows a plate can compute its hash
 * (`vda plates hash`) and search for it, while workflow ids, search attributes and logs never
 * hold the plate itself.
 */
import { createHmac } from "node:crypto"
import { Redacted } from "effect"

export const plateHash = (salt: Redacted.Redacted<string>, plate: string) =>
  createHmac("sha256", Redacted.value(salt)).update(plate.toUpperCase()).digest("hex").slice(0, 20)
