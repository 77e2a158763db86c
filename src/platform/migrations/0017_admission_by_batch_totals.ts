import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { perRequestSignature } from "./0015_admission_by_counter.js"

/**
 * A batch's admission decided from totals the caller adds up, in three statements.
 *
 * vda_admit_charge (0015) unnested every charge of the batch, grouped them by counter and ranked
 * every request in its window, in nine statements: about 1.4 ms of PostgreSQL time for a batch of
 * 25 vehicle queries, 1 ms for a batch of one, on the bench machine. The caller knows its batch:
 * it sends, beside the per-request arrays, each window's count of requests, each counter's total
 * of plain charges, and the batch's distinct values once each (counter, value, the amount of its
 * first charge). Here:
 *
 * 1. the key's account, and the batch's counters created where missing (in lock order);
 * 2. the counters locked in lock order (as vda_consume locks them), their counts read;
 * 3. in a new snapshot (after the locks, so every distinct value counted before is seen), the
 *    distinct values not counted yet; when every total fits, the totals are added and the values
 *    recorded, in the same statement.
 *
 * The answer then carries each window's count before the batch (`window_used`), and the caller
 * ranks its requests in their windows. A batch that does not fit is handed, under the same locks,
 * to vda_admit_charge_in_order (0015), which answers per request. Both decide the same, which a
 * test holds over random batches.
 *
 * The account's fingerprint becomes an md5 of its entitled row as text, instead of an md5 of the
 * JSON built from it: the JSON is built only when the caller expected another fingerprint.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function vda_admit_charge(text, text, text, timestamptz[], integer[], text[], timestamptz[], integer[],
    text[], integer[], integer[], integer[], integer[])`

  yield* sql.unsafe(`
    create or replace function vda_key_account(p_hash text, p_expected text)
    returns table (key_environment text, account_id text, requests_per_minute integer, fingerprint text, answer jsonb)
    language sql stable as $fn$
      -- the answer's head: the account itself only when it is not the one the caller expected
      select z.key_environment, (z.a).id, (z.a).requests_per_minute, z.fingerprint,
        jsonb_build_object('key_environment', z.key_environment, 'fingerprint', z.fingerprint,
          'account', case when z.fingerprint is distinct from p_expected then
            jsonb_build_object('keyId', z.key_id, 'keyEnvironment', z.key_environment, 'id', (z.a).id, 'owner', (z.a).owner,
              'plan', (z.a).plan, 'timezone', (z.a).timezone, 'plateQueriesMonthly', (z.a).plate_queries_monthly,
              'moduleQueriesMonthly', (z.a).module_queries_monthly, 'uniquePlatesDaily', (z.a).unique_plates_daily,
              'requestsPerMinute', (z.a).requests_per_minute, 'enabledModules', (z.a).enabled_modules,
              'modulePriceArs', (z.a).module_price_ars, 'includedModules', (z.a).included_modules) end)
      from (
        select k.id as key_id, k.environment as key_environment, a, md5(a::text) as fingerprint
        from api_keys k
        join entitled_accounts a on a.id = k.account_id
        where k.key_hash = p_hash and k.revoked_at is null
      ) z
    $fn$`)

  // the arguments vda_admit_charge_in_order takes, by name
  const perRequest = perRequestSignature.trim().split(",").map((argument) => argument.trim().split(" ")[0]).join(", ")

  yield* sql.unsafe(`
    create function vda_admit_charge(${perRequestSignature},
      p_window_count integer[],
      p_counter_total integer[],
      p_distinct_counter integer[],
      p_distinct_value integer[],
      p_distinct_amount integer[]
    ) returns jsonb
    language plpgsql
    set plan_cache_mode = force_generic_plan as $fn$
    declare
      k record;
      applies boolean;
      -- the windows' counts, then the counters', in the caller's order
      c_used integer[];
      result jsonb;
    begin
      with key as materialized (
        select * from vda_key_account(p_hash, p_expected)
      ), touched as (
        select 'requests'::text as meter, w.period from unnest(p_windows) as w(period)
        union all
        select c.meter, c.period from key, unnest(p_counter_meter, p_counter_period) as c(meter, period)
        where key.fingerprint is not distinct from p_expected
      ), created as (
        insert into meter_counters (account_id, environment, meter, period_start, used)
        select key.account_id, p_environment, t.meter, t.period, 0 from key, touched t
        where key.key_environment = p_environment and not exists (
          select 1 from meter_counters c
          where c.account_id = key.account_id and c.environment = p_environment and c.meter = t.meter and c.period_start = t.period)
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

      select array_agg(l.used order by l.i) into c_used
      from (
        select t.i, c.used from meter_counters c
        join (
          select w.i, 'requests'::text as meter, w.period from unnest(p_windows) with ordinality as w(period, i)
          union all
          select cardinality(p_windows) + c.i, c.meter, c.period
          from unnest(p_counter_meter, p_counter_period) with ordinality as c(meter, period, i)
          where applies
        ) t on c.meter = t.meter and c.period_start = t.period
        where c.account_id = k.account_id and c.environment = p_environment
        order by c.meter, c.period_start
        for update of c
      ) l;

      with fresh as (
        select d.counter, p_values[d.value] as value, d.amount
        from unnest(p_distinct_counter, p_distinct_value, p_distinct_amount) as d(counter, value, amount)
        where applies and not exists (
          select 1 from meter_distinct_values v
          where v.account_id = k.account_id and v.environment = p_environment and v.meter = p_counter_meter[d.counter]
            and v.period_start = p_counter_period[d.counter] and v.value = p_values[d.value])
      ), totals as (
        select 'requests'::text as meter, w.period, k.requests_per_minute as lim, w.total, c_used[w.i] as used
        from unnest(p_windows, p_window_count) with ordinality as w(period, total, i)
        union all
        select c.meter, c.period, c.lim, c.total + coalesce((select sum(f.amount) from fresh f where f.counter = c.i), 0)::integer,
          c_used[cardinality(p_windows) + c.i]
        from unnest(p_counter_meter, p_counter_period, p_counter_limit, p_counter_total) with ordinality as c(meter, period, lim, total, i)
        where applies
      ), verdict as (
        select coalesce(bool_and(t.total = 0 or t.lim is null or t.used + t.total <= t.lim), true) as fits from totals t
      ), counted as (
        update meter_counters c set used = c.used + t.total
        from totals t, verdict
        where verdict.fits and t.total > 0 and c.account_id = k.account_id and c.environment = p_environment
          and c.meter = t.meter and c.period_start = t.period
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
        return vda_admit_charge_in_order(${perRequest});
      end if;
      return result;
    end
    $fn$`)
})
