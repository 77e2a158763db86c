/**
 * Admission and charging of a batch of one key's requests (`ADMIT_CHARGE` in
 * src/metering/Admission.ts), decided from totals the caller adds up.
 *
 * The caller knows its batch: beside the per-request arguments of `vda_admit_charge_in_order`,
 * it sends each window's count of requests, each counter's total of plain charges, and the
 * batch's distinct values once each (counter, value, the amount of its first charge). Here:
 *
 * 1. the key's account (`vda_key_account`), then the batch's counters created where missing, in
 *    lock order, before any is locked (as `vda_consume` creates them);
 * 2. the counters locked in lock order (as `vda_consume` locks them), their counts read;
 * 3. in a new snapshot (after the locks, so every distinct value counted before is seen), the
 *    distinct values not counted yet; when every total fits, no request can be refused and
 *    arrival order cannot change the outcome: the totals are added and the values recorded.
 *
 * The answer then carries each window's count before the batch (`window_used`), and the caller
 * ranks its requests in their windows. A batch that does not fit is handed, under the same locks,
 * to `vda_admit_charge_in_order`, which answers per request. Both decide the same, which a test
 * holds over random batches.
 *
 * The shared lanes call `vda_admit_charge_lock_first`, the same decision with steps 1 and 2 the
 * other way round: the counters are locked first, and only when one is missing (a new minute, day
 * or month) is it created and the counters locked again. That skips the check for missing
 * counters on nearly every call (about a seventh of the function's time with a thousand busy
 * accounts). Creating a counter after taking others' locks could wait on a transaction that
 * created it first and waits on ours; the shared lanes wait for a lock only briefly
 * (`vda_admit_charge_shared`), so there it times out, and the batch goes to its keys' own lanes,
 * which wait as long as it takes and so create first.
 *
 * Steps 2 and 3 are small statements and plain PL/pgSQL arithmetic: one statement of common table
 * expressions over arrays cost more to start than its rows cost to read.
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

/** Whether the batch's missing counters are created before its counters are locked, or after. */
export type Order = "create first" | "lock first"

/** Step 2: the counters locked in lock order, their counts and places read in the caller's order. */
const lockCounters = `select array_agg(l.used order by l.i), array_agg(l.tid order by l.i) into c_used, c_tids
  from (
    select t.i, c.used, c.tid
    from (
      select w.i, ${meter("requests")} as meter, w.period from unnest(p_windows) with ordinality as w(period, i)
      union all
      select n_windows + c.i, c.meter, c.period
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
  ) l;`

/** Step 1's creation: the batch's counters not there yet, inserted in lock order. */
const createCounters = `insert into meter_counters (account_id, environment, meter, period_start, used)
  select k.account_id, p_environment, t.meter, t.period, 0 from (
    select ${meter("requests")} as meter, w.period from unnest(p_windows) as w(period)
    union all
    select c.meter, c.period from unnest(p_counter_meter, p_counter_period) as c(meter, period) where applies
  ) t
  where not exists (
    select 1 from meter_counters c
    where c.account_id = k.account_id and c.environment = p_environment and c.meter = t.meter and c.period_start = t.period
    offset 0)
  order by t.meter, t.period
  on conflict do nothing;`

/** The function's source under `name`, creating missing counters before or after taking the locks. */
export const admitChargeSource = (name: string, order: Order) => `create or replace function ${name}(
  ${admitChargeArguments.join(",\n  ")}
) returns jsonb
language plpgsql
${KEYED_LOOKUP_PLANS} as $fn$
declare
  k record;
  applies boolean;
  n_windows integer := coalesce(cardinality(p_windows), 0);
  -- the counts of the windows, then of the counters, in the caller's order
  c_used integer[];
  -- where those counters are (locked, they stay there): the update finds them by it
  c_tids tid[];
  -- the batch's total per window, then per counter, the distinct values not counted yet included
  totals integer[];
  fresh_counter integer[];
  fresh_value text[];
  lim integer;
begin
  select * into k from vda_key_account(p_hash, p_expected);
  if not found then
    return null;
  end if;
  if k.key_environment <> p_environment or coalesce(cardinality(p_request_window), 0) = 0 then
    return k.answer || jsonb_build_object('charged', false);
  end if;
  applies := k.fingerprint is not distinct from p_expected;
  totals := p_window_count;
  if applies then
    totals := totals || p_counter_total;
  end if;

  ${
  order === "create first" ? `${createCounters}
  ${lockCounters}` : `${lockCounters}
  if coalesce(cardinality(c_used), 0) < cardinality(totals) then
    ${createCounters}
    ${lockCounters}
  end if;`
}

  if applies then
    -- the distinct values not counted yet (in a snapshot taken after the locks)
    for i in 1 .. coalesce(cardinality(p_distinct_counter), 0) loop
      if not exists (
        select 1 from meter_distinct_values v
        where v.account_id = k.account_id and v.environment = p_environment and v.meter = p_counter_meter[p_distinct_counter[i]]
          and v.period_start = p_counter_period[p_distinct_counter[i]] and v.value = p_values[p_distinct_value[i]]) then
        fresh_counter := fresh_counter || p_distinct_counter[i];
        fresh_value := fresh_value || p_values[p_distinct_value[i]];
        totals[n_windows + p_distinct_counter[i]] := totals[n_windows + p_distinct_counter[i]] + p_distinct_amount[i];
      end if;
    end loop;
  end if;
  for i in 1 .. cardinality(totals) loop
    lim := case when i <= n_windows then k.requests_per_minute else p_counter_limit[i - n_windows] end;
    if totals[i] > 0 and lim is not null and c_used[i] + totals[i] > lim then
      return ${inOrderCall};
    end if;
  end loop;

  update meter_counters c set used = c.used + totals[array_position(c_tids, c.ctid)]
  where c.ctid = any(c_tids) and totals[array_position(c_tids, c.ctid)] > 0;
  if fresh_counter is not null then
    insert into meter_distinct_values (account_id, environment, meter, period_start, value)
    select k.account_id, p_environment, p_counter_meter[f.counter], p_counter_period[f.counter], f.value
    from unnest(fresh_counter, fresh_value) as f(counter, value)
    on conflict do nothing;
  end if;
  return k.answer || jsonb_build_object('charged', applies, 'window_used', to_jsonb(c_used[1:n_windows]));
end
$fn$
`

/** A key's own lane, which waits for locks as long as it takes. */
export default admitChargeSource("vda_admit_charge", "create first")
