import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A delivery remembers the trace of what caused it (W3C `traceparent`, null when tracing was
 * off), so each attempt's span links to the operation, even one made after a restart.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table webhook_deliveries add column trace_parent text`
})
