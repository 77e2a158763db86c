/**
 * The one error a client call fails with: every error of the contract, by its code, and the few
 * failures a client meets before or after the API answers (its own codes, below the contract's).
 */
import { Data, Effect, Schema } from "effect"
import type { HttpClientError, HttpClientResponse } from "effect/http"
import { type ApiError, ErrorBody, type ErrorCode, type ErrorDetails, STATUS } from "../platform/http/Errors.js"

/**
 * What went wrong on the client's side: the API could not be reached (`network_error`), it answered
 * something the contract does not describe (`unexpected_response`), or an operation was not final
 * by the caller's deadline (`deadline_exceeded`).
 */
export type ClientSideCode = "network_error" | "unexpected_response" | "deadline_exceeded"

export type VehicleDataErrorCode = ErrorCode | ClientSideCode

export class VehicleDataApiError extends Data.TaggedError("VehicleDataApiError")<{
  readonly code: VehicleDataErrorCode
  readonly message: string
  /** The HTTP status of the answer; absent when there was none. */
  readonly status?: number
  /** The request id the API answered with (`X-Request-Id`), to quote to support. */
  readonly requestId?: string
  /** Whether the same call may succeed later (the API's word for its errors). */
  readonly retryable: boolean
  /** When to try again, in seconds, from the answer's `Retry-After` (429 and 503). */
  readonly retryAfter?: number
  /** The allowance a 429 is about. */
  readonly details?: ErrorDetails
  readonly cause?: unknown
}> {}

/** The statuses whose answers say when to try again: the API's 429 and 503. */
export const RETRY_LATER_STATUSES: ReadonlyArray<number> = [STATUS.TooManyRequests, STATUS.Unavailable]

/** `Retry-After` in seconds: the API sends delta-seconds; anything else is ignored. */
export const retryAfterOf = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const header = response.headers["retry-after"]
  if (header === undefined || !/^\d+$/.test(header.trim())) return undefined
  return Number(header.trim())
}

const isApiError = (failure: unknown): failure is ApiError =>
  typeof failure === "object" && failure !== null && "_tag" in failure && typeof failure._tag === "string" &&
  Object.hasOwn(STATUS, failure._tag) && "error" in failure

const fromBody = (body: ErrorBody, response: HttpClientResponse.HttpClientResponse, cause?: unknown) => {
  const retryAfter = RETRY_LATER_STATUSES.includes(response.status) ? retryAfterOf(response) : undefined
  return new VehicleDataApiError({
    code: body.code,
    message: body.message,
    status: response.status,
    requestId: body.requestId,
    retryable: body.retryable,
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(body.details === undefined ? {} : { details: body.details }),
    ...(cause === undefined ? {} : { cause })
  })
}

const unexpected = (response: HttpClientResponse.HttpClientResponse, cause: unknown) => {
  const requestId = response.headers["x-request-id"]
  return new VehicleDataApiError({
    code: "unexpected_response",
    message: `The API answered ${response.status} with a body the contract does not describe`,
    status: response.status,
    ...(requestId === undefined ? {} : { requestId }),
    retryable: false,
    cause
  })
}

// v2's `{error}` and v1's `{success: false, error}` alike (other properties are ignored)
const decodeErrorBody = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Struct({ error: ErrorBody })))

/**
 * The failure of a call whose answer is `response`, as the client's error: the contract's error
 * classes with the answer's status and `Retry-After`. An answer with a status the endpoint does
 * not declare (the request pipeline's 405, 413 and 415) still carries the contract's body, read
 * here; anything else is an answer the contract does not describe.
 */
export const fromAnswer = (failure: unknown, response: HttpClientResponse.HttpClientResponse): Effect.Effect<VehicleDataApiError> => {
  if (isApiError(failure)) return Effect.succeed(fromBody(failure.error, response))
  if (response.status < 400) return Effect.succeed(unexpected(response, failure))
  return Effect.match(Effect.flatMap(response.text, decodeErrorBody), {
    onFailure: () => unexpected(response, failure),
    onSuccess: ({ error }) => fromBody(error, response, failure)
  })
}

/** A call that got no answer: the API could not be reached, or the connection broke. */
export const unreachable = (cause: HttpClientError.HttpClientError) =>
  new VehicleDataApiError({
    code: "network_error",
    message: "The Vehicle Data API could not be reached, or the connection broke before its answer",
    retryable: true,
    cause
  })

/** A request the client could not make: it does not match the contract (the API would refuse it alike). */
export const invalidRequest = (cause: unknown) =>
  new VehicleDataApiError({
    code: "invalid_request",
    message: `The request does not match the contract: ${cause instanceof Error ? cause.message : String(cause)}`,
    retryable: false,
    cause
  })
