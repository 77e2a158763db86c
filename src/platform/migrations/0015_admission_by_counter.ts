import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** The arguments of a batch as vda_admit_charge_in_order takes them (and 0017's vda_admit_charge first). */
export const perRequestSignature = `
      p_hash text,
      p_environment text,
      p_expected text,
      p_windows timestamptz[],
      p_request_window integer[],
      p_counter_meter text[],
      p_counter_period timestamptz[],
      p_counter_limit integer[],
      p_values text[],
      p_charge_request integer[],
      p_charge_counter integer[],
      p_charge_amount integer[],
      p_charge_value integer[]`

/**
 * Admission and charging of a batch of one key's requests, decided counter by counter when the
 * batch fits, in arrival order only when it does not.
 *
 * vda_admit_consume (0011) took its charges as JSON objects and decided each one in PL/pgSQL, in
 * arrival order: about 70 µs of PostgreSQL time per request in a batch of 50, most of it parsing
 * the JSON and running the loop. Here the input is compact: the batch's minute windows, counters
 * (meter, period, limit) and distinct values (plates) once each, then per request its window, and
 * per charge its request, counter, amount and distinct value (0 for none), all by 1-based index.
 *
 * - vda_admit_charge_in_order decides exactly as before: every request's count toward the
 *   per-minute limit, then its charges, through vda_consume in arrival order.
 * - vda_admit_charge locks the counters the batch touches and adds up what the whole batch would
 *   add to each (a distinct value once, and only if not counted already). When every total fits
 *   its limit, no request can be refused, so arrival order cannot change the outcome: it adds the
 *   totals in one statement. Otherwise it hands the batch to vda_admit_charge_in_order under the
 *   same locks. Both answer the same JSON, which a test holds equal over random batches.
 *
 * A counter's limit comes with its charges; the per-minute limit comes from the account as
 * stored. Charges apply only when the caller's expected fingerprint of the account is the
 * current one (`charged`). The answer, per request in order: `admitted`, `used` (the per-minute
 * counter after it, or before it when refused), and when a charge was refused its 1-based
 * position in the request (`refused`, else 0) and the counter's `refused_used`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function vda_admit_consume(text, text, text, timestamptz[], jsonb)`

  yield* sql.unsafe(`
    create function vda_key_account(p_hash text, p_expected text)
    returns table (key_environment text, account_id text, requests_per_minute integer, fingerprint text, answer jsonb)
    language sql stable as $fn$
      -- the answer's head: the account itself only when it is not the one the caller expected
      select z.key_environment, z.account_id, z.requests_per_minute, z.fingerprint,
        jsonb_build_object('key_environment', z.key_environment, 'fingerprint', z.fingerprint,
          'account', case when z.fingerprint is distinct from p_expected then z.account end)
      from (select y.*, md5(y.account::text) as fingerprint from (
        select k.environment as key_environment, a.id as account_id, a.requests_per_minute,
          jsonb_build_object('keyId', k.id, 'keyEnvironment', k.environment, 'id', a.id, 'owner', a.owner,
            'plan', a.plan, 'timezone', a.timezone, 'plateQueriesMonthly', a.plate_queries_monthly,
            'moduleQueriesMonthly', a.module_queries_monthly, 'uniquePlatesDaily', a.unique_plates_daily,
            'requestsPerMinute', a.requests_per_minute, 'enabledModules', a.enabled_modules,
            'modulePriceArs', a.module_price_ars, 'includedModules', a.included_modules) as account
        from api_keys k
        join entitled_accounts a on a.id = k.account_id
        where k.key_hash = p_hash and k.revoked_at is null
      ) y) z
    $fn$`)

  // the key's account, the number of requests, and each request's window and charge's value
  const batchVariables = `
      k record;
      n integer := coalesce(cardinality(p_request_window), 0);
      request_windows timestamptz[] := array(
        select p_windows[w.w] from unnest(p_request_window) with ordinality as w(w, i) order by w.i);
      charge_values text[] := array(
        select p_values[c.v] from unnest(p_charge_value) with ordinality as c(v, i) order by c.i);`

  yield* sql.unsafe(`
    create function vda_admit_charge_in_order(${perRequestSignature}) returns jsonb
    language plpgsql as $fn$
    declare
${batchVariables}
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
        select w.i::integer * 2 - 1 as item, 0::bigint as pos, w.i::integer as request, 'requests'::text as meter,
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
    $fn$`)

  yield* sql.unsafe(`
    create function vda_admit_charge(${perRequestSignature}) returns jsonb
    language plpgsql as $fn$
    declare
${batchVariables}
      applies boolean;
      c_meter text[];
      c_period timestamptz[];
      c_used integer[];
      c_total integer[];
      fresh_meter text[];
      fresh_period timestamptz[];
      fresh_value text[];
      fits boolean;
    begin
      select * into k from vda_key_account(p_hash, p_expected);
      if not found then
        return null;
      end if;
      if k.key_environment <> p_environment or n = 0 then
        return vda_admit_charge_in_order(p_hash, p_environment, p_expected, p_windows, p_request_window, p_counter_meter,
          p_counter_period, p_counter_limit, p_values, p_charge_request, p_charge_counter, p_charge_amount, p_charge_value);
      end if;
      applies := k.fingerprint is not distinct from p_expected;

      -- the counters the batch touches, in lock order (as vda_consume locks them)
      select array_agg(t.meter order by t.meter, t.period), array_agg(t.period order by t.meter, t.period)
      into c_meter, c_period
      from (
        select 'requests'::text as meter, w.window_start as period from unnest(request_windows) as w(window_start)
        union
        select p_counter_meter[c.counter], p_counter_period[c.counter]
        from unnest(p_charge_counter) as c(counter) where applies
      ) t;

      insert into meter_counters (account_id, environment, meter, period_start, used)
      select k.account_id, p_environment, t.meter, t.period, 0 from unnest(c_meter, c_period) as t(meter, period)
      on conflict do nothing;

      select array_agg(l.used order by l.meter, l.period_start) into c_used
      from (
        select c.meter, c.period_start, c.used from meter_counters c
        join unnest(c_meter, c_period) as t(meter, period) on c.meter = t.meter and c.period_start = t.period
        where c.account_id = k.account_id and c.environment = p_environment
        order by c.meter, c.period_start
        for update of c
      ) l;

      -- what the whole batch adds to each counter: distinct values read after the counters are locked
      with fresh as (
        -- a distinct value counts once, with the amount of its first charge
        select distinct on (p_counter_meter[c.counter], p_counter_period[c.counter], c.value)
          p_counter_meter[c.counter] as meter, p_counter_period[c.counter] as period, p_counter_limit[c.counter] as lim,
          c.value, c.amount
        from unnest(p_charge_request, p_charge_counter, p_charge_amount, charge_values)
          with ordinality as c(request, counter, amount, value, pos)
        where applies and c.value is not null and c.request between 1 and n
          and not exists (
            select 1 from meter_distinct_values v
            where v.account_id = k.account_id and v.environment = p_environment and v.meter = p_counter_meter[c.counter]
              and v.period_start = p_counter_period[c.counter] and v.value = c.value)
        order by p_counter_meter[c.counter], p_counter_period[c.counter], c.value, c.pos
      ), adds as (
        select 'requests'::text as meter, w.window_start as period, k.requests_per_minute as lim, 1 as amount
        from unnest(request_windows) as w(window_start)
        union all
        select p_counter_meter[c.counter], p_counter_period[c.counter], p_counter_limit[c.counter], c.amount
        from unnest(p_charge_request, p_charge_counter, p_charge_amount, charge_values) as c(request, counter, amount, value)
        where applies and c.value is null and c.request between 1 and n
        union all
        select f.meter, f.period, f.lim, f.amount from fresh f
      ), totals as (
        select a.meter, a.period, min(a.lim) as lim, sum(a.amount)::integer as total from adds a group by a.meter, a.period
      )
      select array_agg(coalesce(s.total, 0) order by t.i), coalesce(bool_and(s.total = 0 or s.lim is null or t.used + s.total <= s.lim), true),
        (select array_agg(f.meter) from fresh f), (select array_agg(f.period) from fresh f), (select array_agg(f.value) from fresh f)
      into c_total, fits, fresh_meter, fresh_period, fresh_value
      from unnest(c_meter, c_period, c_used) with ordinality as t(meter, period, used, i)
      left join totals s on s.meter = t.meter and s.period = t.period;

      if not fits then
        return vda_admit_charge_in_order(p_hash, p_environment, p_expected, p_windows, p_request_window, p_counter_meter,
          p_counter_period, p_counter_limit, p_values, p_charge_request, p_charge_counter, p_charge_amount, p_charge_value);
      end if;

      with counted as (
        update meter_counters c set used = c.used + t.total
        from unnest(c_meter, c_period, c_total) as t(meter, period, total)
        where t.total > 0 and c.account_id = k.account_id and c.environment = p_environment
          and c.meter = t.meter and c.period_start = t.period
      )
      insert into meter_distinct_values (account_id, environment, meter, period_start, value)
      select k.account_id, p_environment, f.meter, f.period, f.value
      from unnest(fresh_meter, fresh_period, fresh_value) as f(meter, period, value)
      on conflict do nothing;

      return k.answer || jsonb_build_object('charged', applies,
        'admitted', to_jsonb(array_fill(true, array[n])), 'refused', to_jsonb(array_fill(0, array[n])),
        'refused_used', to_jsonb(array_fill(0, array[n])),
        'used', (
          -- the per-minute counter after each request: its window's count before the batch, plus its rank there
          select jsonb_agg(t.used + r.nth order by r.i)
          from (
            select w.i, w.window_start, row_number() over (partition by w.window_start order by w.i)::integer as nth
            from unnest(request_windows) with ordinality as w(window_start, i)
          ) r
          join unnest(c_meter, c_period, c_used) as t(meter, period, used) on t.meter = 'requests' and t.period = r.window_start));
    end
    $fn$`)

  // Their statements' inputs are arrays whose sizes vary batch to batch: generic plans, as in 0011.
  for (const fn of ["vda_admit_charge", "vda_admit_charge_in_order"]) {
    yield* sql.unsafe(`alter function ${fn} set plan_cache_mode = force_generic_plan`)
  }
})
