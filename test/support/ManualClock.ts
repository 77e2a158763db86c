/**
 * A clock whose "now" the test sets, for the in-process HTTP app: minute windows and month/day
 * boundaries become deterministic. Sleeping still uses real time (nothing here waits on it).
 */
import { Clock, Duration, Effect, Layer } from "effect"

export class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private readonly live = Clock.make()
  constructor(private now: number) {}

  set(instant: string | number) {
    this.now = typeof instant === "string" ? Date.parse(instant) : instant
  }
  advance(duration: Duration.DurationInput) {
    this.now += Duration.toMillis(duration)
  }
  unsafeCurrentTimeMillis() {
    return this.now
  }
  unsafeCurrentTimeNanos() {
    return BigInt(this.now) * 1_000_000n
  }
  get currentTimeMillis() {
    return Effect.sync(() => this.now)
  }
  get currentTimeNanos() {
    return Effect.sync(() => this.unsafeCurrentTimeNanos())
  }
  sleep(duration: Duration.Duration) {
    return this.live.sleep(duration)
  }
  get layer() {
    return Layer.setClock(this)
  }
}
