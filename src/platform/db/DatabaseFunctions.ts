/**
 * The database's functions, installed from their sources after the migrations. Each source is one
 * `create or replace function` statement in the folder of its feature; the composition root hands
 * the list to the migrator (`makeDatabaseLive`), so the platform knows no feature.
 *
 * A function is installed when its source is not the one last installed (by SHA-256, recorded in
 * `database_functions`), so any database, new or migrated by any earlier chain, ends with the
 * functions of the running code's sources. Changing a function's arguments or result type needs a
 * migration that drops the old one first: `create or replace` would make a second function beside
 * it for new arguments, and refuses a new result type.
 *
 * A function that keeps one generic plan per session looks rows up by key, and says so with
 * `KEYED_LOOKUP_PLANS` (test/platform/KeyedLookups.test.ts).
 */
import { createHash } from "node:crypto"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlRows from "./SqlRows.js"

/**
 * The settings of a function that keeps one generic plan per session (`force_generic_plan`: no
 * planning per call) and looks rows up by key. Its plan is made at the session's first call, often
 * on nearly empty tables, where reading a table whole is cheapest, by a sequential scan or by a
 * whole index under a merge or hash join, and the session would keep doing so as the table grows.
 * Those are off. A nested loop can still read a key's neighbours (every counter of an account, to
 * keep the few the batch names): where it could, the function looks each row up by its whole key
 * in a subquery of its own (`offset 0`, which PostgreSQL never flattens). Tested on grown tables
 * in test/platform/KeyedLookups.test.ts.
 */
export const KEYED_LOOKUP_PLANS = `set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_mergejoin = off
set enable_hashjoin = off`

export interface DatabaseFunction {
  readonly name: string
  /** One `create or replace function` statement. */
  readonly source: string
  readonly sha256: string
}

const CREATE_OR_REPLACE = /^create or replace function ([a-z_][a-z0-9_]*)\(/m

/** A function from its source; throws when the source is not one `create or replace function`. */
export const databaseFunction = (source: string): DatabaseFunction => {
  const name = CREATE_OR_REPLACE.exec(source)?.[1]
  if (name === undefined) throw new Error(`not a "create or replace function" statement: ${source.slice(0, 80)}`)
  return { name, source, sha256: createHash("sha256").update(source).digest("hex") }
}

/**
 * Installs, in list order and in one transaction, the functions whose sources changed since they
 * were last installed. One process at a time: the others wait, then find nothing to do.
 */
const installedRows = SqlRows.findAll("database functions", Schema.Struct({ name: Schema.String, sha256: Schema.String }))

export const installFunctions = Effect.fnUntraced(function*(functions: ReadonlyArray<DatabaseFunction>) {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`lock table database_functions in exclusive mode`
    const installed = new Map(
      (yield* installedRows(sql`select name, sha256 from database_functions`)).map((row) => [row.name, row.sha256])
    )
    for (const fn of functions) {
      if (installed.get(fn.name) === fn.sha256) continue
      yield* sql.unsafe(fn.source)
      yield* sql`
        insert into database_functions (name, sha256) values (${fn.name}, ${fn.sha256})
        on conflict (name) do update set sha256 = excluded.sha256, installed_at = now()`
      yield* Effect.logDebug("database function installed").pipe(Effect.annotateLogs("function", fn.name))
    }
  }))
})
