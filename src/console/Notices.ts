/**
 * Threshold notices: an allowance at 80% or more of its limit warns, at 100% it is reached (the
 * API refuses what it would take past the limit until the period resets).
 */
import type { MeterUsage, Usage } from "../metering/Api.js"
import { formatCount } from "./Format.js"

export interface Notice {
  readonly level: "warning" | "reached"
  readonly message: string
}

export const THRESHOLDS = { warning: 0.8, reached: 1 } as const

/** The allowances a notice is given for, with their names as the console shows them. */
export const ALLOWANCES = [
  ["plateQueries", "monthly plate queries"],
  ["moduleQueries", "monthly module queries"],
  ["uniquePlates", "unique plates today"],
  ["requests", "requests this minute"]
] as const satisfies ReadonlyArray<readonly [keyof Usage, string]>

const levelOf = (meter: MeterUsage): Notice["level"] | undefined => {
  if (meter.limit === null || meter.limit === 0) return undefined
  const share = meter.used / meter.limit
  return share >= THRESHOLDS.reached ? "reached" : share >= THRESHOLDS.warning ? "warning" : undefined
}

export const noticesOf = (usage: Usage, formatDate: (date: Date) => string): ReadonlyArray<Notice> =>
  ALLOWANCES.filter(([key]) => key !== "requests").flatMap(([key, label]) => {
    const meter = usage[key]
    const level = levelOf(meter)
    if (level === undefined) return []
    const percent = Math.floor((meter.used / meter.limit!) * 100)
    const message = level === "reached"
      ? `You have used all your ${label} (${formatCount(meter.used)} of ${formatCount(meter.limit)}). Requests that need more are refused until ${formatDate(meter.endsAt)}.`
      : `You have used ${percent}% of your ${label} (${formatCount(meter.used)} of ${formatCount(meter.limit)}). It resets ${formatDate(meter.endsAt)}.`
    return [{ level, message }]
  })
