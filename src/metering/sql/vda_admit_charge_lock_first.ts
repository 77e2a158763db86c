/**
 * `vda_admit_charge` for the shared lanes, which wait for a lock only briefly
 * (`vda_admit_charge_shared`, `vda_admit_keys`): the batch's counters are locked first, and one
 * that is missing is created after, then all are locked again. Why, and why only there, is in
 * `vda_admit_charge.ts`, the source of both.
 */
import { admitChargeSource } from "./vda_admit_charge.js"

export default admitChargeSource("vda_admit_charge_lock_first", "lock first")
