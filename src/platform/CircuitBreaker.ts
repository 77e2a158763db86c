/**
 * A circuit breaker for an upstream dependency: after `threshold` consecutive failures it opens
 * and fails fast for `cooldown`, then lets one trial call through (half-open); a success closes it.
 */
import { Clock, Data, Duration, Effect, Ref } from "effect"

export class CircuitOpen extends Data.TaggedError("CircuitOpen")<{ readonly retryAt: number }> {}

interface State {
  readonly failures: number
  readonly openUntil: number
}

export const make = (options: { readonly threshold: number; readonly cooldown: Duration.DurationInput }) =>
  Effect.gen(function*() {
    const cooldown = Duration.toMillis(options.cooldown)
    const state = yield* Ref.make<State>({ failures: 0, openUntil: 0 })

    return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | CircuitOpen, R> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const { openUntil } = yield* Ref.get(state)
        if (now < openUntil) return yield* new CircuitOpen({ retryAt: openUntil })
        return yield* effect.pipe(
          Effect.tapBoth({
            onSuccess: () => Ref.set(state, { failures: 0, openUntil: 0 }),
            onFailure: () =>
              Effect.flatMap(Clock.currentTimeMillis, (at) =>
                Ref.update(state, (s) => {
                  const failures = s.failures + 1
                  return { failures, openUntil: failures >= options.threshold ? at + cooldown : 0 }
                }))
          })
        )
      })
  })
