/**
 * Webhook signatures, for the service (signing) and for integrators (verifying), with no
 * dependencies but node:crypto: `import { verifyWebhookSignature } from "vehicle-data-api/webhooks"`.
 *
 *   x-service-timestamp: Unix seconds, as text
 *   x-service-signature: v1=<lowercase hex HMAC-SHA256 of `${timestamp}.${rawBody}`, keyed by the secret>
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/** The headers of every delivery. */
export const WEBHOOK_HEADERS = {
  signature: "x-service-signature",
  timestamp: "x-service-timestamp",
  /** `v2.<type>` or `v1.<event>` */
  event: "x-service-event",
  /** The event id without its `evt_` prefix. */
  delivery: "x-service-delivery"
} as const

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + rawBody` (both UTF-8) with the webhook secret. */
export const signWebhook = (secret: string, timestamp: string, rawBody: string | Uint8Array): string => {
  const hmac = createHmac("sha256", secret)
  hmac.update(`${timestamp}.`, "utf8")
  hmac.update(typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody)
  return `v1=${hmac.digest("hex")}`
}

export interface VerifyWebhookOptions {
  /**
   * The webhook secret (`whsec_…`), or several: during a rotation, the new one and the one before
   * it. A signature by any of them is accepted.
   */
  readonly secret: string | ReadonlyArray<string>
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

/**
 * What is wrong with a delivery's signature, or undefined when it holds: `"timestamp"` when the
 * timestamp is missing, not Unix seconds, or signed but out of the window; `"signature"` when no
 * secret signed this body at this timestamp. A forged signature is told as such whatever its time.
 */
export const webhookSignatureProblem = (options: VerifyWebhookOptions): "signature" | "timestamp" | undefined => {
  const { rawBody, signature, timestamp } = options
  if (timestamp === undefined || !/^\d+$/.test(timestamp)) return "timestamp"
  if (signature === undefined) return "signature"
  const received = Buffer.from(signature, "utf8")
  const secrets = typeof options.secret === "string" ? [options.secret] : options.secret
  const signed = secrets.some((secret) => {
    const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), "utf8")
    return expected.length === received.length && timingSafeEqual(expected, received)
  })
  if (!signed) return "signature"
  const tolerance = options.toleranceSeconds ?? 300
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  return Math.abs(now - Number(timestamp)) > tolerance ? "timestamp" : undefined
}

/** True when the signature is the secret's signature of this body and timestamp, in time. */
export const verifyWebhookSignature = (options: VerifyWebhookOptions): boolean => webhookSignatureProblem(options) === undefined
