/**
 * The log line's JSON is written out by hand for speed: it must read back as exactly the object a
 * JSON.stringify of the same fields gives, whatever the text holds (quotes, backslashes, control
 * characters, lone surrogates, non-ASCII), with its timestamp first; and a pretty line keeps its shape.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatLine, formatRequestLine, type LogFields } from "../../src/platform/observability/Logging.js"

const text = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("", "\"", "\\", "\u0000", "\u2028", "\ud800", "a\"b\\c\nd"))
const value = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(undefined))
const fields = fc.dictionary(fc.oneof(text, fc.constantFrom("timestamp", "level", "message", "requestId", "status")), value)

/** What the line must read back as: the object JSON.stringify writes, the line's own names kept. */
const expected = (date: Date, level: string, message: string, given: LogFields) => {
  const line: Record<string, unknown> = { timestamp: date.toISOString(), level: level.toLowerCase(), message }
  for (const name in given) {
    if (given[name] !== undefined && !Object.hasOwn(line, name)) Object.defineProperty(line, name, { value: given[name], enumerable: true })
  }
  return JSON.parse(JSON.stringify(line))
}

describe("a JSON log line", () => {
  it("reads back as the object JSON.stringify gives for the same fields, its timestamp first", () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }), fc.constantFrom("INFO", "WARN", "ERROR"), text, fields,
        (date, level, message, given) => {
          const line = formatLine("json", date, level, message, given)
          expect(JSON.parse(line)).toEqual(expected(date, level, message, given))
          expect(line.startsWith(`{"timestamp":"${date.toISOString()}",`)).toBe(true)
        }),
      { numRuns: 2_000 }
    )
  })

  it("carries each request's own timestamp, also within one millisecond and back again", () => {
    const first = new Date(1_700_000_000_000)
    const next = new Date(1_700_000_000_001)
    for (const date of [first, first, next, first]) {
      expect(JSON.parse(formatLine("json", date, "INFO", "request", {})).timestamp).toBe(date.toISOString())
    }
  })

  it("for a request (the access log), is the line formatLine writes for the same fields, in both formats", () => {
    const optional = fc.option(text, { nil: undefined })
    const number = fc.oneof(fc.double(), fc.integer())
    fc.assert(
      fc.property(
        fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
        fc.constantFrom("json" as const, "pretty" as const),
        fc.record({
          method: fc.oneof(fc.constantFrom("GET", "POST"), text),
          route: fc.oneof(fc.constantFrom("/v2/vehicles/{plate}", "/v2/status"), text),
          status: number,
          durationMs: number,
          bytes: number,
          environment: fc.oneof(fc.constantFrom("production", "sandbox"), text),
          requestId: optional,
          accountId: optional,
          traceId: optional
        }),
        (date, format, fields) => {
          expect(formatRequestLine(format, date.getTime(), fields)).toBe(formatLine(format, date, "INFO", "request", { ...fields }))
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("in the pretty format, starts with the same timestamp and quotes values with spaces", () => {
    const date = new Date(1_700_000_000_123)
    expect(formatLine("pretty", date, "INFO", "request", { route: "/v2/status", note: "a b", skipped: undefined }))
      .toBe(`${date.toISOString()} INFO  request route=/v2/status note="a b"`)
  })
})
