/**
 * Rows decoded where they are read: a row its schema rejects fails as a MalformedRow naming the
 * statement and the field, never the value it held.
 */
import { Cause, Effect, Exit, Option, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as SqlRows from "../../src/platform/SqlRows.js"

const Row = Schema.Struct({ plate: Schema.String, used: Schema.Int, at: Schema.Date })
const good = { plate: "AB123CD", used: 3, at: new Date("2026-11-21T15:00:00Z") }
/** Values that must never show in an error or a log line. */
const bad = { plate: "AB123CD", used: "vda_live_secret", at: "AB999ZZ" }

const rows = (...found: ReadonlyArray<unknown>) => Effect.succeed(found)

const failureOf = <A>(effect: Effect.Effect<A, unknown>) => {
  const exit = Effect.runSyncExit(effect)
  if (!Exit.isFailure(exit)) throw new Error("expected a failure")
  return Cause.squash(exit.cause)
}

describe("SqlRows", () => {
  it("decodes every row of a statement", () => {
    const find = SqlRows.findAll("counters", Row)
    expect(Effect.runSync(find(rows(good, good)))).toEqual([good, good])
    expect(Effect.runSync(find(rows()))).toEqual([])
  })

  it("a malformed row fails typed, naming the statement and the field but no value", () => {
    const failure = failureOf(SqlRows.findAll("counters", Row)(rows(good, bad)))
    expect(failure).toBeInstanceOf(SqlRows.MalformedRow)
    const malformed = failure as SqlRows.MalformedRow
    expect(malformed._tag).toBe("MalformedRow")
    expect(malformed.statement).toBe("counters")
    expect(malformed.message).toMatch(/^A row of "counters" does not match its schema: 1\.used: Expected/)
    expect(`${malformed.message} ${malformed.issues} ${Cause.pretty(Cause.die(malformed))}`).not.toMatch(/vda_live_secret|AB999ZZ|AB123CD/)
  })

  it("the first row, if any", () => {
    const find = SqlRows.findOneOption("a counter", Row)
    expect(Effect.runSync(find(rows(good)))).toEqual(Option.some(good))
    expect(Effect.runSync(find(rows()))).toEqual(Option.none())
    expect(failureOf(find(rows(bad)))).toBeInstanceOf(SqlRows.MalformedRow)
  })

  it("a statement that always answers one row: none is malformed too", () => {
    const find = SqlRows.single("the count", Row)
    expect(Effect.runSync(find(rows(good)))).toEqual(good)
    expect(failureOf(find(rows(bad)))).toBeInstanceOf(SqlRows.MalformedRow)
    const none = failureOf(find(rows()))
    expect(none).toBeInstanceOf(SqlRows.MalformedRow)
    expect((none as SqlRows.MalformedRow).message).toMatch(/"the count".*one row expected/)
  })

  it("row by row, beside each row's key: a malformed row fails alone, naming no value", () => {
    const other = { ...good, plate: "AC456EF" }
    const found = Effect.runSync(SqlRows.findEach("counters", Row, (row) => row.plate)(rows(other, { ...bad, plate: "AB123CD" })))
    expect(found.map(([key]) => key)).toEqual(["AC456EF", "AB123CD"])
    expect(found[0]![1]).toEqual(Result.succeed(other))
    const [, failed] = found[1]!
    expect(Result.isFailure(failed)).toBe(true)
    const malformed = Result.isFailure(failed) ? failed.failure : undefined
    expect(malformed).toBeInstanceOf(SqlRows.MalformedRow)
    expect(malformed!.message).toMatch(/^A row of "counters" does not match its schema: 1\.used: Expected/)
    expect(`${malformed!.message} ${malformed!.issues}`).not.toMatch(/vda_live_secret|AB999ZZ/)
  })

  it("the database's own failures pass through as they are", () => {
    const failure = new Error("connection lost")
    const find = SqlRows.findAll("counters", Row)
    expect(failureOf(find(Effect.fail(failure) as never))).toBe(failure)
  })
})
