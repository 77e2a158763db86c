/**
 * An account's status (its counters of the current month, day and minute, its module billing
 * terms of the month, and its keys) read in one statement, as rows of three kinds, for a batch of
 * reads at once (src/accounts/Status.ts).
 *
 * Volatile, so that each of its statements takes a fresh snapshot: read along with an admission
 * in one statement, it sees the counts that admission has just made, as a status read after it
 * would.
 */
import { KEYED_LOOKUP_PLANS } from "../../platform/db/DatabaseFunctions.js"

export default `create or replace function vda_account_status(
  p_value text[], p_account text[], p_environment text[], p_month timestamptz[], p_day timestamptz[], p_minute timestamptz[])
returns table (
  value text, kind text, meter text, period_start timestamptz, used integer, unit_price_cents integer, included integer,
  id text, name text, prefix text, last4 text, created_at timestamptz, revoked_at timestamptz, last_used_at timestamptz)
language plpgsql volatile
${KEYED_LOOKUP_PLANS} as $fn$
begin
  return query
    with r as (select * from unnest(p_value, p_account, p_environment, p_month, p_day, p_minute)
      as r (value, account, environment, month, day, minute))
    select r.value, 'counter', c.meter, c.period_start, c.used, null::integer, null::integer,
      null, null, null, null, null::timestamptz, null::timestamptz, null::timestamptz
    from r join meter_counters c
      on c.account_id = r.account and c.environment = r.environment and c.period_start in (r.month, r.day, r.minute)
    union all
    select r.value, 'billing', null, b.period_start, null, b.unit_price_cents, b.included,
      null, null, null, null, null, null, null
    from r join module_billing_periods b
      on b.account_id = r.account and b.environment = r.environment and b.period_start = r.month
    union all
    select r.value, 'key', null, null, null, null, null,
      k.id, k.name, k.prefix, k.last4, k.created_at, k.revoked_at, k.last_used_at
    from r join api_keys k on k.account_id = r.account and k.environment = r.environment
    -- the keys in the order the account's lists show them
    order by 1, 2, 12, 8;
end $fn$
`
