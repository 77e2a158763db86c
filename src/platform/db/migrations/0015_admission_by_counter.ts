import { Effect } from "effect"

/**
 * Was: admission decided counter by counter when a batch fits (`vda_admit_charge`), in arrival
 * order only when it does not (`vda_admit_charge_in_order`), with the key's account read by
 * `vda_key_account`; they replaced `vda_admit_consume`. The functions are installed from their
 * sources now (src/metering/sql/, src/accounts/sql/), after the migrations.
 */
export default Effect.void
