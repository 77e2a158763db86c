import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** The technical catalog, and vehicle data from the registry and from upstream (cached). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    create table catalog_versions (
      codia text primary key,
      brand text not null,
      brand_aliases text[] not null,
      family text not null,
      family_aliases text[] not null,
      version text not null,
      years integer[] not null,
      category text not null,
      body_type text not null,
      vehicle_type text not null,
      specification jsonb not null
    )`

  // Bumped by every import, so API processes know when to reload their in-memory index.
  yield* sql`
    create table catalog_revision (
      singleton boolean primary key default true check (singleton),
      revision bigint not null,
      updated_at timestamptz not null
    )`
  yield* sql`insert into catalog_revision (revision, updated_at) values (0, now())`

  // `registry` rows come from `vda registry import` and do not expire; `upstream` rows are the
  // cache of the upstream source (a miss is cached too, with found = false).
  yield* sql`
    create table vehicles (
      plate text primary key,
      source text not null check (source in ('registry', 'upstream')),
      found boolean not null,
      facts jsonb,
      fetched_at timestamptz not null,
      check (found = (facts is not null))
    )`
})
