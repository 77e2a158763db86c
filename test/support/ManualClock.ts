/**
 * A clock whose "now" the test sets, for the in-process HTTP app: minute windows and month/day
 * boundaries become deterministic. Sleeping still uses real time. `follow()` makes it run with
 * real time again until the next `set`.
 */
import { Clock, Duration, Effect, Layer } from "effect"

export class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private readonly live = Clock.make()
  private following = false
  constructor(private now: number) {}

  set(instant: string | number) {
    this.following = false
    this.now = typeof instant === "string" ? Date.parse(instant) : instant
  }
  follow() {
    this.following = true
  }
  advance(duration: Duration.DurationInput) {
    this.now += Duration.toMillis(duration)
  }
  unsafeCurrentTimeMillis() {
    return this.following ? Date.now() : this.now
  }
  unsafeCurrentTimeNanos() {
    return BigInt(this.unsafeCurrentTimeMillis()) * 1_000_000n
  }
  get currentTimeMillis() {
    return Effect.sync(() => this.unsafeCurrentTimeMillis())
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
