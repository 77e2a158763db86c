/**
 * `vda_admit_charge_lock_first` for a batch of a listener's shared lane, which must not wait behind
 * one account: it waits at most `SHARED_LOCK_WAIT` for a lock (the key's counters held by an
 * administrator's transaction, another process's batch of that key), then fails with
 * `lock_not_available`, the whole statement undone. The caller then hands the batch's requests
 * to their keys' own lanes, which wait (src/metering/Admission.ts).
 *
 * No exception block catches the failure here: one makes every call a subtransaction, which cost a
 * fifth of PostgreSQL's time per request with a thousand busy accounts.
 */
import { admitChargeArguments } from "./vda_admit_charge.js"
import { callByName } from "./vda_admit_charge_in_order.js"

/** How long a shared batch waits for a lock before it gives up, undone. */
export const SHARED_LOCK_WAIT = "5ms"

/** The shared lanes' lock wait, set for the rest of the statement's transaction. */
export const waitBriefly = `perform set_config('lock_timeout', '${SHARED_LOCK_WAIT}', true);`

export default `create or replace function vda_admit_charge_shared(
  ${admitChargeArguments.join(",\n  ")}
) returns jsonb
language plpgsql as $fn$
begin
  ${waitBriefly}
  return ${callByName("vda_admit_charge_lock_first", admitChargeArguments)};
end
$fn$
`
