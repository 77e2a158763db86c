/** Dates and numbers as the console shows them: in the account's timezone, in plain English. */

const STYLES = {
  moment: { dateStyle: "medium", timeStyle: "short" },
  day: { day: "numeric", month: "short" }
} as const satisfies Record<string, Intl.DateTimeFormatOptions>

// building an Intl format is slow: one per style and timezone, kept
const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterOf = (style: keyof typeof STYLES, timeZone: string) => {
  const key = `${style}/${timeZone}`
  let format = formatters.get(key)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-GB", { timeZone, ...STYLES[style] })
    formatters.set(key, format)
  }
  return format
}

export type DateFormat = (date: Date | null) => string

/** "25 Nov 2026, 14:05"; `never` for no date. */
export const dateFormatOf = (timeZone: string): DateFormat => {
  const format = formatterOf("moment", timeZone)
  return (date) => (date === null ? "never" : format.format(date))
}

/** "25 Nov". */
export const dayLabelOf = (timeZone: string) => {
  const format = formatterOf("day", timeZone)
  return (date: Date) => format.format(date)
}

const numbers = new Intl.NumberFormat("en-US")

export const formatCount = (n: number | null) => (n === null ? "unlimited" : numbers.format(n))
