/**
 * The batches of several keys in one statement and one commit (`ADMIT_KEYS` in
 * src/metering/Admission.ts): a listener's shared lane, where each key's requests are decided by
 * `vda_admit_charge_or_busy` as they would be alone. The answer holds one element per key, in
 * order: its answer, null for an unknown key, or `{"busy": true}`.
 *
 * Each key comes as a JSON array of `vda_admit_charge`'s arguments in their order: dates as ISO
 * text, integer arrays as PostgreSQL array text, the counters' limits as JSON numbers or null.
 */
import { admitChargeArguments } from "./vda_admit_charge.js"

const COUNTER_LIMIT = admitChargeArguments.indexOf("p_counter_limit integer[]")

/** Argument `i` of a key's array `b`, as `vda_admit_charge` takes it. */
const argumentOf = (argument: string, i: number) => {
  const type = argument.split(" ")[1]!
  if (type === "text") return `b->>${i}`
  if (i === COUNTER_LIMIT) {
    return `array(select (e.value #>> '{}')::integer from jsonb_array_elements(b->${i}) with ordinality as e(value, n) order by e.n)`
  }
  if (type === "integer[]") return `(b->>${i})::integer[]`
  return `array(select e.value from jsonb_array_elements_text(b->${i}) with ordinality as e(value, n) order by e.n)::${type}`
}

export default `create or replace function vda_admit_keys(p_batches jsonb) returns jsonb
language plpgsql as $fn$
declare
  b jsonb;
  answers jsonb := '[]'::jsonb;
begin
  for b in select e.value from jsonb_array_elements(p_batches) with ordinality as e(value, n) order by e.n loop
    answers := answers || jsonb_build_array(vda_admit_charge_or_busy(
      ${admitChargeArguments.map(argumentOf).join(",\n      ")}));
  end loop;
  return answers;
end
$fn$
`
