import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Claims: which process runs an operation or a delivery on the inline engine, until when. Several
 * API processes on one database each run only what they claimed; work whose claim lapsed (its
 * process died) is taken over by another.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["operations", "webhook_deliveries"]) {
    yield* sql`alter table ${sql(table)} add column claimed_by text, add column claimed_until timestamptz`
  }
})
