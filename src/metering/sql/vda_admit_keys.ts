/**
 * The batches of several keys in one statement and one commit (`ADMIT_KEYS` in
 * src/metering/Admission.ts): a listener's shared lane, where each key's requests are decided by
 * `vda_admit_charge_lock_first` as they would be alone, waiting for locks as
 * `vda_admit_charge_shared` does (briefly, then failing, all undone). The answer holds one
 * element per key, in order: its answer, or null for an unknown key.
 *
 * Each of `vda_admit_charge`'s arguments comes as a text array with one element per key: the
 * argument itself for a text, else its PostgreSQL array literal, cast back here.
 */
import { admitChargeArguments } from "./vda_admit_charge.js"
import { nameOf, typeOf } from "./vda_admit_charge_in_order.js"
import { waitBriefly } from "./vda_admit_charge_shared.js"

/** Key `k`'s value of `argument`, from its text. */
const keyValue = (argument: string) =>
  typeOf(argument) === "text" ? `${nameOf(argument)}[k]` : `${nameOf(argument)}[k]::${typeOf(argument)}`

export default `create or replace function vda_admit_keys(
  ${admitChargeArguments.map((argument) => `${nameOf(argument)} text[]`).join(",\n  ")}
) returns jsonb
language plpgsql as $fn$
declare
  answers jsonb := '[]'::jsonb;
begin
  ${waitBriefly}
  for k in 1 .. coalesce(cardinality(${nameOf(admitChargeArguments[0]!)}), 0) loop
    answers := answers || jsonb_build_array(vda_admit_charge_lock_first(
      ${admitChargeArguments.map(keyValue).join(",\n      ")}));
  end loop;
  return answers;
end
$fn$
`
