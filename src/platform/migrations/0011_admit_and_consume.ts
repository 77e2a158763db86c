import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * vda_admit_consume: admission (vda_admit) and, for the requests that come with a consumption,
 * the consumption too (vda_consume), in one round trip and one commit per batch.
 *
 * A consumption is built by the caller from the account as it last saw it; each admitted row
 * carries a fingerprint of the account's key and allowances, and a request's charges are applied
 * only when the caller's expected fingerprint is the current one (otherwise `eligible` is false
 * and nothing is charged: the caller decides again with the fresh row). Requests are counted
 * toward the per-minute limit first, as a separate admission would, then charged: request
 * counters are always locked before any other counter, so batches never deadlock.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function vda_admit_consume(
      p_hash text[],
      p_environment text[],
      p_window_start timestamptz[],
      p_expected text[],
      p_request integer[],
      p_meter text[],
      p_period_start timestamptz[],
      p_amount integer[],
      p_limited boolean[],
      p_limit integer[],
      p_distinct text[]
    ) returns table (
      request integer,
      key_id text,
      key_environment text,
      id text,
      owner text,
      plan text,
      timezone text,
      created_at timestamptz,
      plate_queries_monthly integer,
      module_queries_monthly integer,
      unique_plates_daily integer,
      requests_per_minute integer,
      enabled_modules text[],
      module_price_ars integer,
      included_modules integer,
      admitted boolean,
      used integer,
      fingerprint text,
      eligible boolean,
      charge_failed boolean[],
      charge_used integer[],
      charge_charged integer[]
    )
    language plpgsql as $fn$
    #variable_conflict use_column
    begin
      return query
      with admissions as materialized (
        select a.*, md5(row(a.key_id, a.key_environment, a.id, a.owner, a.plan, a.timezone, a.created_at,
          a.plate_queries_monthly, a.module_queries_monthly, a.unique_plates_daily, a.requests_per_minute,
          a.enabled_modules, a.module_price_ars, a.included_modules)::text) as fingerprint
        from vda_admit(p_hash, p_environment, p_window_start) a
      ), eligible as materialized (
        select a.request, a.id, a.key_environment from admissions a
        where a.admitted and a.fingerprint = p_expected[a.request]
      ), charges as materialized (
        select row_number() over (order by c.ord)::integer as charge, c.request, e.id, e.key_environment,
          c.meter, c.period_start, c.amount, c.limited, c.lim, c.distinct_value
        from unnest(p_request, p_meter, p_period_start, p_amount, p_limited, p_limit, p_distinct)
          with ordinality as c(request, meter, period_start, amount, limited, lim, distinct_value, ord)
        join eligible e on e.request = c.request
      ), decided as materialized (
        select * from vda_consume(
          (select coalesce(array_agg(request order by charge), '{}') from charges),
          (select coalesce(array_agg(id order by charge), '{}') from charges),
          (select coalesce(array_agg(key_environment order by charge), '{}') from charges),
          (select coalesce(array_agg(meter order by charge), '{}') from charges),
          (select coalesce(array_agg(period_start order by charge), '{}') from charges),
          (select coalesce(array_agg(amount order by charge), '{}') from charges),
          (select coalesce(array_agg(limited order by charge), '{}') from charges),
          (select coalesce(array_agg(lim order by charge), '{}') from charges),
          (select coalesce(array_agg(distinct_value order by charge), '{}') from charges),
          '{}', '{}', '{}', '{}', false
        )
      ), per_request as (
        select c.request, array_agg(d.failed order by c.charge) as failed, array_agg(d.used order by c.charge) as used,
          array_agg(d.charged order by c.charge) as charged
        from charges c join decided d on d.charge = c.charge
        group by c.request
      )
      select a.request, a.key_id, a.key_environment, a.id, a.owner, a.plan, a.timezone, a.created_at,
        a.plate_queries_monthly, a.module_queries_monthly, a.unique_plates_daily, a.requests_per_minute,
        a.enabled_modules, a.module_price_ars, a.included_modules, a.admitted, a.used, a.fingerprint,
        p.request is not null, p.failed, p.used, p.charged
      from admissions a
      left join per_request p on p.request = a.request;
    end
    $fn$`)

  // Their statements' inputs are arrays whose sizes vary batch to batch: PostgreSQL would plan
  // them again on every call (custom plans), a third of their time. The generic plans are as good.
  for (const fn of ["vda_admit_consume", "vda_admit", "vda_consume"]) {
    yield* sql.unsafe(`alter function ${fn} set plan_cache_mode = force_generic_plan`)
  }
})
