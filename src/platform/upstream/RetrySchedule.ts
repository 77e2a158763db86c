/**
 * A retry policy as an Effect Schedule, for the retries that happen inside a process rather than
 * in a workflow: the one reading of a policy by the processes' own retries (the inline engine,
 * a request waiting on its source). Workflows hand the same policy to Temporal (`temporalRetryOf`).
 */
import { Cause, Duration, Effect, Schedule } from "effect"
import { retryDelayMs, type RetryPolicy } from "../sandboxSafe/RetryPolicy.js"

/**
 * After attempt n failed, waits `retryDelayMs(policy, n)` before the next, until the policy's
 * attempts are used up (never when `maximumAttempts` is 0: unlimited, as in Temporal). Its output
 * is the number of the attempt that failed.
 */
export const scheduleOf = (policy: RetryPolicy): Schedule.Schedule<number> =>
  Schedule.fromStepWithMetadata(Effect.succeed(({ attempt }: Schedule.InputMetadata<unknown>) =>
    policy.maximumAttempts > 0 && attempt >= policy.maximumAttempts
      ? Cause.done(attempt)
      : Effect.succeed([attempt, Duration.millis(retryDelayMs(policy, attempt))] as [number, Duration.Duration])
  ))
