import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * v1 reports: operations of kind `report` (the vehicle and the account's modules). At most one
 * active report per account, environment and plate: an identical request reuses it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table operations drop constraint operations_kind_check`
  yield* sql`alter table operations add constraint operations_kind_check check (kind in ('modules', 'vehicle', 'report'))`
  yield* sql`
    create unique index operations_active_reports on operations (account_id, environment, plate)
    where kind = 'report' and status in ('queued', 'processing')`
})
