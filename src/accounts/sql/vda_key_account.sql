-- An API key's account, the head of every admission's answer: the key's environment, the
-- account's per-minute limit, the fingerprint of its entitled row (an md5 of the row of
-- `entitled_accounts` as text), and the account itself as JSON (`KeyLookupRow` in
-- src/principal/AccountRows.ts), built from that same row, only when the caller expected another
-- fingerprint. The one place an account becomes JSON.
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
    -- not flattened: the row of the view is then made once here, rather than once for each of the
    -- dozen references to it above (a quarter of this query's time, with every batch calling it)
    offset 0
  ) z
$fn$
