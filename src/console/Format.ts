/** Dates and numbers as the console shows them: in the account's timezone, in plain English. */

const formatters = new Map<string, Intl.DateTimeFormat>()

export type DateFormat = (date: Date | null) => string

export const dateFormatOf = (timeZone: string): DateFormat => {
  let format = formatters.get(timeZone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "medium", timeStyle: "short" })
    formatters.set(timeZone, format)
  }
  const f = format
  return (date) => (date === null ? "never" : f.format(date))
}

const numbers = new Intl.NumberFormat("en-US")

export const formatCount = (n: number | null) => (n === null ? "unlimited" : numbers.format(n))
