import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The two hot reads of operations as functions: a batch of polls (by id) and a batch of module
 * queries that may reuse an active operation (by reuse key), each operation with its module rows
 * as one JSON column.
 *
 * As plain statements, PostgreSQL planned them on every call: about 0.26 ms of planning for
 * 0.2 ms of execution. A PL/pgSQL function keeps its statement's plan for the session, and with a
 * generic plan from the first call it plans it once.
 */
const returned = `
  id text, account_id text, environment text, kind text, api_version text, plate text, modules_key text,
  status text, input jsonb, result jsonb, started_at timestamptz, created_at timestamptz, updated_at timestamptz,
  modules json`

const selected = `
  o.id, o.account_id, o.environment, o.kind, o.api_version, o.plate, o.modules_key, o.status, o.input, o.result,
  o.started_at, o.created_at, o.updated_at,
  coalesce((
    select json_agg(json_build_object('operation_id', m.operation_id, 'module', m.module, 'status', m.status,
      'data', m.data, 'error', m.error, 'warnings', m.warnings, 'updated_at', m.updated_at))
    from operation_modules m where m.operation_id = o.id), '[]'::json)`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function vda_operations_by_id(p_ids text[])
    returns table (${returned})
    language plpgsql stable
    set plan_cache_mode = force_generic_plan as $fn$
    begin
      return query select ${selected} from operations o where o.id = any(p_ids);
    end $fn$`)
  yield* sql.unsafe(`
    create function vda_active_modules_operations(
      p_account text[], p_environment text[], p_api_version text[], p_plate text[], p_modules_key text[])
    returns table (${returned})
    language plpgsql stable
    set plan_cache_mode = force_generic_plan as $fn$
    begin
      return query select ${selected} from operations o
        where o.kind = 'modules' and o.status in ('queued', 'processing')
          and (o.account_id, o.environment, o.api_version, o.plate, o.modules_key) in (
            select * from unnest(p_account, p_environment, p_api_version, p_plate, p_modules_key));
    end $fn$`)
})
