/**
 * Periodic clean-ups of data past its use, run in one process at a time (a lease per job). Each
 * feature defines its own job; this only schedules them.
 */
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { Leases } from "./Leases.js"

export const RETENTION_EVERY = Duration.hours(1)

/**
 * The instant `age` ago by the application's clock, which stamped the rows a job prunes: the
 * database's own `now()` may disagree with it (another host, or a test's manual clock).
 */
export const cutoff = (age: Duration.Input): Effect.Effect<Date> =>
  Effect.map(Clock.currentTimeMillis, (now) => new Date(now - Duration.toMillis(age)))

/** Runs `prune` now and every `RETENTION_EVERY`, in whichever process holds the job's lease. */
export const retentionJob = <R>(name: string, prune: Effect.Effect<number, unknown, R>) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const leases = yield* Leases
    const pass = leases.acquire(`retention-${name}`, Duration.toMillis(RETENTION_EVERY) * 2).pipe(
      Effect.flatMap((held) => (held ? prune : Effect.succeed(0))),
      Effect.tap((removed) => (removed > 0 ? Effect.logInfo(`retention ${name}: ${removed} row(s) removed`) : Effect.void)),
      Effect.catchCause((cause) => Effect.logWarning(`retention ${name} failed; trying again later`, cause))
    )
    yield* Effect.forkScoped(pass.pipe(Effect.repeat(Schedule.spaced(RETENTION_EVERY))))
  }))
