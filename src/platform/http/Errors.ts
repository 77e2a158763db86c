/**
 * The error contract: one body everywhere, `{error:{code,message,requestId,retryable,details?}}`,
 * and one class per HTTP status. HttpApi encodes errors API-wide by matching the class, so a class
 * shared by two statuses would always answer with the first; hence the per-status family.
 */
import { Clock, Effect, Schema, SchemaTransformation } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiSchema } from "effect/http-api"
import { METER, MeterName } from "../contract/MeterNames.js"
import { RequestId } from "./RequestContext.js"
import { DateTimeUtc, Limit, NonNegativeInt } from "../contract/Schemas.js"

export const ErrorCode = Schema.Literals([
  "invalid_api_key",
  "access_denied",
  "invalid_plate",
  "invalid_request",
  "unsupported_module",
  "duplicate_module",
  "module_not_enabled",
  "quota_exceeded",
  "rate_limit_exceeded",
  "operation_not_found",
  "temporarily_unavailable",
  "internal_error"
])
export type ErrorCode = typeof ErrorCode.Type

export const ErrorDetails = Schema.Struct({
  meter: MeterName,
  limit: Limit,
  used: NonNegativeInt,
  resetAt: DateTimeUtc
}).annotate({ identifier: "ErrorDetails" })
export type ErrorDetails = typeof ErrorDetails.Type

export const ErrorBody = Schema.Struct({
  code: ErrorCode,
  message: Schema.String,
  requestId: Schema.String,
  retryable: Schema.Boolean,
  details: Schema.optional(ErrorDetails)
}).annotate({ identifier: "ErrorBody" })
export type ErrorBody = typeof ErrorBody.Type

/** The body of an error of one class, documented under the class's name. */
const envelopeOf = (name: ApiError["_tag"]) => Schema.Struct({ error: ErrorBody }).annotate({ identifier: name })

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", { error: ErrorBody }) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", { error: ErrorBody }) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { error: ErrorBody }) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { error: ErrorBody }) {}
/** `retryAfterSeconds` stays server-side: it becomes the `Retry-After` header. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  error: ErrorBody,
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", { error: ErrorBody }) {}
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  error: ErrorBody,
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

export type ApiError = BadRequest | Unauthorized | Forbidden | NotFound | TooManyRequests | InternalError | Unavailable

/** How long a 429 or 503 asks a client to wait when its failure does not say, in seconds. */
const DEFAULT_RETRY_AFTER_SECONDS = 1

/** How long a 429 or 503 asks its client to wait, in seconds. */
const retryAfterSecondsOf = (failure: TooManyRequests | Unavailable) => failure.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS

/** Each error's HTTP status: one table for v2's wire form and v1's envelope. */
export const STATUS = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  TooManyRequests: 429,
  InternalError: 500,
  Unavailable: 503
} as const satisfies Record<ApiError["_tag"], number>

type ErrorClass<Self> = Schema.Top & { readonly Type: Self } & { new(props: { readonly error: ErrorBody }): Self }

/** The wire form of an error class: only `{error}`, no `_tag`, with its status for HttpApi. */
const wire = <Self extends ApiError>(Self: ErrorClass<Self>, name: Self["_tag"], description: string) =>
  envelopeOf(name).pipe(
    Schema.decodeTo(Schema.toType(Self), SchemaTransformation.transform({
      decode: ({ error }) => new Self({ error }),
      encode: (self: Self) => ({ error: self.error })
    })),
    HttpApiSchema.status(STATUS[name])
  ).annotate({ description })

type RetryLaterClass<Self> = Schema.Top & { readonly Type: Self } & {
  new(props: { readonly error: ErrorBody; readonly retryAfterSeconds?: number }): Self
}

/** `wire` for an error that may be retried later: its `Retry-After` header travels with its body. */
const wireRetryLater = <Self extends TooManyRequests | Unavailable>(Self: RetryLaterClass<Self>, name: Self["_tag"], description: string) =>
  Schema.toType(Self).pipe(
    HttpApiSchema.encodeToWithHeaders({
      body: envelopeOf(name).pipe(HttpApiSchema.status(STATUS[name])),
      headers: { "retry-after": Schema.optional(Schema.FiniteFromString) }
    }, {
      decode: ({ body, headers }) => {
        const seconds = headers["retry-after"]
        return new Self(seconds === undefined ? { error: body.error } : { error: body.error, retryAfterSeconds: seconds })
      },
      encode: (self: Self) => ({ body: { error: self.error }, headers: { "retry-after": retryAfterSecondsOf(self) } })
    })
  ).annotate({ description })

export const BadRequestJson = wire(BadRequest, "BadRequest", "Invalid request, plate, module or parameters")
export const UnauthorizedJson = wire(Unauthorized, "Unauthorized", "Missing, unknown or revoked API key")
export const ForbiddenJson = wire(Forbidden, "Forbidden", "The plan or account does not allow this")
export const NotFoundJson = wire(NotFound, "NotFound", "Unknown route or resource")
export const TooManyRequestsJson = wireRetryLater(TooManyRequests, "TooManyRequests", "Requests per minute or quota exhausted")
export const InternalErrorJson = wire(InternalError, "InternalError", "Internal failure")
export const UnavailableJson = wireRetryLater(Unavailable, "Unavailable", "Temporarily unavailable")

/**
 * The errors every endpoint of the API may answer, in the contract's body: the request pipeline
 * raises them before routing, and the handlers raise them too. Each endpoint declares them, so
 * that they are encoded (a 429's or 503's with its `Retry-After`) and documented as the contract says.
 */
export const API_ERRORS = [
  BadRequestJson,
  UnauthorizedJson,
  ForbiddenJson,
  NotFoundJson,
  TooManyRequestsJson,
  InternalErrorJson,
  UnavailableJson
] as const

/** The body of an error: v2's `{error}`, or v1's envelope `{success: false, error}`. */
export const errorBodyOf = (failure: ApiError, version: "v1" | "v2") =>
  version === "v1" ? { success: false, error: failure.error } : { error: failure.error }

/** The `Retry-After` of an error that may be retried later: its headers, none for any other. */
const headersOf = (failure: ApiError): Record<string, string> | undefined =>
  failure instanceof TooManyRequests || failure instanceof Unavailable
    ? { "retry-after": String(retryAfterSecondsOf(failure)) }
    : undefined

/** An error as v2 answers it: `{error}`, with its status (and a 429's or 503's `Retry-After`). */
export const errorResponse = (failure: ApiError) =>
  HttpServerResponse.jsonUnsafe(errorBodyOf(failure, "v2"), { status: STATUS[failure._tag], headers: headersOf(failure) })

/** v1 answers errors in its envelope: `{success: false, error}`, same statuses, codes and headers. */
export const v1ErrorResponse = (failure: ApiError) =>
  HttpServerResponse.jsonUnsafe(errorBodyOf(failure, "v1"), { status: STATUS[failure._tag], headers: headersOf(failure) })

const decoder = new TextDecoder()

/** An error answer rendered in v2's form (`{error}`), put in v1's envelope; anything else is left as it is. */
export const toV1Envelope = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (typeof parsed !== "object" || parsed === null || !("error" in parsed) || "success" in parsed) return response
  return HttpServerResponse.jsonUnsafe({ success: false, error: parsed.error }, { status: response.status, headers: response.headers })
}

const body = (code: ErrorCode, message: string, retryable: boolean, details?: ErrorDetails) =>
  Effect.map(RequestId, (requestId): ErrorBody =>
    details === undefined
      ? { code, message, requestId, retryable }
      : { code, message, requestId, retryable, details })

const secondsUntil = (at: Date, now: number) => Math.max(1, Math.ceil((at.getTime() - now) / 1000))

export const invalidRequest = (message: string) =>
  Effect.flatMap(body("invalid_request", message, false), (error) => Effect.fail(new BadRequest({ error })))

export const badRequest = (code: "invalid_plate" | "unsupported_module" | "duplicate_module", message: string) =>
  Effect.flatMap(body(code, message, false), (error) => Effect.fail(new BadRequest({ error })))

export const invalidApiKey = (message: string) =>
  Effect.flatMap(body("invalid_api_key", message, false), (error) => Effect.fail(new Unauthorized({ error })))

export const forbidden = (code: "access_denied" | "module_not_enabled", message: string) =>
  Effect.flatMap(body(code, message, false), (error) => Effect.fail(new Forbidden({ error })))

/**
 * A refusal whose status has no error class in the contract (405, 413, 415), answered directly
 * by the request pipeline with the same body.
 */
export const refusalResponse = (status: 405 | 413 | 415, message: string, headers: Record<string, string> = {}) =>
  Effect.map(body("invalid_request", message, false), (error) =>
    HttpServerResponse.jsonUnsafe({ error }, { status, headers }))

export const routeNotFound = (method: string, path: string) =>
  Effect.flatMap(
    body("invalid_request", `No route for ${method} ${path}`, false),
    (error) => Effect.fail(new NotFound({ error }))
  )

export const notFound = (code: "operation_not_found", message: string) =>
  Effect.flatMap(body(code, message, false), (error) => Effect.fail(new NotFound({ error })))

/** 429 for an exhausted allowance (`quota_exceeded`) or the per-minute limit (`rate_limit_exceeded`). */
export const limitReached = (details: ErrorDetails) => {
  const rpm = details.meter === METER.requests
  const message = rpm
    ? `Requests per minute limit of ${details.limit} reached`
    : `The ${details.meter.replace("_", " ")} allowance of ${details.limit} is used up until ${details.resetAt.toISOString()}`
  return Effect.flatMap(
    Effect.zip(body(rpm ? "rate_limit_exceeded" : "quota_exceeded", message, true, details), Clock.currentTimeMillis),
    ([error, now]) => Effect.fail(new TooManyRequests({ error, retryAfterSeconds: secondsUntil(details.resetAt, now) }))
  )
}

/** How long a 503 asks a client to wait when its cause does not say, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5

export const temporarilyUnavailable = (message: string, retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS) =>
  Effect.flatMap(
    body("temporarily_unavailable", message, true),
    (error) => Effect.fail(new Unavailable({ error, retryAfterSeconds }))
  )

export const internalError = Effect.flatMap(
  body("internal_error", "The request could not be completed because of an internal failure", false),
  (error) => Effect.fail(new InternalError({ error }))
)
