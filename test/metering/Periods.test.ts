import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { dayOf, daysOf, isValidTimezone, minuteOf, monthOf } from "../../src/metering/Periods.js"

const BA = "America/Argentina/Buenos_Aires"
const iso = (d: Date) => d.toISOString()

const at = (instant: string) => TestClock.setTime(Date.parse(instant)).pipe(Effect.andThen(Clock.currentTimeMillis))

describe("metering periods", () => {
  it.effect("2026-12-01T02:59:59Z still counts in November in Buenos Aires", () =>
    Effect.gen(function*() {
      const now = yield* at("2026-12-01T02:59:59Z")
      const month = monthOf(now, BA)
      expect(iso(month.start)).toBe("2026-11-01T03:00:00.000Z")
      expect(iso(month.end)).toBe("2026-12-01T03:00:00.000Z")
      const next = monthOf(yield* at("2026-12-01T03:00:00Z"), BA)
      expect(iso(next.start)).toBe("2026-12-01T03:00:00.000Z")
      expect(iso(next.end)).toBe("2027-01-01T03:00:00.000Z")
    }))

  it.effect("days start at local midnight", () =>
    Effect.gen(function*() {
      const late = dayOf(yield* at("2026-11-22T02:59:59.999Z"), BA)
      expect(iso(late.start)).toBe("2026-11-21T03:00:00.000Z")
      expect(iso(late.end)).toBe("2026-11-22T03:00:00.000Z")
      const early = dayOf(yield* at("2026-11-22T03:00:00Z"), BA)
      expect(iso(early.start)).toBe("2026-11-22T03:00:00.000Z")
    }))

  it.effect("February and leap years", () =>
    Effect.gen(function*() {
      const feb = monthOf(yield* at("2028-02-15T12:00:00Z"), BA)
      expect(iso(feb.start)).toBe("2028-02-01T03:00:00.000Z")
      expect(iso(feb.end)).toBe("2028-03-01T03:00:00.000Z")
      const dec = monthOf(yield* at("2026-12-31T23:00:00Z"), BA)
      expect(iso(dec.end)).toBe("2027-01-01T03:00:00.000Z")
    }))

  it.effect("DST: 23- and 25-hour days and months across a change (Europe/London)", () =>
    Effect.gen(function*() {
      const spring = dayOf(yield* at("2026-03-29T12:00:00Z"), "Europe/London")
      expect(iso(spring.start)).toBe("2026-03-29T00:00:00.000Z")
      expect(iso(spring.end)).toBe("2026-03-29T23:00:00.000Z")
      const autumn = dayOf(yield* at("2026-10-25T12:00:00Z"), "Europe/London")
      expect(autumn.end.getTime() - autumn.start.getTime()).toBe(25 * 3_600_000)
      const march = monthOf(yield* at("2026-03-31T12:00:00Z"), "Europe/London")
      expect(iso(march.start)).toBe("2026-03-01T00:00:00.000Z")
      expect(iso(march.end)).toBe("2026-03-31T23:00:00.000Z")
    }))

  it.effect("a day whose midnight does not exist starts at its first instant (Santiago, 2026-09-06)", () =>
    Effect.gen(function*() {
      // Chile moves clocks from 24:00 to 01:00: local midnight never happens that day.
      const day = dayOf(yield* at("2026-09-06T15:00:00Z"), "America/Santiago")
      expect(iso(day.start)).toBe("2026-09-06T04:00:00.000Z")
      expect(day.end.getTime() - day.start.getTime()).toBe(23 * 3_600_000)
    }))

  it.effect("minute windows roll over on the minute", () =>
    Effect.gen(function*() {
      const a = minuteOf(yield* at("2026-11-21T23:59:59.999Z"))
      expect(iso(a.start)).toBe("2026-11-21T23:59:00.000Z")
      expect(iso(a.end)).toBe("2026-11-22T00:00:00.000Z")
      yield* TestClock.adjust("1 millis")
      const b = minuteOf(yield* Clock.currentTimeMillis)
      expect(iso(b.start)).toBe("2026-11-22T00:00:00.000Z")
    }))

  it("the days of a month so far: local midnights, the 23-hour day of a DST change included, none past the month", () => {
    const november = monthOf(Date.parse("2026-11-25T12:00:00Z"), BA)
    const soFar = daysOf(november, BA, Date.parse("2026-11-25T12:00:00Z"))
    expect(soFar).toHaveLength(25)
    expect(iso(soFar[0]!.start)).toBe("2026-11-01T03:00:00.000Z")
    expect(iso(soFar[24]!.start)).toBe("2026-11-25T03:00:00.000Z")
    const march = monthOf(Date.parse("2026-03-15T12:00:00Z"), "Europe/London")
    const all = daysOf(march, "Europe/London", march.end.getTime() + 86_400_000)
    expect(all).toHaveLength(31)
    expect(all.map((day) => day.end.getTime() - day.start.getTime()).filter((ms) => ms !== 86_400_000)).toEqual([23 * 3_600_000])
    expect(all[30]!.end.getTime()).toBe(march.end.getTime())
  })

  it("validates IANA timezones", () => {
    expect(isValidTimezone(BA)).toBe(true)
    expect(isValidTimezone("Mars/Olympus")).toBe(false)
  })
})
