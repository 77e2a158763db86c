/**
 * `vda_admit_charge` for a batch of a listener's shared lane, which must not wait behind one
 * account: when the key's counters are locked (an administrator's transaction, another process's
 * batch of that key), it gives up after `SHARED_LOCK_WAIT` and answers `{"busy": true}`, its work
 * undone (the exception block is its own subtransaction). The caller then hands the key's
 * requests to the key's own lane, which waits for the lock.
 */
import { admitChargeArguments } from "./vda_admit_charge.js"
import { callByName } from "./vda_admit_charge_in_order.js"

/** How long a shared batch waits for one key's counters before handing the key to its own lane. */
export const SHARED_LOCK_WAIT = "5ms"

export default `create or replace function vda_admit_charge_or_busy(
  ${admitChargeArguments.join(",\n  ")}
) returns jsonb
language plpgsql as $fn$
begin
  perform set_config('lock_timeout', '${SHARED_LOCK_WAIT}', true);
  return ${callByName("vda_admit_charge", admitChargeArguments)};
exception when lock_not_available then
  return '{"busy": true}'::jsonb;
end
$fn$
`
