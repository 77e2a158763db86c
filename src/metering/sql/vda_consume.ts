/**
 * The metering rule, so that a whole batch is decided and written in one round trip (one
 * statement, one transaction).
 *
 * Applies charges in arrival order. An item (a consumption) either fits every limit it touches
 * and is applied in full, or fails on the first limit it would cross and changes nothing.
 * Counters are locked in one canonical order (account, environment, meter, period), so
 * concurrent batches never deadlock and limits hold across processes. A distinct charge (a plate
 * toward unique plates) counts only the first time its value is seen in the period. An item may
 * name an earlier item it comes after (`p_after`), and applies only if that one did: a request's
 * charges come after its count toward the per-minute limit, so a request refused by the limit
 * charges nothing, and one refused by a quota is still counted. With p_dry_run nothing is locked
 * or written: the answer is what would happen now.
 *
 * Generic plans: its statements' inputs are arrays whose sizes vary batch to batch, and
 * PostgreSQL would plan them again on every call (custom plans), a third of their time.
 */
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

/** The consumptions' arguments, as callers pass them (`vda_create_operation` passes them through). */
export const consumeArguments = [
  "p_item integer[]",
  "p_account text[]",
  "p_environment text[]",
  "p_meter text[]",
  "p_period_start timestamptz[]",
  "p_amount integer[]",
  "p_limited boolean[]",
  "p_limit integer[]",
  "p_distinct text[]",
  "p_pricing_item integer[]",
  "p_pricing_period timestamptz[]",
  "p_pricing_price integer[]",
  "p_pricing_included integer[]"
]

export default `create or replace function vda_consume(
  ${consumeArguments.join(",\n  ")},
  p_dry_run boolean,
  p_after integer[] default null
) returns table (charge integer, item_ok boolean, failed boolean, used integer, charged integer)
language plpgsql
${KEYED_LOOKUP_PLANS} as $fn$
#variable_conflict use_column
declare
  n integer := coalesce(array_length(p_item, 1), 0);
  slot_of integer[] := array_fill(0, array[greatest(n, 1)]);
  s_key text[] := '{}';
  s_acc text[] := '{}';
  s_env text[] := '{}';
  s_meter text[] := '{}';
  s_start timestamptz[] := '{}';
  s_used integer[] := '{}';
  s_orig integer[] := '{}';
  seen text[] := '{}';
  d_acc text[] := '{}';
  d_env text[] := '{}';
  d_meter text[] := '{}';
  d_start timestamptz[] := '{}';
  d_value text[] := '{}';
  r_ok boolean[] := array_fill(false, array[greatest(n, 1)]);
  r_failed boolean[] := array_fill(false, array[greatest(n, 1)]);
  r_used integer[] := array_fill(0, array[greatest(n, 1)]);
  r_charged integer[] := array_fill(0, array[greatest(n, 1)]);
  ok_items integer[] := '{}';
  item_used integer[];
  item_seen text[];
  k text;
  si integer;
  i integer;
  j integer;
  x integer;
  amount integer;
  before integer;
  ok boolean;
  row record;
begin
  -- the counters this batch touches
  for i in 1..n loop
    k := p_account[i] || chr(1) || p_environment[i] || chr(1) || p_meter[i] || chr(1) || p_period_start[i]::text;
    si := array_position(s_key, k);
    if si is null then
      s_key := s_key || k;
      s_acc := s_acc || p_account[i];
      s_env := s_env || p_environment[i];
      s_meter := s_meter || p_meter[i];
      s_start := s_start || p_period_start[i];
      s_used := s_used || 0;
      si := array_length(s_key, 1);
    end if;
    slot_of[i] := si;
  end loop;

  if not p_dry_run and n > 0 then
    insert into meter_counters (account_id, environment, meter, period_start, used)
    select u.a, u.e, u.m, u.p, 0 from unnest(s_acc, s_env, s_meter, s_start) as u(a, e, m, p)
    order by u.a, u.e, u.m, u.p
    on conflict do nothing;
    for row in
      select c.account_id, c.environment, c.meter, c.period_start, c.used
      from meter_counters c
      join unnest(s_acc, s_env, s_meter, s_start) as u(a, e, m, p)
        on c.account_id = u.a and c.environment = u.e and c.meter = u.m and c.period_start = u.p
      order by c.account_id, c.environment, c.meter, c.period_start
      for update of c
    loop
      si := array_position(s_key, row.account_id || chr(1) || row.environment || chr(1) || row.meter || chr(1) || row.period_start::text);
      s_used[si] := row.used;
    end loop;
  else
    for row in
      select c.account_id, c.environment, c.meter, c.period_start, c.used
      from meter_counters c
      join unnest(s_acc, s_env, s_meter, s_start) as u(a, e, m, p)
        on c.account_id = u.a and c.environment = u.e and c.meter = u.m and c.period_start = u.p
    loop
      si := array_position(s_key, row.account_id || chr(1) || row.environment || chr(1) || row.meter || chr(1) || row.period_start::text);
      s_used[si] := row.used;
    end loop;
  end if;
  s_orig := s_used;

  -- distinct values already counted (read after the counters are locked)
  select coalesce(array_agg(v.account_id || chr(1) || v.environment || chr(1) || v.meter || chr(1) || v.period_start::text || chr(2) || v.value), '{}')
  into seen
  from meter_distinct_values v
  join unnest(p_account, p_environment, p_meter, p_period_start, p_distinct) as u(a, e, m, p, d)
    on u.d is not null and v.account_id = u.a and v.environment = u.e and v.meter = u.m
      and v.period_start = u.p and v.value = u.d;

  -- decide item by item, in arrival order
  i := 1;
  while i <= n loop
    j := i;
    -- an item that comes after another (a request's charges after its count) needs it applied
    ok := p_after[i] is null or p_after[i] = any(ok_items);
    item_used := s_used;
    item_seen := '{}';
    while j <= n and p_item[j] = p_item[i] loop
      amount := p_amount[j];
      if p_distinct[j] is not null then
        k := s_key[slot_of[j]] || chr(2) || p_distinct[j];
        if k = any(seen) or k = any(item_seen) then
          amount := 0;
        else
          item_seen := item_seen || k;
        end if;
      end if;
      before := item_used[slot_of[j]];
      if ok and amount > 0 and p_limited[j] and p_limit[j] is not null and before + amount > p_limit[j] then
        ok := false;
        r_failed[j] := true;
        r_used[j] := before;
      end if;
      item_used[slot_of[j]] := before + amount;
      if not r_failed[j] then
        r_used[j] := before + amount;
      end if;
      r_charged[j] := amount;
      j := j + 1;
    end loop;
    for x in i..j - 1 loop
      r_ok[x] := ok;
      if not ok then
        r_charged[x] := 0;
      end if;
    end loop;
    if ok then
      s_used := item_used;
      seen := seen || item_seen;
      ok_items := ok_items || p_item[i];
      for x in i..j - 1 loop
        if p_distinct[x] is not null and r_charged[x] > 0 then
          d_acc := d_acc || p_account[x];
          d_env := d_env || p_environment[x];
          d_meter := d_meter || p_meter[x];
          d_start := d_start || p_period_start[x];
          d_value := d_value || p_distinct[x];
        end if;
      end loop;
    end if;
    i := j;
  end loop;

  if not p_dry_run and n > 0 then
    update meter_counters c set used = u.used
    from unnest(s_acc, s_env, s_meter, s_start, s_used, s_orig) as u(a, e, m, p, used, orig)
    where u.used <> u.orig
      and c.account_id = u.a and c.environment = u.e and c.meter = u.m and c.period_start = u.p;
    -- (statements with nothing to write are skipped: a batch pays for each one it runs)
    if cardinality(d_acc) > 0 then
      insert into meter_distinct_values (account_id, environment, meter, period_start, value)
      select * from unnest(d_acc, d_env, d_meter, d_start, d_value)
      on conflict do nothing;
    end if;
    if cardinality(p_pricing_item) > 0 then
      insert into module_billing_periods (account_id, environment, period_start, unit_price_cents, included)
      select distinct on (1, 2, 3) p_account[s.first_charge], p_environment[s.first_charge], s.period, s.price, s.included
      from (
        select array_position(p_item, q.item) as first_charge, q.period, q.price, q.included
        from unnest(p_pricing_item, p_pricing_period, p_pricing_price, p_pricing_included) as q(item, period, price, included)
        where q.item = any(ok_items)
      ) as s
      on conflict do nothing;
    end if;
  end if;

  return query
    select g.i, r_ok[g.i], r_failed[g.i], r_used[g.i], r_charged[g.i]
    from generate_series(1, n) as g(i);
end
$fn$
`
