import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Leases: one row per job that only one process at a time may run (the reconciler), held by the
 * process that last renewed it until it expires.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table leases (
      name text primary key,
      holder text not null,
      expires_at timestamptz not null
    )`
})
