import { Effect } from "effect"

/**
 * Was: `vda_consume` learned `p_after` (a request's charges apply only after its count), and
 * `vda_admit_consume` replaced `vda_admit` (one round trip and one commit per batch of a key's
 * requests). The functions are installed from their sources now (src/metering/sql/), after the
 * migrations.
 */
export default Effect.void
