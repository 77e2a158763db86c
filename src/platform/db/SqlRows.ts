/**
 * Rows decoded where they are read: each repository states its rows as schemas, and a statement's
 * rows go through `SqlSchema` before any code sees them. A row the schema rejects fails there,
 * typed (`MalformedRow`), instead of travelling on as a value of the wrong type.
 *
 * The statements are built with the SQL client's template (its parameters bound), so the request
 * `SqlSchema` encodes is the statement itself: only its rows need a schema. Each decoder is built
 * once, where the repository is made.
 */
import { Data, Effect, type Option, Result, Schema } from "effect"
import { type SqlError, SqlSchema } from "effect/sql"
import { describeIssues } from "../decoding/SchemaIssues.js"

/**
 * A row its statement's schema rejected. Schema reports no input by default, so this names the
 * statement, the fields and what they expected, never a value: it can be logged as it is.
 */
export class MalformedRow extends Data.TaggedError("MalformedRow")<{
  readonly statement: string
  readonly issues: string
}> {
  override get message() {
    return `A row of "${this.statement}" does not match its schema: ${this.issues}`
  }
}

/** A statement as the repositories run it: its rows, or the database's failure. */
type Rows = Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>

/** A row schema: decodes without services. */
export type RowSchema = Schema.Top & { readonly DecodingServices: never }

const asMalformed = (statement: string) => (error: Schema.SchemaError) =>
  Effect.fail(new MalformedRow({ statement, issues: describeIssues(error.issue) }))

const run = (rows: Rows) => rows

/** Every row of `statement`, decoded by `Row`. */
export const findAll = <Row extends RowSchema>(statement: string, Row: Row) => {
  const find = SqlSchema.findAll({ Request: Schema.Any, Result: Row, execute: run })
  return (rows: Rows): Effect.Effect<Array<Row["Type"]>, SqlError.SqlError | MalformedRow> =>
    Effect.catchTag(find(rows), "SchemaError", asMalformed(statement))
}

/** The first row of `statement` decoded by `Row`, if there is one. */
export const findOneOption = <Row extends RowSchema>(statement: string, Row: Row) => {
  const find = SqlSchema.findOneOption({ Request: Schema.Any, Result: Row, execute: run })
  return (rows: Rows): Effect.Effect<Option.Option<Row["Type"]>, SqlError.SqlError | MalformedRow> =>
    Effect.catchTag(find(rows), "SchemaError", asMalformed(statement))
}

/** The first row of `statement` decoded by `Row`; a statement that always answers one row (an aggregate, a function call). */
export const single = <Row extends RowSchema>(statement: string, Row: Row) => {
  const find = SqlSchema.findOne({ Request: Schema.Any, Result: Row, execute: run })
  return (rows: Rows): Effect.Effect<Row["Type"], SqlError.SqlError | MalformedRow> =>
    find(rows).pipe(
      Effect.catchTag("SchemaError", asMalformed(statement)),
      Effect.catchTag("NoSuchElementError", () => Effect.fail(new MalformedRow({ statement, issues: "one row expected, none answered" })))
    )
}

/**
 * Every row of `statement`, each decoded by `Row` on its own, beside its key (`keyOf`, read from
 * the row as it came). For the reads that answer a batch of requests at once: one malformed row
 * fails only the requests that read it, not the others of its batch.
 */
export const findEach = <Row extends RowSchema, K>(statement: string, Row: Row, keyOf: (row: { readonly [field: string]: unknown }) => K) => {
  const decode = Schema.decodeUnknownResult(Row)
  return (rows: Rows): Effect.Effect<Array<readonly [K, Result.Result<Row["Type"], MalformedRow>]>, SqlError.SqlError> =>
    Effect.map(rows, (found) =>
      found.map((row, index) => {
        const decoded = decode(row)
        return [
          keyOf(row as { readonly [field: string]: unknown }),
          // the row's place in the answer leads its issues' paths, as when the rows are decoded together
          Result.mapError(decoded, (error) => new MalformedRow({ statement, issues: describeIssues(error.issue, 3, [index]) }))
        ] as readonly [K, Result.Result<Row["Type"], MalformedRow>]
      }))
}
