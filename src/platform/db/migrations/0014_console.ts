import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The account console: one-time sign-in links, sessions, and the audit of every console action.
 * Links and sessions are stored by the SHA-256 of their secret, never the secret itself. Recent
 * operations are listed per account and environment, newest first.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table console_links (
      token_hash text primary key,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      signs_in_as text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`
  yield* sql`
    create table console_sessions (
      id_hash text primary key,
      public_id text not null unique,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      signed_in_as text not null,
      csrf_token text not null,
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz
    )`
  yield* sql`
    create table console_audit (
      id bigint generated always as identity primary key,
      account_id text not null references accounts (id) on delete cascade,
      environment text not null check (environment in ('production', 'sandbox')),
      session_id text,
      actor text not null,
      action text not null,
      target text,
      ip text,
      at timestamptz not null
    )`
  yield* sql`create index console_audit_account on console_audit (account_id, environment, at desc)`
  yield* sql`create index operations_recent on operations (account_id, environment, created_at desc, id desc)`
})
