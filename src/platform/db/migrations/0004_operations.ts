import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** Durable operations (module lookups, vehicle searches) and the registry's module records. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    create table operations (
      id text primary key,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      kind text not null check (kind in ('modules', 'vehicle')),
      plate text not null,
      modules_key text,
      status text not null check (status in ('queued', 'processing', 'completed', 'partial', 'failed')),
      input jsonb not null,
      result jsonb,
      started_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      check ((kind = 'modules') = (modules_key is not null))
    )`
  // At most one active operation per account, environment, plate and exact module set: the
  // database decides reuse, atomically with metering.
  yield* sql`
    create unique index operations_active_reuse on operations (account_id, environment, plate, modules_key)
    where kind = 'modules' and status in ('queued', 'processing')`
  yield* sql`create index operations_active on operations (created_at) where status in ('queued', 'processing')`

  yield* sql`
    create table operation_modules (
      operation_id text not null references operations (id) on delete cascade,
      module text not null check (module in ('fines', 'vtv', 'tax_debt', 'gnc')),
      status text not null check (status in ('queued', 'processing', 'completed', 'partial', 'failed')),
      data jsonb,
      error jsonb,
      warnings jsonb not null default '[]',
      updated_at timestamptz not null,
      primary key (operation_id, module)
    )`

  // Module records of the production registry (`vda registry import`), one item per row.
  yield* sql`
    create table module_records (
      id bigserial primary key,
      plate text not null,
      module text not null check (module in ('fines', 'vtv', 'tax_debt', 'gnc')),
      item jsonb not null,
      imported_at timestamptz not null
    )`
  yield* sql`create index module_records_plate on module_records (plate, module)`
})
