import { Effect } from "effect"

/**
 * Was: a batch's admission decided from totals the caller adds up (`vda_admit_charge`), and the
 * account's fingerprint an md5 of its entitled row (`vda_key_account`). The functions are
 * installed from their sources now (src/metering/sql/, src/accounts/sql/), after the migrations.
 */
export default Effect.void
