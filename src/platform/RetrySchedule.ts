/**
 * A retry policy (workflows/shared.ts, in Temporal's terms) as an Effect Schedule, for the
 * retries that happen inside a process rather than in a workflow.
 */
import { Duration, Schedule } from "effect"
import type { RetryPolicy } from "../../workflows/shared.js"

/** Exponential backoff capped at the policy's maximum interval, for its attempts after the first. */
export const scheduleOf = (policy: RetryPolicy) =>
  Schedule.exponential(Duration.millis(policy.initialIntervalMs), policy.backoffCoefficient).pipe(
    (backoff) => Schedule.min([backoff, Schedule.spaced(Duration.millis(policy.maximumIntervalMs))]),
    (capped) => Schedule.max([capped, Schedule.recurs(Math.max(0, policy.maximumAttempts - 1))])
  )
