/**
 * A circuit breaker for an upstream dependency (cockatiel): after `threshold` consecutive
 * failures it opens and fails fast for `cooldown`, then half-opens: one trial call goes through
 * while the others still fail fast; its success closes the circuit, its failure opens it again.
 */
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleAll, IsolatedCircuitError } from "cockatiel"
import { Cause, Data, Duration, Effect, Exit } from "effect"

export class CircuitOpen extends Data.TaggedError("CircuitOpen") {}

/** Carries an Effect failure through the breaker (which counts it) back to Effect. */
class Failed<E> {
  constructor(readonly cause: Cause.Cause<E>) {}
}

export const make = Effect.fnUntraced(function*(options: { readonly threshold: number; readonly cooldown: Duration.Input }) {
  const policy = circuitBreaker(handleAll, {
    halfOpenAfter: Duration.toMillis(options.cooldown),
    breaker: new ConsecutiveBreaker(options.threshold)
  })
  const services = yield* Effect.context<never>()

  return <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | CircuitOpen> =>
    Effect.tryPromise({
      try: (signal) =>
        policy.execute(async () => {
          const exit = await Effect.runPromiseExitWith(services)(effect, { signal })
          if (Exit.isFailure(exit)) throw new Failed(exit.cause)
          return exit.value
        }),
      catch: (error) => error
    }).pipe(
      Effect.catch((error): Effect.Effect<never, E | CircuitOpen> => {
        if (error instanceof Failed) return Effect.failCause(error.cause as Cause.Cause<E>)
        if (error instanceof BrokenCircuitError || error instanceof IsolatedCircuitError) return Effect.fail(new CircuitOpen())
        return Effect.die(error)
      })
    )
})

/** A breaker as the upstream settings describe it (UPSTREAM_BREAKER_FAILURES, UPSTREAM_BREAKER_COOLDOWN_MS). */
export const fromSettings = (settings: { readonly breakerFailures: number; readonly breakerCooldownMs: number }) =>
  make({ threshold: settings.breakerFailures, cooldown: Duration.millis(settings.breakerCooldownMs) })
