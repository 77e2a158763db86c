/**
 * The current time, read from the fiber's `Clock` (a test's `TestClock` included) in the step that
 * uses it: `Clock.currentTimeMillis` and its continuation are two more steps, and the busiest
 * paths read the time on every request.
 */
import { Clock, Effect } from "effect"

/** `f` of the current time in milliseconds. */
export const withNow = <A, E, R>(f: (now: number) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => f(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()))
