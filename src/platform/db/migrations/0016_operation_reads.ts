import { Effect } from "effect"

/**
 * Was: the two hot reads of operations as functions (`vda_operations_by_id`,
 * `vda_active_modules_operations`). They are installed from their sources now
 * (src/operations/sql/), after the migrations.
 */
export default Effect.void
