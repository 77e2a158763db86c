/**
 * Rows decoded where they are read: a row its schema rejects fails as a MalformedRow naming the
 * statement and the field, never the value it held.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Result, Schema } from "effect"
import * as SqlRows from "../../src/platform/db/SqlRows.js"

const Row = Schema.Struct({ plate: Schema.String, used: Schema.Int, at: Schema.Date })
const good = { plate: "AB123CD", used: 3, at: new Date("2026-11-21T15:00:00Z") }
/** Values that must never show in an error or a log line. */
const bad = { plate: "AB123CD", used: "vda_live_secret", at: "AB999ZZ" }

const rows = (...found: ReadonlyArray<unknown>) => Effect.succeed(found)

const failureOf = <A>(effect: Effect.Effect<A, unknown>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (!Exit.isFailure(exit)) throw new Error("expected a failure")
    return Cause.squash(exit.cause)
  })

describe("SqlRows", () => {
  it.effect("decodes every row of a statement", () =>
    Effect.gen(function*() {
      const find = SqlRows.findAll("counters", Row)
      expect(yield* find(rows(good, good))).toEqual([good, good])
      expect(yield* find(rows())).toEqual([])
    }))

  it.effect("a malformed row fails typed, naming the statement and the field but no value", () =>
    Effect.gen(function*() {
      const failure = yield* failureOf(SqlRows.findAll("counters", Row)(rows(good, bad)))
      expect(failure).toBeInstanceOf(SqlRows.MalformedRow)
      const malformed = failure as SqlRows.MalformedRow
      expect(malformed._tag).toBe("MalformedRow")
      expect(malformed.statement).toBe("counters")
      expect(malformed.message).toMatch(/^A row of "counters" does not match its schema: 1\.used: Expected/)
      expect(`${malformed.message} ${malformed.issues} ${Cause.pretty(Cause.die(malformed))}`).not.toMatch(/vda_live_secret|AB999ZZ|AB123CD/)
    }))

  it.effect("the first row, if any", () =>
    Effect.gen(function*() {
      const find = SqlRows.findOneOption("a counter", Row)
      expect(yield* find(rows(good))).toEqual(Option.some(good))
      expect(yield* find(rows())).toEqual(Option.none())
      expect(yield* failureOf(find(rows(bad)))).toBeInstanceOf(SqlRows.MalformedRow)
    }))

  it.effect("a statement that always answers one row: none is malformed too", () =>
    Effect.gen(function*() {
      const find = SqlRows.single("the count", Row)
      expect(yield* find(rows(good))).toEqual(good)
      expect(yield* failureOf(find(rows(bad)))).toBeInstanceOf(SqlRows.MalformedRow)
      const none = yield* failureOf(find(rows()))
      expect(none).toBeInstanceOf(SqlRows.MalformedRow)
      expect((none as SqlRows.MalformedRow).message).toMatch(/"the count".*one row expected/)
    }))

  it.effect("row by row, beside each row's key: a malformed row fails alone, naming no value", () =>
    Effect.gen(function*() {
      const other = { ...good, plate: "AC456EF" }
      const found = yield* SqlRows.findEach("counters", Row, (row) => row.plate)(rows(other, { ...bad, plate: "AB123CD" }))
      expect(found.map(([key]) => key)).toEqual(["AC456EF", "AB123CD"])
      expect(found[0]![1]).toEqual(Result.succeed(other))
      const [, failed] = found[1]!
      expect(Result.isFailure(failed)).toBe(true)
      const malformed = Result.isFailure(failed) ? failed.failure : undefined
      expect(malformed).toBeInstanceOf(SqlRows.MalformedRow)
      expect(malformed!.message).toMatch(/^A row of "counters" does not match its schema: 1\.used: Expected/)
      expect(`${malformed!.message} ${malformed!.issues}`).not.toMatch(/vda_live_secret|AB999ZZ/)
    }))

  it.effect("the database's own failures pass through as they are", () =>
    Effect.gen(function*() {
      const failure = new Error("connection lost")
      const find = SqlRows.findAll("counters", Row)
      expect(yield* failureOf(find(Effect.fail(failure) as never))).toBe(failure)
    }))
})
