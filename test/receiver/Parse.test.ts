/**
 * parseWebhookEvent's refusals, each with its exact reason: a forged or altered delivery
 * (`signature`), one out of its time (`timestamp`), an event this version does not know
 * (`unknown_event`), and a signed body that is not the event its header names (`malformed`);
 * which reason wins when several apply; the header forms a receiver may hold; and the Effect
 * variant, on the Clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import {
  parseWebhookEvent,
  parseWebhookEventEffect,
  type ReceivedWebhookEvent,
  WebhookEventError,
  type WebhookEventErrorReason
} from "../../src/receiver/index.js"
import { ModulesEvent, TestEvent } from "../../src/webhooks/Api.js"
import { signWebhook } from "../../src/webhooks/verify.js"

const SECRET = "whsec_parse"
const TIMESTAMP = "1700000000"
const AT = Number(TIMESTAMP) * 1000
const seconds = (s: number) => s * 1000

const BODY = JSON.stringify(Schema.encodeSync(TestEvent)({
  id: "evt_00000000-0000-4000-8000-000000000001",
  type: "webhook.test",
  apiVersion: "v2",
  createdAt: new Date(AT),
  data: { message: "hello" }
}))

const PLATE = "AB123CD"

const MODULES_BODY = JSON.stringify(Schema.encodeSync(ModulesEvent)({
  id: "evt_00000000-0000-4000-8000-000000000002",
  type: "modules.completed",
  apiVersion: "v2",
  createdAt: new Date(AT),
  data: { id: "op_1", kind: "modules", status: "completed", plate: PLATE, createdAt: new Date(AT), updatedAt: new Date(AT), modules: {} }
}))

/** A delivery as the service sends it, signed at TIMESTAMP; `headers` override or (undefined) remove. */
const delivery = (body: string | Uint8Array = BODY, headers: Record<string, string | undefined> = {}) => {
  const all: Record<string, string | undefined> = {
    "x-service-signature": signWebhook(SECRET, TIMESTAMP, body),
    "x-service-timestamp": TIMESTAMP,
    "x-service-event": "v2.webhook.test",
    "x-service-delivery": "00000000-0000-4000-8000-000000000001",
    ...headers
  }
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<string, string>
}

const parse = (body: string | Uint8Array = BODY, headers = delivery(body), secret: string | ReadonlyArray<string> = SECRET, now = AT) =>
  parseWebhookEvent(body, headers, secret, { now })

/** The error parse throws: its reason, and that it is the typed error. */
const refusal = (run: () => unknown): WebhookEventError => {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookEventError)
    expect(error).toBeInstanceOf(Error)
    return error as WebhookEventError
  }
  throw new Error("expected a refusal")
}
const reasonOf = (run: () => unknown): WebhookEventErrorReason => refusal(run).reason

describe("a delivery as the service sends it", () => {
  it("is taken: its event by name, its id, its body decoded", () => {
    const received: ReceivedWebhookEvent = parse()
    expect(received).toEqual({
      event: "v2.webhook.test",
      apiVersion: "v2",
      eventId: "evt_00000000-0000-4000-8000-000000000001",
      payload: {
        id: "evt_00000000-0000-4000-8000-000000000001",
        type: "webhook.test",
        apiVersion: "v2",
        createdAt: new Date(AT),
        data: { message: "hello" }
      }
    })
  })

  it("is taken as bytes too", () => {
    const bytes = new TextEncoder().encode(BODY)
    expect(parse(bytes).event).toBe("v2.webhook.test")
    expect(parse(Buffer.from(BODY, "utf8")).event).toBe("v2.webhook.test")
  })

  it("is taken with a field a later version of the service adds", () => {
    const later = JSON.stringify({ ...JSON.parse(BODY), livemode: true })
    expect(parse(later).payload).not.toHaveProperty("livemode")
  })

  it("is taken within the window either side, and a custom window applies", () => {
    expect(parse(BODY, delivery(), SECRET, AT + seconds(300)).event).toBe("v2.webhook.test")
    expect(parse(BODY, delivery(), SECRET, AT - seconds(300)).event).toBe("v2.webhook.test")
    expect(parseWebhookEvent(BODY, delivery(), SECRET, { now: AT + seconds(600), toleranceSeconds: 600 }).event).toBe("v2.webhook.test")
    expect(reasonOf(() => parseWebhookEvent(BODY, delivery(), SECRET, { now: AT + seconds(61), toleranceSeconds: 60 }))).toBe("timestamp")
  })
})

describe("signature: a delivery not signed by the secret", () => {
  it("without its signature header", () => {
    const error = refusal(() => parse(BODY, delivery(BODY, { "x-service-signature": undefined })))
    expect(error.reason).toBe("signature")
    expect(error.message).toBe("no x-service-signature header")
  })

  it("signed with another secret, or checked against another", () => {
    expect(reasonOf(() => parse(BODY, delivery(BODY, { "x-service-signature": signWebhook("whsec_other", TIMESTAMP, BODY) })))).toBe("signature")
    expect(reasonOf(() => parse(BODY, delivery(), "whsec_other"))).toBe("signature")
  })

  it("with a body changed after signing, by one byte or by re-serializing it", () => {
    const headers = delivery()
    expect(reasonOf(() => parse(BODY.replace("hello", "hellO"), headers))).toBe("signature")
    expect(reasonOf(() => parse(JSON.stringify(JSON.parse(BODY), null, 2), headers))).toBe("signature")
  })

  it("with a timestamp changed after signing", () => {
    expect(reasonOf(() => parse(BODY, delivery(BODY, { "x-service-timestamp": "1700000001" })))).toBe("signature")
  })

  it("with its signature header twice", () => {
    const signature = signWebhook(SECRET, TIMESTAMP, BODY)
    const twice = { ...delivery(), "x-service-signature": [signature, signature] }
    expect(reasonOf(() => parseWebhookEvent(BODY, twice, SECRET, { now: AT }))).toBe("signature")
  })

  it("is told before the event: a forgery naming an unknown event, or stale, is a forgery", () => {
    const forged = { "x-service-signature": signWebhook("whsec_other", TIMESTAMP, BODY) }
    expect(reasonOf(() => parse(BODY, delivery(BODY, { ...forged, "x-service-event": "v2.unknown" })))).toBe("signature")
    expect(reasonOf(() => parse(BODY, delivery(BODY, forged), SECRET, AT + seconds(3600)))).toBe("signature")
    expect(reasonOf(() => parse("not json", delivery(BODY, forged)))).toBe("signature")
  })
})

describe("several secrets (a rotation)", () => {
  it("a delivery signed by any of them is taken; by none, refused", () => {
    expect(parse(BODY, delivery(), ["whsec_new", SECRET]).event).toBe("v2.webhook.test")
    expect(parse(BODY, delivery(), [SECRET, "whsec_new"]).event).toBe("v2.webhook.test")
    expect(reasonOf(() => parse(BODY, delivery(), ["whsec_new", "whsec_newer"]))).toBe("signature")
  })

  it("no secret at all is a mistake of the caller, not a refusal of the delivery", () => {
    for (const secret of ["", [], [SECRET, ""]]) {
      expect(() => parse(BODY, delivery(), secret)).toThrow(TypeError)
    }
  })
})

describe("timestamp: a delivery out of its time", () => {
  it("without its timestamp header", () => {
    const error = refusal(() => parse(BODY, delivery(BODY, { "x-service-timestamp": undefined })))
    expect(error.reason).toBe("timestamp")
    expect(error.message).toBe("no x-service-timestamp header")
  })

  it("older than the window (a replay)", () => {
    const error = refusal(() => parse(BODY, delivery(), SECRET, AT + seconds(301)))
    expect(error.reason).toBe("timestamp")
    expect(error.message).toBe("x-service-timestamp is not Unix seconds within 300 s of now")
  })

  it("from further in the future than the window", () => {
    expect(reasonOf(() => parse(BODY, delivery(), SECRET, AT - seconds(301)))).toBe("timestamp")
  })

  it("not in Unix seconds, even when signed so", () => {
    for (const timestamp of ["1.7e9", "1700000000.5", " 1700000000", "soon"]) {
      const headers = delivery(BODY, { "x-service-timestamp": timestamp, "x-service-signature": signWebhook(SECRET, timestamp, BODY) })
      expect(reasonOf(() => parse(BODY, headers)), timestamp).toBe("timestamp")
    }
  })
})

describe("unknown_event: a signed delivery of an event this version does not know", () => {
  it("a new event type, or a new API version", () => {
    for (const event of ["v2.vehicle.updated", "v3.modules.completed", "modules.completed", ""]) {
      const error = refusal(() => parse(BODY, delivery(BODY, { "x-service-event": event })))
      expect(error.reason, event).toBe("unknown_event")
    }
  })
})

describe("malformed: a signed delivery that is not the event it names", () => {
  it("without its event header", () => {
    const error = refusal(() => parse(BODY, delivery(BODY, { "x-service-event": undefined })))
    expect(error.reason).toBe("malformed")
    expect(error.message).toBe("no x-service-event header")
  })

  it("a body that is not JSON, or not UTF-8", () => {
    expect(reasonOf(() => parse("not json"))).toBe("malformed")
    expect(reasonOf(() => parse(""))).toBe("malformed")
    expect(reasonOf(() => parse(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])))).toBe("malformed")
  })

  it("JSON that is not an event", () => {
    for (const body of ["{\"hello\":1}", "[]", "null", "42"]) {
      expect(reasonOf(() => parse(body)), body).toBe("malformed")
    }
  })

  it("an event of another type than its header names", () => {
    const error = refusal(() => parse(BODY, delivery(BODY, { "x-service-event": "v2.modules.completed" })))
    expect(error.reason).toBe("malformed")
    expect(error.message).toMatch(/^the body is not a v2\.modules\.completed event/)
    expect(reasonOf(() => parse(BODY, delivery(BODY, { "x-service-event": "v1.report.completed" })))).toBe("malformed")
    // the same schema decodes both modules events: the header must name the one the body is
    const failed = JSON.stringify({ ...JSON.parse(MODULES_BODY), type: "modules.failed" })
    expect(parse(failed, delivery(failed, { "x-service-event": "v2.modules.failed" })).event).toBe("v2.modules.failed")
    const mismatch = refusal(() => parse(failed, delivery(failed, { "x-service-event": "v2.modules.completed" })))
    expect(mismatch.reason).toBe("malformed")
    expect(mismatch.message).toBe("the body is a v2.modules.failed event, x-service-event says v2.modules.completed")
  })

  it("says where the body is wrong, never what it holds", () => {
    const body = JSON.stringify({ ...JSON.parse(MODULES_BODY), data: { ...JSON.parse(MODULES_BODY).data, status: `${PLATE} done` } })
    const error = refusal(() => parse(body, delivery(body, { "x-service-event": "v2.modules.completed" })))
    expect(error.reason).toBe("malformed")
    expect(error.message).toBe("the body is not a v2.modules.completed event (at data.status)")
    expect(error.message).not.toContain(PLATE)
  })
})

describe("the headers as a receiver holds them", () => {
  it("a fetch Headers object", () => {
    expect(parseWebhookEvent(BODY, new Headers(delivery()), SECRET, { now: AT }).event).toBe("v2.webhook.test")
  })

  it("a plain record, whatever the case of its names, a value alone in a list", () => {
    const mixed = Object.fromEntries(Object.entries(delivery()).map(([name, value]) => [name.toUpperCase(), [value]]))
    expect(parseWebhookEvent(BODY, mixed, SECRET, { now: AT }).event).toBe("v2.webhook.test")
  })

  it("node's IncomingHttpHeaders: lowercase names, undefined for what is absent", () => {
    const incoming: import("node:http").IncomingHttpHeaders = { ...delivery(), "content-type": "application/json", "x-absent": undefined }
    expect(parseWebhookEvent(BODY, incoming, SECRET, { now: AT }).event).toBe("v2.webhook.test")
  })
})

describe("parseWebhookEventEffect", () => {
  it.effect("takes a delivery in time by the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(AT + seconds(10))
      const received = yield* parseWebhookEventEffect(BODY, delivery(), SECRET)
      expect(received.event).toBe("v2.webhook.test")
    }))

  it.effect("fails with the typed error, the Clock deciding the window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(AT + seconds(301))
      const late = yield* Effect.flip(parseWebhookEventEffect(BODY, delivery(), SECRET))
      expect(late).toBeInstanceOf(WebhookEventError)
      expect(late).toMatchObject({ _tag: "WebhookEventError", reason: "timestamp" })
      const forged = yield* Effect.flip(parseWebhookEventEffect(BODY, delivery(), "whsec_other", { now: AT }))
      expect(forged.reason).toBe("signature")
    }))

  it.effect("a `now` given wins over the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(0)
      expect((yield* parseWebhookEventEffect(BODY, delivery(), SECRET, { now: AT })).event).toBe("v2.webhook.test")
    }))
})
