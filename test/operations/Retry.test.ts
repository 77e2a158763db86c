/**
 * A retry policy as the processes' own retries read it (`scheduleOf`, through the inline engine's
 * `withRetry`): Temporal's attempts and capped exponential backoff, on the test clock. And the
 * same policy as Temporal reads it (`temporalRetryOf`, through the SDK's own compiler).
 */
import { describe, expect, it } from "@effect/vitest"
import { compileRetryPolicy, decompileRetryPolicy } from "@temporalio/common"
import { Clock, Data, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import {
  BOOKKEEPING_RETRY,
  DELIVERY_RETRY,
  retryDelayMs,
  type RetryPolicy,
  SOURCE_RETRY,
  temporalRetryOf,
  VEHICLE_REQUEST_RETRY
} from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { withRetry } from "../../src/operations/InlineEngine.js"

const POLICIES = { SOURCE_RETRY, VEHICLE_REQUEST_RETRY, BOOKKEEPING_RETRY, DELIVERY_RETRY }

class Failed extends Data.TaggedError("Failed")<{ readonly retryable: boolean }> {}

const POLICY: RetryPolicy = { maximumAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 2, maximumIntervalMs: 150 }

/** An effect that notes the time of each attempt and answers as `outcome(attempt)` says. */
const attempts = <E>(outcome: (attempt: number) => Effect.Effect<string, E>) => {
  const at: Array<number> = []
  const effect = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    at.push(now)
    return outcome(at.length)
  })
  return { at, effect }
}

/** `effect` under `policy`, with the test clock moved well past every delay. */
const run = <E>(policy: RetryPolicy, effect: Effect.Effect<string, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(withRetry(policy, effect))
    yield* TestClock.adjust("1 day")
    return yield* Fiber.await(fiber)
  })

/** When each attempt starts under `policy`, by `retryDelayMs` alone: 0, then each delay added. */
const startsOf = (policy: RetryPolicy, attempts: number) =>
  Array.from({ length: attempts - 1 }, (_, i) => retryDelayMs(policy, i + 1))
    .reduce((starts, delay) => [...starts, starts[starts.length - 1]! + delay], [0])

describe("withRetry", () => {
  it.effect("retries a retryable failure at the policy's capped delays, up to its attempts", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts(() => Effect.fail(new Failed({ retryable: true })))
      expect(yield* run(POLICY, effect)).toEqual(Exit.fail(new Failed({ retryable: true })))
      // 100 ms, then 200 capped at 150
      expect(at).toEqual([0, 100, 250])
    }))

  it.effect("answers at the first attempt that succeeds", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts((n) => n < 2 ? Effect.fail(new Failed({ retryable: true })) : Effect.succeed(`attempt ${n}`))
      expect(yield* run(POLICY, effect)).toEqual(Exit.succeed("attempt 2"))
      expect(at).toEqual([0, 100])
    }))

  it.effect("never retries a failure that says it is not retryable", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts(() => Effect.fail(new Failed({ retryable: false })))
      expect(yield* run(POLICY, effect)).toEqual(Exit.fail(new Failed({ retryable: false })))
      expect(at).toEqual([0])
    }))

  it.effect("retries a defect as well, and keeps it when the attempts are used up", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts(() => Effect.die(new Error("connection reset")))
      const exit = yield* run(POLICY, effect)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("connection reset")
      expect(at).toEqual([0, 100, 250])
    }))

  it.effect("with maximumAttempts 0, retries until the effect succeeds (unlimited, as in Temporal)", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts((n) => n < 6 ? Effect.fail(new Failed({ retryable: true })) : Effect.succeed("done"))
      expect(yield* run({ ...POLICY, maximumAttempts: 0 }, effect)).toEqual(Exit.succeed("done"))
      expect(at).toEqual([0, 100, 250, 400, 550, 700])
    }))
})

describe("each policy", () => {
  for (const [name, policy] of Object.entries(POLICIES)) {
    it.effect(`${name}: the processes wait retryDelayMs between attempts, for the policy's attempts`, () =>
      Effect.gen(function*() {
        // an unlimited policy is followed for 8 attempts, then succeeds
        const attemptsInAll = policy.maximumAttempts === 0 ? 8 : policy.maximumAttempts
        const { at, effect } = attempts((n) =>
          policy.maximumAttempts === 0 && n === attemptsInAll ? Effect.succeed("done") : Effect.fail(new Failed({ retryable: true }))
        )
        yield* run(policy, effect)
        expect(at).toEqual(startsOf(policy, attemptsInAll))
      }))

    it(`${name}: Temporal reads the same policy`, () => {
      const read = decompileRetryPolicy(compileRetryPolicy(temporalRetryOf(policy)))!
      expect({
        maximumAttempts: read.maximumAttempts ?? 0,
        initialIntervalMs: read.initialInterval,
        backoffCoefficient: read.backoffCoefficient,
        maximumIntervalMs: read.maximumInterval
      }).toEqual(policy)
    })
  }
})
