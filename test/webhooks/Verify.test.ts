/**
 * Webhook signatures against known vectors computed independently of the code under test (with
 * the openssl command line), and the verifier's refusals: wrong secret, changed or re-serialized
 * body, missing headers, malformed or out-of-tolerance timestamps, and signatures that are not
 * exactly `v1=` + lowercase hex. Which of the two went wrong, the signature or its time, and
 * several secrets at once (a rotation).
 */
import { describe, expect, it } from "vitest"
import { signWebhook, verifyWebhookSignature, webhookSignatureProblem } from "../../src/webhooks/verify.js"

const SECRET = "whsec_test"
const TIMESTAMP = "1700000000"
/** "Now" at exactly the timestamp, in milliseconds. */
const AT = Number(TIMESTAMP) * 1000
const seconds = (s: number) => s * 1000

const BODY = "{\"id\":\"evt_1\"}"
// printf '%s' '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec_test' -hex
const BODY_VECTOR = "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"

/** The same JSON object as BODY, serialized with a space after the colon. */
const RESERIALIZED_BODY = "{\"id\": \"evt_1\"}"
// printf '%s' '1700000000.{"id": "evt_1"}' | openssl dgst -sha256 -hmac 'whsec_test' -hex
const RESERIALIZED_VECTOR = "a0c091828640f0b68061abc7c03981ad1100ff7160c5dba6b656239494a2b537"

const UTF8_BODY = "{\"owner\":\"Peña\"}"
// printf '%s' '1700000000.{"owner":"Peña"}' | openssl dgst -sha256 -hmac 'whsec_test' -hex
// (in a C.UTF-8 shell: the ñ is the two bytes c3 b1, as `| xxd` confirms)
const UTF8_VECTOR = "93448a690c9e282d64dddd95eda30bd38e710a8e9f22486137f504f988bb861e"

/** Bytes that are not valid UTF-8, so they only survive as a Uint8Array. */
const BINARY_BODY = new Uint8Array([0x00, 0x01, 0x02, 0xff, 0xfe])
// printf '1700000000.\x00\x01\x02\xff\xfe' | openssl dgst -sha256 -hmac 'whsec_test' -hex
const BINARY_VECTOR = "923c871a74482e58c1e2b9b271a8e95e2e9b2e25e8f9cf76afe67b96d12a8bd0"

// printf '%s' '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec_other' -hex
const OTHER_SECRET_VECTOR = "d8d091c76b586cff4dbd317fc47ebddff4b86de3ce18d3c03753c3c1901d475a"

const verify = (overrides: Partial<Parameters<typeof verifyWebhookSignature>[0]> = {}) =>
  verifyWebhookSignature({
    secret: SECRET,
    rawBody: BODY,
    signature: `v1=${BODY_VECTOR}`,
    timestamp: TIMESTAMP,
    now: AT,
    ...overrides
  })

describe("signWebhook matches independently computed vectors", () => {
  it("an ASCII JSON body", () => {
    expect(signWebhook(SECRET, TIMESTAMP, BODY)).toBe(`v1=${BODY_VECTOR}`)
    expect(signWebhook("whsec_other", TIMESTAMP, BODY)).toBe(`v1=${OTHER_SECRET_VECTOR}`)
    expect(signWebhook(SECRET, TIMESTAMP, RESERIALIZED_BODY)).toBe(`v1=${RESERIALIZED_VECTOR}`)
  })

  it("a non-ASCII body is signed as UTF-8", () => {
    expect(signWebhook(SECRET, TIMESTAMP, UTF8_BODY)).toBe(`v1=${UTF8_VECTOR}`)
    // its UTF-8 bytes sign the same; its Latin-1 bytes do not
    expect(signWebhook(SECRET, TIMESTAMP, new TextEncoder().encode(UTF8_BODY))).toBe(`v1=${UTF8_VECTOR}`)
    expect(signWebhook(SECRET, TIMESTAMP, Buffer.from(UTF8_BODY, "latin1"))).not.toBe(`v1=${UTF8_VECTOR}`)
  })

  it("a Uint8Array body is signed byte for byte", () => {
    expect(signWebhook(SECRET, TIMESTAMP, BINARY_BODY)).toBe(`v1=${BINARY_VECTOR}`)
    expect(signWebhook(SECRET, TIMESTAMP, new TextEncoder().encode(BODY))).toBe(`v1=${BODY_VECTOR}`)
  })

  it("the signature is v1= and 64 lowercase hex digits", () => {
    expect(signWebhook(SECRET, TIMESTAMP, BODY)).toMatch(/^v1=[0-9a-f]{64}$/)
  })
})

describe("verifyWebhookSignature accepts", () => {
  it("the right signature at the timestamp", () => {
    expect(verify()).toBe(true)
  })

  it("the right signature within the default tolerance of 300 s, either side", () => {
    expect(verify({ now: AT + seconds(299) })).toBe(true)
    expect(verify({ now: AT + seconds(300) })).toBe(true)
    expect(verify({ now: AT + seconds(300) + 999 })).toBe(true) // now is counted in whole seconds
    expect(verify({ now: AT - seconds(300) })).toBe(true)
  })

  it("a UTF-8 body, as a string or as its bytes", () => {
    expect(verify({ rawBody: UTF8_BODY, signature: `v1=${UTF8_VECTOR}` })).toBe(true)
    expect(verify({ rawBody: Buffer.from(UTF8_BODY, "utf8"), signature: `v1=${UTF8_VECTOR}` })).toBe(true)
  })

  it("a Uint8Array body", () => {
    expect(verify({ rawBody: BINARY_BODY, signature: `v1=${BINARY_VECTOR}` })).toBe(true)
  })

  it("against the real clock when now is not given", () => {
    const timestamp = String(Math.floor(Date.now() / 1000))
    const withoutNow = { secret: SECRET, rawBody: BODY, signature: signWebhook(SECRET, timestamp, BODY), timestamp }
    expect(verifyWebhookSignature(withoutNow)).toBe(true)
    expect(verifyWebhookSignature({ ...withoutNow, timestamp: TIMESTAMP, signature: `v1=${BODY_VECTOR}` })).toBe(false)
  })
})

describe("verifyWebhookSignature rejects", () => {
  it("the signature made with another secret", () => {
    expect(verify({ secret: "whsec_other" })).toBe(false)
    expect(verify({ signature: `v1=${OTHER_SECRET_VECTOR}` })).toBe(false)
    // and the other secret does accept its own
    expect(verify({ secret: "whsec_other", signature: `v1=${OTHER_SECRET_VECTOR}` })).toBe(true)
  })

  it("a body with one changed byte", () => {
    expect(verify({ rawBody: "{\"id\":\"evt_2\"}" })).toBe(false)
    expect(verify({ rawBody: "{\"owner\":\"Pena\"}", signature: `v1=${UTF8_VECTOR}` })).toBe(false)
    const changed = Uint8Array.from(BINARY_BODY)
    changed[4] = 0xff
    expect(verify({ rawBody: changed, signature: `v1=${BINARY_VECTOR}` })).toBe(false)
  })

  it("re-serialized JSON: the same object with different spacing", () => {
    expect(JSON.parse(RESERIALIZED_BODY)).toEqual(JSON.parse(BODY))
    expect(verify({ rawBody: RESERIALIZED_BODY })).toBe(false)
    expect(verify({ rawBody: JSON.stringify(JSON.parse(BODY), null, 2) })).toBe(false)
  })

  it("a missing signature or timestamp header", () => {
    expect(verify({ signature: undefined })).toBe(false)
    expect(verify({ timestamp: undefined })).toBe(false)
    expect(verify({ signature: "" })).toBe(false)
    expect(verify({ timestamp: "" })).toBe(false)
  })

  it("a timestamp that is not a plain number of seconds, even when the signature covers it", () => {
    for (const timestamp of ["abc", "1700000000.5", " 1700000000", "1700000000 ", "+1700000000", "1.7e9", "0x6553f100"]) {
      expect(verify({ timestamp, signature: signWebhook(SECRET, timestamp, BODY) }), timestamp).toBe(false)
    }
  })

  it("a timestamp older than the default tolerance of 300 s", () => {
    expect(verify({ now: AT + seconds(301) })).toBe(false)
    expect(verify({ now: AT + seconds(3600) })).toBe(false)
  })

  it("a timestamp too far in the future", () => {
    expect(verify({ now: AT - seconds(301) })).toBe(false)
    expect(verify({ now: AT - seconds(3600) })).toBe(false)
  })

  it("a signature without the v1= prefix", () => {
    expect(verify({ signature: BODY_VECTOR })).toBe(false)
    expect(verify({ signature: `v0=${BODY_VECTOR}` })).toBe(false)
    expect(verify({ signature: `V1=${BODY_VECTOR}` })).toBe(false)
  })

  it("an uppercase-hex signature", () => {
    expect(verify({ signature: `v1=${BODY_VECTOR.toUpperCase()}` })).toBe(false)
  })

  it("a truncated or padded signature", () => {
    expect(verify({ signature: `v1=${BODY_VECTOR.slice(0, -1)}` })).toBe(false)
    expect(verify({ signature: `v1=${BODY_VECTOR}0` })).toBe(false)
    expect(verify({ signature: ` v1=${BODY_VECTOR}` })).toBe(false)
  })
})

describe("a custom toleranceSeconds", () => {
  it("narrows the window", () => {
    expect(verify({ toleranceSeconds: 60, now: AT + seconds(60) })).toBe(true)
    expect(verify({ toleranceSeconds: 60, now: AT + seconds(61) })).toBe(false)
    expect(verify({ toleranceSeconds: 60, now: AT - seconds(61) })).toBe(false)
    expect(verify({ toleranceSeconds: 0, now: AT + 999 })).toBe(true)
    expect(verify({ toleranceSeconds: 0, now: AT + seconds(1) })).toBe(false)
  })

  it("widens the window", () => {
    expect(verify({ toleranceSeconds: 3600, now: AT + seconds(3600) })).toBe(true)
    expect(verify({ toleranceSeconds: 3600, now: AT - seconds(3600) })).toBe(true)
    expect(verify({ toleranceSeconds: 3600, now: AT + seconds(3601) })).toBe(false)
  })
})

describe("webhookSignatureProblem tells which check failed", () => {
  const problem = (overrides: Partial<Parameters<typeof webhookSignatureProblem>[0]> = {}) =>
    webhookSignatureProblem({ secret: SECRET, rawBody: BODY, signature: `v1=${BODY_VECTOR}`, timestamp: TIMESTAMP, now: AT, ...overrides })

  it("none, for a right signature in time", () => {
    expect(problem()).toBeUndefined()
  })

  it("the timestamp: missing, not Unix seconds, or out of the window with a right signature", () => {
    expect(problem({ timestamp: undefined })).toBe("timestamp")
    expect(problem({ timestamp: "", signature: signWebhook(SECRET, "", BODY) })).toBe("timestamp")
    expect(problem({ timestamp: "1.7e9", signature: signWebhook(SECRET, "1.7e9", BODY) })).toBe("timestamp")
    expect(problem({ now: AT + seconds(301) })).toBe("timestamp")
    expect(problem({ now: AT - seconds(301) })).toBe("timestamp")
  })

  it("the signature: missing, or not this secret's for this body and timestamp, whatever the time", () => {
    expect(problem({ signature: undefined })).toBe("signature")
    expect(problem({ secret: "whsec_other" })).toBe("signature")
    expect(problem({ rawBody: RESERIALIZED_BODY })).toBe("signature")
    // a forgery is a forgery, also when its timestamp is stale
    expect(problem({ secret: "whsec_other", now: AT + seconds(3600) })).toBe("signature")
  })
})

describe("several secrets (a rotation)", () => {
  it("a signature by any of them is accepted", () => {
    expect(verify({ secret: ["whsec_other", SECRET] })).toBe(true)
    expect(verify({ secret: [SECRET, "whsec_other"] })).toBe(true)
    expect(verify({ secret: ["whsec_other", SECRET], signature: `v1=${OTHER_SECRET_VECTOR}` })).toBe(true)
  })

  it("a signature by none of them, or no secret at all, is refused", () => {
    expect(verify({ secret: ["whsec_other", "whsec_third"] })).toBe(false)
    expect(verify({ secret: [] })).toBe(false)
  })
})
