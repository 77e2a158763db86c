import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The API version an operation was created through. v1 and v2 never share an operation: the
 * version is part of the reuse key, and an operation's events go out in its own version's shape.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table operations add column api_version text not null default 'v2' check (api_version in ('v1', 'v2'))`
  yield* sql`drop index operations_active_reuse`
  yield* sql`
    create unique index operations_active_reuse on operations (account_id, environment, api_version, plate, modules_key)
    where kind = 'modules' and status in ('queued', 'processing')`
})
