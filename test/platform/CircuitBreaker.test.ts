/**
 * The circuit breaker: opens after consecutive failures and fails fast without calling; after the
 * cooldown it half-opens, letting one trial call through while others still fail fast; the trial's
 * success closes it. Typed failures pass through unchanged.
 */
import { Data, Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { CircuitOpen, make } from "../../src/platform/CircuitBreaker.js"

class Boom extends Data.TaggedError("Boom")<{ readonly n: number }> {}

describe("the circuit breaker", () => {
  it("opens, fails fast, half-opens for one trial, and closes on its success", async () => {
    await Effect.runPromise(Effect.gen(function*() {
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
      const trial = Effect.zipRight(Deferred.await(trialGate), Effect.sync(() => (order.push("trial"), "trial ok")))
      yield* Effect.sleep("300 millis") // past the cooldown (the breaker keeps real time)
      const probe = yield* Effect.fork(breaker(trial))
      yield* Effect.yieldNow()
      const other = yield* Effect.fork(breaker(Effect.sync(() => (order.push("other"), "other"))))
      yield* Effect.yieldNow()
      expect(order).toEqual([]) // the other call has not run while the trial is undecided
      yield* Deferred.succeed(trialGate, undefined)
      expect(yield* Fiber.join(probe)).toBe("trial ok")
      expect(yield* Fiber.join(other)).toBe("other")
      expect(order).toEqual(["trial", "other"])
      // closed again
      expect(yield* breaker(Effect.succeed("after"))).toBe("after")
    }))
  })
})
