/**
 * A batch of one key's requests on one listener decided in arrival order: every request's count
 * toward the per-minute limit, then its charges, through `vda_consume`. `vda_admit_charge` hands
 * it the batches whose totals do not fit, and a test holds the two to the same answers.
 *
 * The batch comes compactly: its minute windows, counters (meter, period, limit) and distinct
 * values (plates) once each, then per request its window, and per charge its request, counter,
 * amount and distinct value (0 for none), all by 1-based index. Charges apply only when the
 * caller's expected fingerprint of the account is the current one (`charged`). The answer, per
 * request in order: `admitted`, `used` (the per-minute counter after it, or before it when
 * refused), and when a charge was refused its 1-based position in the request (`refused`, else
 * 0) and the counter's `refused_used`.
 *
 * Generic plans, as `vda_consume`'s: its inputs are arrays whose sizes vary batch to batch.
 */
import { meter } from "./meters.js"
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

/** A batch's arguments: this function's, and the first of `vda_admit_charge`'s. */
export const batchArguments = [
  "p_hash text",
  "p_environment text",
  "p_expected text",
  "p_windows timestamptz[]",
  "p_request_window integer[]",
  "p_counter_meter text[]",
  "p_counter_period timestamptz[]",
  "p_counter_limit integer[]",
  "p_values text[]",
  "p_charge_request integer[]",
  "p_charge_counter integer[]",
  "p_charge_amount integer[]",
  "p_charge_value integer[]"
]

/** An argument's name and type, from its declaration ("p_hash text"). */
export const nameOf = (argument: string) => argument.split(" ")[0]!
export const typeOf = (argument: string) => argument.split(" ")[1]!

/** `fn` called with the arguments declared as `declarations`, by name. */
export const callByName = (fn: string, declarations: ReadonlyArray<string>) => `${fn}(${declarations.map(nameOf).join(", ")})`

/** This function called with a batch's arguments, by name. */
export const inOrderCall = callByName("vda_admit_charge_in_order", batchArguments)

export default `create or replace function vda_admit_charge_in_order(
  ${batchArguments.join(",\n  ")}
) returns jsonb
language plpgsql
${KEYED_LOOKUP_PLANS} as $fn$
declare
  k record;
  n integer := coalesce(cardinality(p_request_window), 0);
  -- each request's window, and each charge's distinct value
  request_windows timestamptz[] := array(
    select p_windows[w.w] from unnest(p_request_window) with ordinality as w(w, i) order by w.i);
  charge_values text[] := array(
    select p_values[c.v] from unnest(p_charge_value) with ordinality as c(v, i) order by c.i);
  applies boolean;
  result jsonb;
begin
  select * into k from vda_key_account(p_hash, p_expected);
  if not found then
    return null;
  end if;
  applies := k.key_environment = p_environment and k.fingerprint is not distinct from p_expected;
  if k.key_environment <> p_environment or n = 0 then
    return k.answer || jsonb_build_object('charged', false);
  end if;

  with items as materialized (
    -- a request's count (item 2r - 1), then its charges (item 2r) after it
    select w.i::integer * 2 - 1 as item, 0::bigint as pos, w.i::integer as request, ${meter("requests")} as meter,
      w.window_start as period, 1 as amount, k.requests_per_minute as lim, null::text as distinct_value,
      null::integer as after
    from unnest(request_windows) with ordinality as w(window_start, i)
    union all
    select c.request * 2, c.pos, c.request, p_counter_meter[c.counter], p_counter_period[c.counter], c.amount,
      p_counter_limit[c.counter], c.distinct_value, c.request * 2 - 1
    from unnest(p_charge_request, p_charge_counter, p_charge_amount, charge_values)
      with ordinality as c(request, counter, amount, distinct_value, pos)
    where applies and c.request between 1 and n
  ), charges as materialized (
    select row_number() over (order by i.item, i.pos)::integer as charge, i.* from items i
  ), decided as materialized (
    select * from vda_consume(
      (select array_agg(c.item order by c.charge) from charges c),
      (select array_agg(k.account_id order by c.charge) from charges c),
      (select array_agg(p_environment order by c.charge) from charges c),
      (select array_agg(c.meter order by c.charge) from charges c),
      (select array_agg(c.period order by c.charge) from charges c),
      (select array_agg(c.amount order by c.charge) from charges c),
      (select array_agg(true order by c.charge) from charges c),
      (select array_agg(c.lim order by c.charge) from charges c),
      (select array_agg(c.distinct_value order by c.charge) from charges c),
      '{}', '{}', '{}', '{}', false,
      (select array_agg(c.after order by c.charge) from charges c)
    )
  ), outcomes as (
    select c.request, c.item, row_number() over (partition by c.item order by c.pos)::integer as nth,
      d.item_ok, d.failed, d.used
    from charges c join decided d on d.charge = c.charge
  ), per_request as (
    select o.request,
      bool_or(o.item_ok) filter (where o.item = o.request * 2 - 1) as admitted,
      max(o.used) filter (where o.item = o.request * 2 - 1) as used,
      coalesce(max(o.nth) filter (where o.item = o.request * 2 and o.failed), 0) as refused,
      coalesce(max(o.used) filter (where o.item = o.request * 2 and o.failed), 0) as refused_used
    from outcomes o
    group by o.request
  )
  select k.answer || jsonb_build_object('charged', applies,
      'admitted', jsonb_agg(r.admitted order by r.request), 'used', jsonb_agg(r.used order by r.request),
      'refused', jsonb_agg(r.refused order by r.request), 'refused_used', jsonb_agg(r.refused_used order by r.request))
  into result
  from per_request r;
  return result;
end
$fn$
`
