import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Accounts, keys, plans and meters. Plan numbers are DESIGN §8; changing them later is a new
 * migration (or `vda accounts set-custom` for one account).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    create table plans (
      id text primary key,
      position integer not null unique,
      price_ars integer not null check (price_ars >= 0),
      plate_queries_monthly integer check (plate_queries_monthly >= 0),
      module_queries_monthly integer check (module_queries_monthly >= 0),
      unique_plates_daily integer check (unique_plates_daily >= 0),
      requests_per_minute integer check (requests_per_minute >= 0),
      enabled_modules text[] not null
    )`
  yield* sql`
    insert into plans (id, position, price_ars, plate_queries_monthly, module_queries_monthly,
                       unique_plates_daily, requests_per_minute, enabled_modules) values
      ('free', 1, 0, 100, 20, 25, 30, '{fines,vtv}'),
      ('basic', 2, 19900, 2000, 500, 200, 60, '{fines,vtv,tax_debt,gnc}'),
      ('growth', 3, 59900, 10000, 3000, 1000, 120, '{fines,vtv,tax_debt,gnc}'),
      ('scale', 4, 199900, 50000, 15000, 5000, 240, '{fines,vtv,tax_debt,gnc}')`

  yield* sql`
    create table accounts (
      id text primary key,
      owner text not null,
      plan text not null check (plan in ('free', 'basic', 'growth', 'scale', 'custom')),
      timezone text not null,
      created_at timestamptz not null
    )`

  // The custom plan of an account; null allowances are unlimited.
  yield* sql`
    create table custom_plans (
      account_id text primary key references accounts (id) on delete cascade,
      plate_queries_monthly integer check (plate_queries_monthly >= 0),
      module_queries_monthly integer check (module_queries_monthly >= 0),
      unique_plates_daily integer check (unique_plates_daily >= 0),
      requests_per_minute integer check (requests_per_minute >= 0),
      module_price_ars integer not null default 550 check (module_price_ars >= 0),
      included_modules integer not null default 0 check (included_modules >= 0),
      enabled_modules text[] not null default '{fines,vtv,tax_debt,gnc}'
    )`

  yield* sql`
    create table api_keys (
      id text primary key,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      name text,
      key_hash text not null unique,
      prefix text not null,
      last4 text not null,
      created_at timestamptz not null,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`
  yield* sql`create index api_keys_account on api_keys (account_id, environment)`

  // One row per account, environment, meter and period. Meters with a limit are checked and
  // incremented under the row lock; the others (per version, per module) are plain counters.
  yield* sql`
    create table meter_counters (
      account_id text not null references accounts (id) on delete cascade,
      environment text not null,
      meter text not null,
      period_start timestamptz not null,
      used integer not null check (used >= 0),
      primary key (account_id, environment, meter, period_start)
    )`

  // Values counted once per period (a plate per account-day for unique plates).
  yield* sql`
    create table meter_distinct_values (
      account_id text not null references accounts (id) on delete cascade,
      environment text not null,
      meter text not null,
      period_start timestamptz not null,
      value text not null,
      primary key (account_id, environment, meter, period_start, value)
    )`

  // Price and included units of a custom plan's module usage, frozen when the period opens.
  yield* sql`
    create table module_billing_periods (
      account_id text not null references accounts (id) on delete cascade,
      environment text not null,
      period_start timestamptz not null,
      unit_price_cents integer not null,
      included integer not null,
      primary key (account_id, environment, period_start)
    )`
})
