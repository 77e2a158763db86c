import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The database's functions come from their sources, installed after the migrations
 * (platform/DatabaseFunctions.ts): each function's SHA-256 of the source last installed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table database_functions (
      name text primary key,
      sha256 text not null,
      installed_at timestamptz not null default now()
    )`
})
