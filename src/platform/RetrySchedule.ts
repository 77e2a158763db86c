/**
 * A retry policy (sandboxSafe/RetryPolicy.ts, in Temporal's terms) as an Effect Schedule, for the
 * retries that happen inside a process rather than in a workflow.
 */
import { Duration, Schedule } from "effect"
import type { RetryPolicy } from "./sandboxSafe/RetryPolicy.js"

/**
 * Exponential backoff capped at the policy's maximum interval, for its attempts after the first
 * (all of them when `maximumAttempts` is 0: unlimited, as in Temporal). The one reading of a policy
 * by the processes' own retries; workflows hand the same policy to Temporal (workflows/index.ts).
 */
export const scheduleOf = (policy: RetryPolicy) => {
  const capped = Schedule.exponential(Duration.millis(policy.initialIntervalMs), policy.backoffCoefficient).pipe(
    (backoff) => Schedule.min([backoff, Schedule.spaced(Duration.millis(policy.maximumIntervalMs))])
  )
  return policy.maximumAttempts > 0 ? Schedule.max([capped, Schedule.recurs(policy.maximumAttempts - 1)]) : capped
}
