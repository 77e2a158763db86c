/**
 * Retry policies, defined once for every engine: the Temporal workflows hand them to Temporal
 * (`temporalRetryOf`), the processes' own retries read them as an Effect Schedule built on
 * `retryDelayMs` (platform/upstream/RetrySchedule.ts). Imported by the workflows, so it imports nothing.
 */

/** An activity retry policy, in the terms of Temporal's RetryPolicy (milliseconds). */
export interface RetryPolicy {
  /** Attempts in all, the first included; 0 is unlimited. */
  readonly maximumAttempts: number
  readonly initialIntervalMs: number
  readonly backoffCoefficient: number
  readonly maximumIntervalMs: number
}

/** Module and vehicle-source lookups: 3 attempts (first included), 1 s then 2 s apart. */
export const SOURCE_RETRY: RetryPolicy = {
  maximumAttempts: 3,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maximumIntervalMs: 10_000
}

/**
 * A vehicle query waiting on its source inside the client's request (no workflow around it):
 * 3 attempts, 200 ms then 400 ms apart. A vehicle search (`onMiss=search`) makes one attempt per
 * activity and is retried by SOURCE_RETRY instead, never both.
 */
export const VEHICLE_REQUEST_RETRY: RetryPolicy = {
  maximumAttempts: 3,
  initialIntervalMs: 200,
  backoffCoefficient: 2,
  maximumIntervalMs: 1_000
}

/** Bookkeeping activities (database writes): retried until they succeed, briefly apart. */
export const BOOKKEEPING_RETRY: RetryPolicy = {
  maximumAttempts: 0,
  initialIntervalMs: 500,
  backoffCoefficient: 2,
  maximumIntervalMs: 30_000
}

/**
 * Webhook deliveries: 5 attempts in all (the first included), 1 min, 5 min, 25 min and 2 h apart
 * (overridable for tests through WEBHOOK_RETRY_*).
 */
export const DELIVERY_RETRY: RetryPolicy = {
  maximumAttempts: 5,
  initialIntervalMs: 60_000,
  backoffCoefficient: 5,
  maximumIntervalMs: 7_200_000
}

/** The delay before attempt `attempt + 1` after `attempt` failed (Temporal's formula, no jitter). */
export const retryDelayMs = (policy: RetryPolicy, attempt: number) =>
  Math.min(policy.initialIntervalMs * Math.pow(policy.backoffCoefficient, attempt - 1), policy.maximumIntervalMs)

/** The policy as Temporal's activity retry options; unlimited attempts are expressed by leaving them out. */
export const temporalRetryOf = (policy: RetryPolicy) => ({
  ...(policy.maximumAttempts > 0 ? { maximumAttempts: policy.maximumAttempts } : {}),
  initialInterval: policy.initialIntervalMs,
  backoffCoefficient: policy.backoffCoefficient,
  maximumInterval: policy.maximumIntervalMs
})
