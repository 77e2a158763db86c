import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A delivery's attempt series: 1 for the original, one more per resend. Each series runs as its
 * own delivery workflow, so a resend never collides with the workflow id of an earlier series.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table webhook_deliveries add column series integer not null default 1`
})
