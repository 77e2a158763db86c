import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** v1's test event goes out even while the webhook is disabled: its delivery says so. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table webhook_deliveries add column sends_when_disabled boolean not null default false`
})
