/**
 * A webhook delivery as its receiver takes it in: the signature and its time checked (the one
 * check of `webhooks/verify.ts`), then the body decoded with the schema of the event it carries,
 * the very schemas the service encodes its events with.
 */
import { Clock, Data, Effect, Result, Schema } from "effect"
import { issuesOf } from "../platform/decoding/SchemaIssues.js"
import { V1Event } from "../v1/Api.js"
import { WebhookEvent } from "../webhooks/Api.js"
import { type VerifyWebhookOptions, WEBHOOK_HEADERS, webhookSignatureProblem } from "../webhooks/verify.js"
import { headerOf, type WebhookHeaders } from "./Headers.js"

/**
 * Why a delivery was not taken: `signature` (missing, or not by the secret: not from the service),
 * `timestamp` (missing, or out of the window: a replay, or a clock off), `unknown_event` (signed,
 * but an event this version of the package does not know: acknowledge it, and upgrade),
 * `malformed` (signed, but not the event its `x-service-event` header names).
 */
export type WebhookEventErrorReason = "signature" | "timestamp" | "unknown_event" | "malformed"

export class WebhookEventError extends Data.TaggedError("WebhookEventError")<{
  readonly reason: WebhookEventErrorReason
  readonly message: string
}> {}

type Received<Event, Version extends string, Name extends string> = Event extends Record<Name, string> ? {
    /** The event's name, as `x-service-event` has it: `v2.modules.completed`, `v1.report.failed`… */
    readonly event: `${Version}.${Event[Name]}`
    readonly apiVersion: Version
    /** The event's id (`evt_…`), the same on every attempt: deduplicate by it. */
    readonly eventId: string
    /** The body, decoded: dates are `Date`s. */
    readonly payload: Event
  }
  : never

/** A delivery's event, told apart by `event`. */
export type ReceivedWebhookEvent = Received<WebhookEvent, "v2", "type"> | Received<V1Event, "v1", "event">

export interface ParseWebhookEventOptions extends Pick<VerifyWebhookOptions, "toleranceSeconds" | "now"> {}

const literalsOf = (schema: { readonly literals: ReadonlyArray<string> } | { readonly literal: string }) =>
  "literals" in schema ? schema.literals : [schema.literal]

type Decoder = (input: unknown) => Result.Result<ReceivedWebhookEvent, Schema.SchemaError>

/** Each event's decoder, by its name in `x-service-event`. */
const decoders = new Map<string, Decoder>([
  ...WebhookEvent.members.flatMap((member) => {
    const decodeBody = Schema.decodeUnknownResult(member)
    const decode: Decoder = (input) =>
      Result.map(decodeBody(input), (payload) =>
        ({ event: `v2.${payload.type}`, apiVersion: "v2", eventId: payload.id, payload }) as ReceivedWebhookEvent)
    return literalsOf(member.fields.type).map((type) => [`v2.${type}`, decode] as const)
  }),
  ...V1Event.members.flatMap((member) => {
    const decodeBody = Schema.decodeUnknownResult(member)
    const decode: Decoder = (input) =>
      Result.map(decodeBody(input), (payload) =>
        ({ event: `v1.${payload.event}`, apiVersion: "v1", eventId: payload.eventId, payload }) as ReceivedWebhookEvent)
    return literalsOf(member.fields.event).map((event) => [`v1.${event}`, decode] as const)
  })
])

const utf8 = new TextDecoder("utf-8", { fatal: true })

const refuse = (reason: WebhookEventErrorReason, message: string) => Result.fail(new WebhookEventError({ reason, message }))

const checkSecrets = (secret: string | ReadonlyArray<string>) => {
  const secrets = typeof secret === "string" ? [secret] : secret
  if (secrets.length === 0 || secrets.some((one) => typeof one !== "string" || one === "")) {
    throw new TypeError("parseWebhookEvent needs the webhook secret (whsec_…), or a list of them")
  }
}

const jsonOf = (body: string | Uint8Array): Result.Result<unknown, WebhookEventError> => {
  try {
    return Result.succeed(JSON.parse(typeof body === "string" ? body : utf8.decode(body)))
  } catch {
    return refuse("malformed", "the body is not JSON in UTF-8")
  }
}

/** The delivery's event, or why it was not taken. */
export const parseWebhookEventResult = (
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | ReadonlyArray<string>,
  options: ParseWebhookEventOptions = {}
): Result.Result<ReceivedWebhookEvent, WebhookEventError> => {
  checkSecrets(secret)
  const signature = headerOf(headers, WEBHOOK_HEADERS.signature)
  const timestamp = headerOf(headers, WEBHOOK_HEADERS.timestamp)
  switch (webhookSignatureProblem({ ...options, secret, rawBody: body, signature, timestamp })) {
    case "timestamp":
      return refuse(
        "timestamp",
        timestamp === undefined
          ? `no ${WEBHOOK_HEADERS.timestamp} header`
          : `${WEBHOOK_HEADERS.timestamp} is not Unix seconds within ${options.toleranceSeconds ?? 300} s of now`
      )
    case "signature":
      return refuse(
        "signature",
        signature === undefined
          ? `no ${WEBHOOK_HEADERS.signature} header`
          : `${WEBHOOK_HEADERS.signature} is not the secret's signature of this body (pass the body exactly as received)`
      )
  }
  const name = headerOf(headers, WEBHOOK_HEADERS.event)
  if (name === undefined) return refuse("malformed", `no ${WEBHOOK_HEADERS.event} header`)
  const decode = decoders.get(name)
  if (decode === undefined) return refuse("unknown_event", `${WEBHOOK_HEADERS.event} names an event this version does not know`)
  return Result.flatMap(jsonOf(body), (json) => {
    const decoded = decode(json)
    if (Result.isFailure(decoded)) {
      // where, not what: the values are the integrator's data
      const where = issuesOf(decoded.failure.issue)[0]?.path?.map(String).join(".")
      return refuse("malformed", `the body is not a ${name} event${where ? ` (at ${where})` : ""}`)
    }
    if (decoded.success.event !== name) return refuse("malformed", `the body is a ${decoded.success.event} event, ${WEBHOOK_HEADERS.event} says ${name}`)
    return Result.succeed(decoded.success)
  })
}

/** The delivery's event; throws a `WebhookEventError` when it is not one to take. */
export const parseWebhookEvent = (
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | ReadonlyArray<string>,
  options?: ParseWebhookEventOptions
): ReceivedWebhookEvent => {
  const result = parseWebhookEventResult(body, headers, secret, options)
  if (Result.isFailure(result)) throw result.failure
  return result.success
}

/** The delivery's event, failing with a `WebhookEventError`; now is the Clock's unless given. */
export const parseWebhookEventEffect = (
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | ReadonlyArray<string>,
  options: ParseWebhookEventOptions = {}
): Effect.Effect<ReceivedWebhookEvent, WebhookEventError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fromResult(parseWebhookEventResult(body, headers, secret, { now, ...options })))
