/**
 * A clock whose "now" the test sets, for the in-process HTTP app: minute windows and month/day
 * boundaries become deterministic. Sleeping still uses real time. `follow()` makes it run with
 * real time again until the next `set`.
 */
import { Clock, Duration, Effect, Layer } from "effect"

export class ManualClock implements Clock.Clock {
  private following = false
  constructor(private now: number) {}

  set(instant: string | number) {
    this.following = false
    this.now = typeof instant === "string" ? Date.parse(instant) : instant
  }
  follow() {
    this.following = true
  }
  advance(duration: Duration.Input) {
    this.now += Duration.toMillis(Duration.fromInputUnsafe(duration))
  }
  currentTimeMillisUnsafe() {
    return this.following ? Date.now() : this.now
  }
  currentTimeNanosUnsafe() {
    return BigInt(this.currentTimeMillisUnsafe()) * 1_000_000n
  }
  monotonicTimeNanosUnsafe() {
    return process.hrtime.bigint()
  }
  get currentTimeMillis() {
    return Effect.sync(() => this.currentTimeMillisUnsafe())
  }
  get currentTimeNanos() {
    return Effect.sync(() => this.currentTimeNanosUnsafe())
  }
  get monotonicTimeNanos() {
    return Effect.sync(() => this.monotonicTimeNanosUnsafe())
  }
  sleep(duration: Duration.Duration) {
    return Effect.callback<void>((resume) => {
      const timer = setTimeout(() => resume(Effect.void), Duration.toMillis(duration))
      return Effect.sync(() => clearTimeout(timer))
    })
  }
  get layer() {
    return Layer.succeed(Clock.Clock, this)
  }
}
