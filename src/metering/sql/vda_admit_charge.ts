/**
 * Admission and charging of a batch of one key's requests (`ADMIT_CHARGE` in
 * src/metering/Admission.ts), decided from totals the caller adds up, in three statements.
 *
 * The caller knows its batch: beside the per-request arguments of `vda_admit_charge_in_order`,
 * it sends each window's count of requests, each counter's total of plain charges, and the
 * batch's distinct values once each (counter, value, the amount of its first charge). Here:
 *
 * 1. the key's account (`vda_key_account`), and the batch's counters created where missing (in
 *    lock order);
 * 2. the counters locked in lock order (as `vda_consume` locks them), their counts read;
 * 3. in a new snapshot (after the locks, so every distinct value counted before is seen), the
 *    distinct values not counted yet; when every total fits, no request can be refused and
 *    arrival order cannot change the outcome: the totals are added and the values recorded, in
 *    the same statement.
 *
 * The answer then carries each window's count before the batch (`window_used`), and the caller
 * ranks its requests in their windows. A batch that does not fit is handed, under the same locks,
 * to `vda_admit_charge_in_order`, which answers per request. Both decide the same, which a test
 * holds over random batches.
 */
import { batchArguments, inOrderCall } from "./vda_admit_charge_in_order.js"
import { meter } from "./meters.js"
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

/** The batch's totals, after its arguments (`batchArguments`). */
export const totalsArguments = [
  "p_window_count integer[]",
  "p_counter_total integer[]",
  "p_distinct_counter integer[]",
  "p_distinct_value integer[]",
  "p_distinct_amount integer[]"
]

/** This function's arguments, in order. */
export const admitChargeArguments = [...batchArguments, ...totalsArguments]

export default `create or replace function vda_admit_charge(
  ${admitChargeArguments.join(",\n  ")}
) returns jsonb
language plpgsql
${KEYED_LOOKUP_PLANS} as $fn$
declare
  k record;
  applies boolean;
  -- the windows' counts, then the counters', in the caller's order
  c_used integer[];
  -- where those counters are (locked, they stay there): the update finds them by it
  c_tids tid[];
  result jsonb;
begin
  with key as materialized (
    select * from vda_key_account(p_hash, p_expected)
  ), touched as (
    select ${meter("requests")} as meter, w.period from unnest(p_windows) as w(period)
    union all
    select c.meter, c.period from key, unnest(p_counter_meter, p_counter_period) as c(meter, period)
    where key.fingerprint is not distinct from p_expected
  ), created as (
    insert into meter_counters (account_id, environment, meter, period_start, used)
    select key.account_id, p_environment, t.meter, t.period, 0 from key, touched t
    where key.key_environment = p_environment and not exists (
      select 1 from meter_counters c
      where c.account_id = key.account_id and c.environment = p_environment and c.meter = t.meter and c.period_start = t.period
      offset 0)
    order by t.meter, t.period
    on conflict do nothing
  )
  select * into k from key;
  if not found then
    return null;
  end if;
  if k.key_environment <> p_environment or coalesce(cardinality(p_request_window), 0) = 0 then
    return k.answer || jsonb_build_object('charged', false);
  end if;
  applies := k.fingerprint is not distinct from p_expected;

  select array_agg(l.used order by l.i), array_agg(l.tid order by l.i) into c_used, c_tids
  from (
    select t.i, c.used, c.tid
    from (
      select w.i, ${meter("requests")} as meter, w.period from unnest(p_windows) with ordinality as w(period, i)
      union all
      select cardinality(p_windows) + c.i, c.meter, c.period
      from unnest(p_counter_meter, p_counter_period) with ordinality as c(meter, period, i)
      where applies
      order by 2, 3
    ) t
    cross join lateral (
      select c.used, c.ctid as tid from meter_counters c
      where c.account_id = k.account_id and c.environment = p_environment and c.meter = t.meter and c.period_start = t.period
      offset 0
      for update
    ) c
  ) l;

  with fresh as (
    select d.counter, p_values[d.value] as value, d.amount
    from unnest(p_distinct_counter, p_distinct_value, p_distinct_amount) as d(counter, value, amount)
    where applies and not exists (
      select 1 from meter_distinct_values v
      where v.account_id = k.account_id and v.environment = p_environment and v.meter = p_counter_meter[d.counter]
        and v.period_start = p_counter_period[d.counter] and v.value = p_values[d.value]
      offset 0)
  ), totals as (
    select k.requests_per_minute as lim, w.total, c_used[w.i] as used, c_tids[w.i] as tid
    from unnest(p_windows, p_window_count) with ordinality as w(period, total, i)
    union all
    select c.lim, c.total + coalesce((select sum(f.amount) from fresh f where f.counter = c.i), 0)::integer,
      c_used[cardinality(p_windows) + c.i], c_tids[cardinality(p_windows) + c.i]
    from unnest(p_counter_meter, p_counter_period, p_counter_limit, p_counter_total) with ordinality as c(meter, period, lim, total, i)
    where applies
  ), verdict as (
    select coalesce(bool_and(t.total = 0 or t.lim is null or t.used + t.total <= t.lim), true) as fits from totals t
  ), counted as (
    update meter_counters c set used = c.used + t.total
    from totals t, verdict
    where verdict.fits and t.total > 0 and c.ctid = any(c_tids) and c.ctid = t.tid
  ), recorded as (
    insert into meter_distinct_values (account_id, environment, meter, period_start, value)
    select k.account_id, p_environment, p_counter_meter[f.counter], p_counter_period[f.counter], f.value
    from fresh f, verdict
    where verdict.fits
    on conflict do nothing
  )
  select case when v.fits then k.answer || jsonb_build_object('charged', applies,
      'window_used', to_jsonb(c_used[1:cardinality(p_windows)])) end
  into result
  from verdict v;

  if result is null then
    return ${inOrderCall};
  end if;
  return result;
end
$fn$
`
