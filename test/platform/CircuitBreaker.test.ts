/**
 * The circuit breaker: opens after consecutive failures and fails fast without calling; after the
 * cooldown it half-opens, letting one trial call through while others still fail fast; the trial's
 * success closes it. Typed failures pass through unchanged.
 */
import { describe, expect, it, vi } from "@effect/vitest"
import { Data, Deferred, Effect, Exit, Fiber } from "effect"
import { CircuitOpen, make } from "../../src/platform/upstream/CircuitBreaker.js"

class Boom extends Data.TaggedError("Boom")<{ readonly n: number }> {}

describe("the circuit breaker", () => {
  it.effect("opens, fails fast, half-opens for one trial, and closes on its success", () =>
    Effect.gen(function*() {
      // the breaker (cockatiel) reads its cooldown off `Date`, which the test moves (no TestClock does)
      yield* Effect.acquireRelease(
        Effect.sync(() => vi.useFakeTimers({ toFake: ["Date"], now: Date.now() })),
        () => Effect.sync(() => vi.useRealTimers())
      )
      const breaker = yield* make({ threshold: 2, cooldown: "200 millis" })
      let calls = 0
      const failing = Effect.suspend(() => {
        calls++
        return Effect.fail(new Boom({ n: calls }))
      })
      expect(yield* Effect.exit(breaker(failing))).toEqual(Exit.fail(new Boom({ n: 1 })))
      expect(yield* Effect.exit(breaker(failing))).toEqual(Exit.fail(new Boom({ n: 2 })))
      // open: fails fast, the call is not made
      expect(yield* Effect.exit(breaker(failing))).toEqual(Exit.fail(new CircuitOpen()))
      expect(calls).toBe(2)

      // after the cooldown, one trial goes through; other calls wait for its verdict
      const order: Array<string> = []
      const trialGate = yield* Deferred.make<void>()
      const trial = Effect.andThen(Deferred.await(trialGate), Effect.sync(() => (order.push("trial"), "trial ok")))
      yield* Effect.sync(() => vi.advanceTimersByTime(199))
      // still open a moment before the cooldown ends
      expect(yield* Effect.exit(breaker(failing))).toEqual(Exit.fail(new CircuitOpen()))
      expect(calls).toBe(2)
      yield* Effect.sync(() => vi.advanceTimersByTime(1)) // the cooldown is over
      const probe = yield* Effect.forkChild(breaker(trial))
      yield* Effect.yieldNow
      const other = yield* Effect.forkChild(breaker(Effect.sync(() => (order.push("other"), "other"))))
      yield* Effect.yieldNow
      expect(order).toEqual([]) // the other call has not run while the trial is undecided
      yield* Deferred.succeed(trialGate, undefined)
      expect(yield* Fiber.join(probe)).toBe("trial ok")
      expect(yield* Fiber.join(other)).toBe("other")
      expect(order).toEqual(["trial", "other"])
      // closed again
      expect(yield* breaker(Effect.succeed("after"))).toBe("after")
    }))
})
