/**
 * Schema building blocks shared by every capability's contract.
 */
import { Schema, SchemaTransformation } from "effect"

/**
 * A date-time on the wire: RFC 3339, always emitted in UTC with milliseconds. The annotations are
 * the wire string's (the side OpenAPI documents), so the document has one `DateTime` schema.
 */
export const DateTimeUtc = Schema.String.annotate({
  identifier: "DateTime",
  format: "date-time",
  description: "RFC 3339, in UTC with milliseconds, e.g. 2026-11-21T23:00:00.000Z",
  expected: "a string that will be decoded as a Date"
}).pipe(Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString))

export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** An allowance: null is unlimited, 0 is disabled. */
export const Limit = Schema.NullOr(NonNegativeInt)

