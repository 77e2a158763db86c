/**
 * When a call is tried again: on the API's 429 and 503 only, after the `Retry-After` it answered,
 * a bounded number of times, and never after a wait longer than the caller allows (a monthly
 * quota's `Retry-After` may be days away: that call fails at once with its error).
 */
import { Cause, Duration, Effect, Schedule } from "effect"
import { RETRY_LATER_STATUSES, VehicleDataApiError } from "./Errors.js"

export interface RetryOptions {
  /** Tries after the first; 0 never tries again. */
  readonly maxRetries?: number
  /** The longest `Retry-After` worth waiting for; a longer one fails the call at once. */
  readonly maxWait?: Duration.Input
}

export const DEFAULT_RETRY = { maxRetries: 3, maxWait: "60 seconds" } as const satisfies RetryOptions

/** How long to wait when a 429 or 503 says nothing of it (the API always does). */
export const RETRY_AFTER_FALLBACK = Duration.seconds(1)

/** The wait a 429 or 503 asks for, or undefined when the failure is not one to try again. */
export const waitBefore = (failure: unknown): Duration.Duration | undefined =>
  failure instanceof VehicleDataApiError && failure.status !== undefined && RETRY_LATER_STATUSES.includes(failure.status)
    ? failure.retryAfter === undefined ? RETRY_AFTER_FALLBACK : Duration.seconds(failure.retryAfter)
    : undefined

/**
 * The schedule of `Effect.retry` for a call: its input is the call's failure, its delay that
 * failure's `Retry-After`. It ends (and the call fails with that failure) on any other failure,
 * after `maxRetries`, or when the wait asked for is longer than `maxWait`.
 */
export const retrySchedule = (options: RetryOptions = {}): Schedule.Schedule<Duration.Duration, unknown> => {
  const maxRetries = options.maxRetries ?? DEFAULT_RETRY.maxRetries
  const maxWait = Duration.fromInputUnsafe(options.maxWait ?? DEFAULT_RETRY.maxWait)
  return Schedule.fromStepWithMetadata(Effect.succeed((meta: Schedule.InputMetadata<unknown>) => {
    const wait = waitBefore(meta.input)
    if (wait === undefined || meta.attempt > maxRetries || Duration.isGreaterThan(wait, maxWait)) {
      return Cause.done(Duration.zero)
    }
    return Effect.succeed([wait, wait] as [Duration.Duration, Duration.Duration])
  }))
}

/** `effect` tried again as `options` say (not at all with `false`). */
export const withRetries = (options: RetryOptions | false | undefined) => {
  if (options === false) return <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
  const schedule = retrySchedule(options)
  return <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.retry(effect, schedule)
}
