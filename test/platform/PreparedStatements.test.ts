/**
 * The pool's named statements: a statement is parsed once per connection and then only bound,
 * its rows carry the SQL client's result names, and a failure is the client's `SqlError`.
 */
import { expect, layer } from "@effect/vitest"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { PreparedStatements } from "../../src/platform/Database.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

const PREPARED = "select name, statement from pg_prepared_statements order by name"

// one connection: every statement runs on the session it was prepared on
layer(freshDatabaseLayer(1), { excludeTestServices: true })("prepared statements", (it) => {
  it.effect("a statement is prepared once per connection, named after its text; its rows have the client's names", () =>
    Effect.gen(function*() {
      const prepared = yield* PreparedStatements
      const text = "select $1::integer + 1 as next_value, 'x' as snake_case_name"
      for (const value of [1, 2, 3]) {
        expect(yield* prepared.execute(text, [value])).toEqual([{ nextValue: value + 1, snakeCaseName: "x" }])
      }
      const statements = yield* prepared.execute<{ name: string; statement: string }>(PREPARED, [])
      // the session holds each text once, under its own name: three runs, one preparation
      expect(statements.filter((s) => s.statement === text)).toHaveLength(1)
      expect(statements.filter((s) => s.statement === PREPARED)).toHaveLength(1)
      expect(new Set(statements.map((s) => s.name)).size).toBe(statements.length)
    }))

  it.effect("a failing statement fails with SqlError, and the connection serves the next one", () =>
    Effect.gen(function*() {
      const prepared = yield* PreparedStatements
      const failed = yield* Effect.flip(prepared.execute("select 1 / $1::integer as ratio", [0]))
      expect(failed).toBeInstanceOf(SqlError)
      expect(yield* prepared.execute("select 1 / $1::integer as ratio", [1])).toEqual([{ ratio: 1 }])
    }))
})
