import { Effect } from "effect"

/**
 * Was: an account's status read in one statement (`vda_account_status`). The function is
 * installed from its source now (src/accounts/sql/), after the migrations.
 */
export default Effect.void
