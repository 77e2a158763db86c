import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A shared lane's batch no longer catches a lock it waited too long for, key by key, in a
 * subtransaction each (`vda_admit_charge_or_busy`): the whole batch fails and goes to its keys'
 * own lanes (`vda_admit_charge_shared`, installed from its source).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function if exists vda_admit_charge_or_busy`
  yield* sql`delete from database_functions where name = 'vda_admit_charge_or_busy'`
})
