/**
 * A retry policy as the processes' own retries read it (`scheduleOf`, through the inline engine's
 * `withRetry`): Temporal's attempts and capped exponential backoff, on the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Data, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { RetryPolicy } from "../../src/platform/sandboxSafe/RetryPolicy.js"
import { withRetry } from "../../src/operations/InlineEngine.js"

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
    yield* TestClock.adjust("1 hour")
    return yield* Fiber.await(fiber)
  })

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
