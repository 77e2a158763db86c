import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** Webhook configuration (one per account and environment, shared by v1 and v2) and deliveries. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    create table webhook_configs (
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      url text,
      enabled boolean not null default false,
      secret text not null,
      updated_at timestamptz not null,
      primary key (account_id, environment),
      check (not enabled or url is not null)
    )`

  // One delivery per event and endpoint; its id is the event id without `evt_`. The body is the
  // exact bytes sent on every attempt.
  yield* sql`
    create table webhook_deliveries (
      id uuid primary key,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null,
      api_version text not null check (api_version in ('v1', 'v2')),
      event_type text not null,
      operation_id text unique references operations (id) on delete cascade,
      body text not null,
      status text not null check (status in ('pending', 'processed', 'failed')),
      attempts integer not null default 0,
      response_status integer,
      last_error text,
      next_attempt_at timestamptz not null,
      started_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index webhook_deliveries_list on webhook_deliveries (account_id, environment, created_at desc, id)`
  yield* sql`create index webhook_deliveries_pending on webhook_deliveries (next_attempt_at) where status = 'pending'`
})
