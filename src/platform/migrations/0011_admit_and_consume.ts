import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * One round trip and one commit per batch of a key's requests: admission and, for the requests
 * that come with one, their consumption.
 *
 * vda_consume learns `p_after`: an item may name an earlier item it comes after, and applies only
 * if that one did (a request's charges come after its count toward the per-minute limit, so a
 * request refused by the limit charges nothing, and one refused by a quota is still counted, as
 * when admission and consumption were two calls), and skips the writes it has nothing for.
 * Everything else is as in 0003.
 *
 * vda_admit_consume replaces vda_admit for a batch of one key's requests on one listener: it
 * looks the key up, then decides every request's count and charges (JSON, one object per charge)
 * in one vda_consume call, in arrival order. Charges are built by the caller from the account as
 * it last saw it: each row carries a fingerprint of the key's account and allowances, and charges
 * are applied only when the caller's expected fingerprint is the current one (`charged` says
 * whether they were decided). The account itself comes back only when it is not the one expected.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop function vda_admit(text[], text[], timestamptz[])`
  yield* sql`drop function vda_consume(integer[], text[], text[], text[], timestamptz[], integer[], boolean[], integer[], text[],
    integer[], timestamptz[], integer[], integer[], boolean)`

  yield* sql.unsafe(`
    create function vda_consume(
      p_item integer[],
      p_account text[],
      p_environment text[],
      p_meter text[],
      p_period_start timestamptz[],
      p_amount integer[],
      p_limited boolean[],
      p_limit integer[],
      p_distinct text[],
      p_pricing_item integer[],
      p_pricing_period timestamptz[],
      p_pricing_price integer[],
      p_pricing_included integer[],
      p_dry_run boolean,
      p_after integer[] default null
    ) returns table (charge integer, item_ok boolean, failed boolean, used integer, charged integer)
    language plpgsql as $fn$
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
    $fn$`)

  yield* sql.unsafe(`
    create function vda_admit_consume(
      p_hash text,
      p_environment text,
      p_expected text,
      p_window_start timestamptz[],
      p_charges jsonb
    ) returns table (
      request integer,
      key_environment text,
      fingerprint text,
      account jsonb,
      admitted boolean,
      used integer,
      charged boolean,
      charge_failed boolean[],
      charge_used integer[],
      charge_charged integer[]
    )
    language plpgsql as $fn$
    #variable_conflict use_column
    begin
      return query
      with key as materialized (
        select k.environment as key_environment, a.id as account_id, a.requests_per_minute,
          jsonb_build_object('keyId', k.id, 'keyEnvironment', k.environment, 'id', a.id, 'owner', a.owner,
            'plan', a.plan, 'timezone', a.timezone, 'plateQueriesMonthly', a.plate_queries_monthly,
            'moduleQueriesMonthly', a.module_queries_monthly, 'uniquePlatesDaily', a.unique_plates_daily,
            'requestsPerMinute', a.requests_per_minute, 'enabledModules', a.enabled_modules,
            'modulePriceArs', a.module_price_ars, 'includedModules', a.included_modules) as account
        from api_keys k
        join entitled_accounts a on a.id = k.account_id
        where k.key_hash = p_hash and k.revoked_at is null
      ), fingerprinted as materialized (
        select y.*, md5(y.account::text) as fingerprint from key y
      ), requests as materialized (
        select r.i::integer as request, r.window_start from unnest(p_window_start) with ordinality as r(window_start, i)
      ), counted as materialized (
        select q.request, q.window_start, f.* from fingerprinted f cross join requests q where f.key_environment = p_environment
      ), charges as materialized (
        -- a request's count (item 2r - 1), then its charges (item 2r) after it
        select row_number() over (order by x.item, x.ord)::integer as charge, x.*
        from (
          select c.request * 2 - 1 as item, 0::bigint as ord, c.request, c.account_id, c.key_environment,
            'requests'::text as meter, c.window_start as period_start, 1 as amount, true as limited,
            c.requests_per_minute as lim, null::text as distinct_value, null::integer as after
          from counted c
          union all
          select c.request * 2, u.ord, c.request, c.account_id, c.key_environment, u.meter, u.period_start, u.amount,
            u.limited, u.lim, u.distinct_value, c.request * 2 - 1
          from rows from (jsonb_to_recordset(p_charges) as (request integer, meter text, period_start timestamptz,
              amount integer, limited boolean, lim integer, distinct_value text))
            with ordinality as u(request, meter, period_start, amount, limited, lim, distinct_value, ord)
          join counted c on c.request = u.request and c.fingerprint = p_expected
        ) x
      ), decided as materialized (
        select * from vda_consume(
          (select coalesce(array_agg(item order by charge), '{}') from charges),
          (select coalesce(array_agg(account_id order by charge), '{}') from charges),
          (select coalesce(array_agg(key_environment order by charge), '{}') from charges),
          (select coalesce(array_agg(meter order by charge), '{}') from charges),
          (select coalesce(array_agg(period_start order by charge), '{}') from charges),
          (select coalesce(array_agg(amount order by charge), '{}') from charges),
          (select coalesce(array_agg(limited order by charge), '{}') from charges),
          (select coalesce(array_agg(lim order by charge), '{}') from charges),
          (select coalesce(array_agg(distinct_value order by charge), '{}') from charges),
          '{}', '{}', '{}', '{}', false,
          (select coalesce(array_agg(after order by charge), '{}') from charges)
        )
      ), outcomes as materialized (
        select c.request, c.item, c.ord, d.item_ok, d.failed, d.used, d.charged
        from charges c join decided d on d.charge = c.charge
      )
      select q.request, f.key_environment, f.fingerprint,
        case when f.fingerprint is distinct from p_expected then f.account end,
        coalesce(n.item_ok, false), coalesce(n.used, 0),
        p.request is not null, p.failed, p.used, p.charged
      from fingerprinted f
      cross join requests q
      left join outcomes n on n.request = q.request and n.item = q.request * 2 - 1
      left join (
        select o.request, array_agg(o.failed order by o.ord) as failed, array_agg(o.used order by o.ord) as used,
          array_agg(o.charged order by o.ord) as charged
        from outcomes o where o.item = o.request * 2
        group by o.request
      ) p on p.request = q.request;
    end
    $fn$`)

  // Their statements' inputs are arrays whose sizes vary batch to batch: PostgreSQL would plan
  // them again on every call (custom plans), a third of their time. The generic plans are as good.
  for (const fn of ["vda_admit_consume", "vda_consume"]) {
    yield* sql.unsafe(`alter function ${fn} set plan_cache_mode = force_generic_plan`)
  }
})
