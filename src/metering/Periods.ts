/**
 * Metering periods. Months and days follow the account's timezone (DST-safe: the boundaries are
 * the first instants of the local month or day); request windows are UTC minutes.
 */
import { DateTime } from "effect"

export interface Period {
  readonly start: Date
  readonly end: Date
}

export const DEFAULT_TIMEZONE = "America/Argentina/Buenos_Aires"

export const isValidTimezone = (timeZone: string): boolean => DateTime.zoneMakeNamed(timeZone)._tag === "Some"

// Building a zone (an Intl.DateTimeFormat) is expensive: one per timezone name, kept.
const zones = new Map<string, DateTime.TimeZone>()
const zoneOf = (timeZone: string): DateTime.TimeZone => {
  let zone = zones.get(timeZone)
  if (zone === undefined) {
    zone = DateTime.zoneMakeNamedUnsafe(timeZone)
    zones.set(timeZone, zone)
  }
  return zone
}

const localStartOf = (at: number, timeZone: string, unit: "month" | "day"): DateTime.Zoned =>
  DateTime.startOf(DateTime.makeZonedUnsafe(at, { timeZone: zoneOf(timeZone) }), unit)

/**
 * The period of `unit` containing `at`. The next boundary is found from an instant safely inside
 * the next period (32 days after a month starts, 36 hours after a day starts), so 23- and 25-hour
 * days and months of any length come out right.
 */
const periodOf = (at: number, timeZone: string, unit: "month" | "day"): Period => {
  const start = localStartOf(at, timeZone, unit)
  const startMillis = DateTime.toEpochMillis(start)
  const insideNext = startMillis + (unit === "month" ? 32 * 24 : 36) * 3_600_000
  const end = localStartOf(insideNext, timeZone, unit)
  return { start: new Date(startMillis), end: new Date(DateTime.toEpochMillis(end)) }
}

// Every request asks for the current month and day: remember the last answer per unit and timezone
// (a map per unit, so no key is built per call).
const latest = { month: new Map<string, Period>(), day: new Map<string, Period>() }
const cachedPeriodOf = (at: number, timeZone: string, unit: "month" | "day"): Period => {
  const hit = latest[unit].get(timeZone)
  if (hit !== undefined && hit.start.getTime() <= at && at < hit.end.getTime()) return hit
  const period = periodOf(at, timeZone, unit)
  latest[unit].set(timeZone, period)
  return period
}

export const monthOf = (at: number, timeZone: string): Period => cachedPeriodOf(at, timeZone, "month")

export const dayOf = (at: number, timeZone: string): Period => cachedPeriodOf(at, timeZone, "day")

/** The days of `month` that have started by `until`, in order (without disturbing the per-request cache). */
export const daysOf = (month: Period, timeZone: string, until: number): ReadonlyArray<Period> => {
  const days: Array<Period> = []
  for (let at = month.start.getTime(); at <= until && at < month.end.getTime();) {
    const day = periodOf(at, timeZone, "day")
    days.push(day)
    at = day.end.getTime()
  }
  return days
}

// Every request asks for its minute: the current one is given again while it lasts (periods are never changed).
let currentMinute: Period = { start: new Date(0), end: new Date(60_000) }

export const minuteOf = (at: number): Period => {
  const start = Math.floor(at / 60_000) * 60_000
  if (currentMinute.start.getTime() === start) return currentMinute
  const minute = { start: new Date(start), end: new Date(start + 60_000) }
  // an earlier minute (a request that waited) does not displace the current one
  if (start > currentMinute.start.getTime()) currentMinute = minute
  return minute
}
