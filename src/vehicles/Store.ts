/**
 * Vehicle data held in PostgreSQL: the registry (imported) and the upstream cache. Concurrent
 * lookups share one query, and rows read are kept in memory (the hot path of a busy account reads
 * the same plates again and again).
 *
 * Every write of the table is announced on a channel (`NOTIFY`), and every process that reads
 * listens (from its first read on): a registry import or an upstream answer stored by another
 * process drops the rows it changed from this process's memory as soon as it commits. While the
 * process is not listening (at first, or after its listening connection was lost, until it
 * listens again), rows are kept only briefly.
 */
import { PgClient } from "@effect/sql-pg"
import { Array as Arr, Clock, Context, Effect, FiberSet, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as Batcher from "../platform/batching/Batcher.js"
import * as Changes from "../platform/db/Changes.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { setBounded } from "../platform/caching/Bounded.js"
import { type RegistryVehicle, VehicleFacts } from "./Records.js"

export const StoredVehicle = Schema.Struct({
  plate: Schema.String,
  source: Schema.Literals(["registry", "upstream"]),
  found: Schema.Boolean,
  facts: Schema.NullOr(VehicleFacts),
  fetchedAt: Schema.Date
})
export type StoredVehicle = typeof StoredVehicle.Type

const LANES = 4
/** How long a row read is kept while the process hears every change. */
const HEARD_TTL_MS = 10 * 60_000
/** How long while it does not: another process's writes show up here within this delay. */
const UNHEARD_TTL_MS = 30_000
const HOT_MAX = 20_000

/** The channel the table's writes are announced on: the plate written, or `EVERY_PLATE`. */
export const VEHICLE_CHANGES = "vda_vehicles"
const EVERY_PLATE = "*"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // decoded once per lookup of the database, row by row; the hot cache below then holds decoded rows
  const vehicles = SqlRows.findEach("vehicles by plate", StoredVehicle, (row) => row.plate)

  const lookups = yield* Batcher.make({
    key: Batcher.spreadOver(LANES),
    process: (_lane, plates) =>
      vehicles(sql`
        select plate, source, found, facts, fetched_at from vehicles
        where plate = any(${[...new Set(plates)]}::text[])`).pipe(
        Effect.map((rows) => {
          const byPlate = new Map(rows)
          return plates.map((plate): Result.Result<StoredVehicle | undefined, SqlRows.MalformedRow> => byPlate.get(plate) ?? Result.succeed(undefined))
        })
      )
  })

  const hot = new Map<string, { readonly row: StoredVehicle | undefined; readonly until: number }>()
  let listening = false
  // bumped by every change heard: a read that began before it is not kept (it may predate the write)
  let changes = 0
  const forget = (plate: string) => {
    changes++
    if (plate === EVERY_PLATE) hot.clear()
    else hot.delete(plate)
  }
  const remember = (plate: string, row: StoredVehicle | undefined, now: number, changesBefore: number) => {
    if (changes !== changesBefore) return
    setBounded(hot, HOT_MAX, plate, { row, until: now + (listening ? HEARD_TTL_MS : UNHEARD_TTL_MS) })
  }

  // heard from the first read on: a process that only writes (the CLI's import) does not listen
  const hearing = Changes.hear(VEHICLE_CHANGES, {
    heard: forget,
    listening: (now) => {
      listening = now
      forget(EVERY_PLATE)
    }
  })
  const runHearing = yield* FiberSet.runtime(yield* FiberSet.make())<PgClient.PgClient>()
  let heard = false
  const hearFromNowOn = () => {
    if (heard) return
    heard = true
    runHearing(hearing)
  }

  /**
   * What was read for `plate` (its row, or none), while it is kept in memory; undefined when it
   * must be read. Like a read, it starts the store's listening the first time.
   */
  const heldInMemory = (plate: string, now: number) => {
    hearFromNowOn()
    const kept = hot.get(plate)
    return kept !== undefined && kept.until > now ? kept : undefined
  }

  return {
    heldInMemory,

    find: (plate: string) =>
      Clock.clockWith((clock) => {
        const now = clock.currentTimeMillisUnsafe()
        const kept = heldInMemory(plate, now)
        if (kept !== undefined) return Effect.succeed(kept.row)
        const changesBefore = changes
        return lookups.submit(plate).pipe(
          Effect.tap((row) => Effect.sync(() => remember(plate, row, now, changesBefore))),
          Effect.orDie
        )
      }),

    /** Stores an upstream answer (a miss too); never overwrites registry data. Announced in the same statement. */
    cacheUpstream: (plate: string, facts: VehicleFacts | null, at: Date) =>
      Effect.sync(() => forget(plate)).pipe(
        Effect.andThen(sql`
          with stored as (
            insert into vehicles (plate, source, found, facts, fetched_at)
            values (${plate}, 'upstream', ${facts !== null}, ${facts === null ? null : JSON.stringify(facts)}, ${at})
            on conflict (plate) do update set found = excluded.found, facts = excluded.facts, fetched_at = excluded.fetched_at
            where vehicles.source = 'upstream'
          )
          select ${Changes.announcement(sql, VEHICLE_CHANGES, plate)}`),
        Effect.asVoid,
        Effect.orDie
      ),

    /** Adds or replaces registry vehicles (in the caller's transaction). */
    importRegistry: Effect.fnUntraced(function*(vehicles: ReadonlyArray<RegistryVehicle>, at: Date) {
      for (const chunk of Arr.chunksOf(vehicles, 500)) {
        const rows = Arr.map(chunk, ({ kind: _kind, plate, ...facts }) => ({
          plate,
          source: "registry",
          found: true,
          facts: JSON.stringify(facts),
          fetchedAt: at
        }))
        yield* sql`
          insert into vehicles ${sql.insert(rows)}
          on conflict (plate) do update set source = 'registry', found = true, facts = excluded.facts,
            fetched_at = excluded.fetched_at`
      }
      yield* Changes.announce(sql, VEHICLE_CHANGES, EVERY_PLATE)
      forget(EVERY_PLATE)
      return vehicles.length
    }, Effect.orDie)
  }
})

export class VehicleStore extends Context.Service<VehicleStore, Effect.Success<typeof make>>()("vda/VehicleStore", { make }) {
  static readonly layer = Layer.effect(VehicleStore, make)
}
