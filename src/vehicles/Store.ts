/**
 * Vehicle data held in PostgreSQL: the registry (imported) and the upstream cache. Concurrent
 * lookups share one query.
 */
import { Array as Arr, Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { SqlClient } from "effect/sql"
import * as Batcher from "../platform/batching/Batcher.js"
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
/**
 * Recently read rows are kept in memory for a short while: the hot path of a busy account reads
 * the same plates again and again. Another process's imports show up here within this delay.
 */
const HOT_TTL_MS = 30_000
const HOT_MAX = 20_000

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
  const remember = (plate: string, row: StoredVehicle | undefined, now: number) => {
    setBounded(hot, HOT_MAX, plate, { row, until: now + HOT_TTL_MS })
  }

  return {
    find: (plate: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const cached = hot.get(plate)
        if (cached !== undefined && cached.until > now) return Effect.succeed(cached.row)
        return lookups.submit(plate).pipe(
          Effect.tap((row) => Effect.sync(() => remember(plate, row, now))),
          Effect.orDie
        )
      }),

    /** Stores an upstream answer (a miss too); never overwrites registry data. */
    cacheUpstream: (plate: string, facts: VehicleFacts | null, at: Date) =>
      Effect.sync(() => hot.delete(plate)).pipe(Effect.andThen(sql`
        insert into vehicles (plate, source, found, facts, fetched_at)
        values (${plate}, 'upstream', ${facts !== null}, ${facts === null ? null : JSON.stringify(facts)}, ${at})
        on conflict (plate) do update set found = excluded.found, facts = excluded.facts, fetched_at = excluded.fetched_at
        where vehicles.source = 'upstream'`), Effect.asVoid, Effect.orDie),

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
      hot.clear()
      return vehicles.length
    }, Effect.orDie)
  }
})

export class VehicleStore extends Context.Service<VehicleStore, Effect.Success<typeof make>>()("vda/VehicleStore", { make }) {
  static readonly layer = Layer.effect(VehicleStore, make)
}
