/**
 * Webhook signatures, for the service (signing) and for integrators (verifying), with no
 * dependencies but node:crypto: `import { verifyWebhookSignature } from "vehicle-data-api/webhooks"`.
 *
 *   x-service-timestamp: Unix seconds, as text
 *   x-service-signature: v1=<lowercase hex HMAC-SHA256 of `${timestamp}.${rawBody}`, keyed by the secret>
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + rawBody` (both UTF-8) with the webhook secret. */
export const signWebhook = (secret: string, timestamp: string, rawBody: string | Uint8Array): string => {
  const hmac = createHmac("sha256", secret)
  hmac.update(`${timestamp}.`, "utf8")
  hmac.update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody)
  return `v1=${hmac.digest("hex")}`
}

export interface VerifyWebhookOptions {
  /** The webhook secret (`whsec_…`), current or the one before a rotation. */
  readonly secret: string
  /** The request body exactly as received: never re-serialized JSON. */
  readonly rawBody: string | Uint8Array
  /** The `x-service-signature` header. */
  readonly signature: string | undefined
  /** The `x-service-timestamp` header, as received. */
  readonly timestamp: string | undefined
  /** How old (or early) a timestamp may be, against replays. Default 300 s. */
  readonly toleranceSeconds?: number
  /** Now, in milliseconds (for tests). */
  readonly now?: number
}

/** True when the signature is the secret's signature of this body and timestamp, in time. */
export const verifyWebhookSignature = (options: VerifyWebhookOptions): boolean => {
  const { rawBody, secret, signature, timestamp } = options
  if (signature === undefined || timestamp === undefined || !/^\d+$/.test(timestamp)) return false
  const tolerance = options.toleranceSeconds ?? 300
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  if (Math.abs(now - Number(timestamp)) > tolerance) return false
  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), "utf8")
  const received = Buffer.from(signature, "utf8")
  return expected.length === received.length && timingSafeEqual(expected, received)
}
