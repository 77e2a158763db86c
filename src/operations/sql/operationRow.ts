import { ACTIVE_STATUSES, MODULES } from "../../../workflows/shared.js"

/**
 * The active statuses as SQL text, spliced into statements (not bound): the partial indexes on
 * active operations are used only when a query's predicate repeats theirs.
 */
export const ACTIVE_SQL = `(${ACTIVE_STATUSES.map((status) => `'${status}'`).join(", ")})`

/**
 * A module row's place in the contract's order of modules (fines, vtv, tax_debt, gnc), as SQL on
 * its `column`: an operation's modules are answered in that order, whichever landed last.
 */
export const moduleOrder = (column: string) => `array_position(array[${MODULES.map((m) => `'${m}'`).join(", ")}]::text[], ${column})`

/**
 * An operation as the two hot reads of operations answer it (`vda_operations_by_id` and
 * `vda_active_modules_operations`): its row, with its module rows as one JSON column.
 */
export const returned = `
  id text, account_id text, environment text, kind text, api_version text, plate text, modules_key text,
  status text, input jsonb, result jsonb, started_at timestamptz, created_at timestamptz, updated_at timestamptz,
  modules json`

/** The columns of `returned` for an operation `o`. */
export const selected = `
  o.id, o.account_id, o.environment, o.kind, o.api_version, o.plate, o.modules_key, o.status, o.input, o.result,
  o.started_at, o.created_at, o.updated_at,
  coalesce((
    select json_agg(json_build_object('operation_id', m.operation_id, 'module', m.module, 'status', m.status,
      'data', m.data, 'error', m.error, 'warnings', m.warnings, 'updated_at', m.updated_at) order by ${moduleOrder("m.module")})
    from operation_modules m where m.operation_id = o.id), '[]'::json)`
