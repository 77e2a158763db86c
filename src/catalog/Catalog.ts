/**
 * The technical catalog: imported into PostgreSQL, looked up from an in-memory index that each
 * process reloads when an import has changed the catalog (checked at most once a second).
 */
import { Array as Arr, Clock, Context, DateTime, Effect, Layer, Option, Schema, SynchronizedRef } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlRows from "../platform/db/SqlRows.js"
import { buildIndex, type CatalogIndex, identify, type VehicleDescription } from "./Matching.js"
import { CatalogRecord } from "./Records.js"

interface Snapshot {
  readonly revision: string
  readonly index: CatalogIndex
  readonly checkedAt: number
}

const RECHECK_MS = 1000

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const revision = SqlRows.findOneOption("catalog revision", Schema.Struct({ revision: Schema.String }))(
    sql`select revision::text as revision from catalog_revision`
  ).pipe(Effect.map((row) => Option.match(row, { onNone: () => "0", onSome: ({ revision }) => revision })))
  // a version is stored as it was imported: decoded again by the import's schema, once per reload
  const load = SqlRows.findAll("catalog versions", CatalogRecord)(sql`
    select codia, brand, brand_aliases, family, family_aliases, version, years, category, body_type,
           vehicle_type, specification
    from catalog_versions`).pipe(Effect.map((rows) => buildIndex(rows)))

  const snapshot = yield* SynchronizedRef.make<Snapshot>({ revision: "", index: buildIndex([]), checkedAt: -Infinity })

  const current = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    SynchronizedRef.updateAndGetEffect(snapshot, (s) => {
      if (now - s.checkedAt < RECHECK_MS) return Effect.succeed(s)
      return Effect.flatMap(revision, (latest) =>
        latest === s.revision
          ? Effect.succeed({ ...s, checkedAt: now })
          : Effect.map(load, (index) => ({ revision: latest, index, checkedAt: now })))
    })).pipe(Effect.map((s) => s.index), Effect.orDie)

  return {
    /** Identifies a vehicle against the current catalog. */
    identify: Effect.fnUntraced(function*(vehicle: VehicleDescription) {
      const index = yield* current
      const year = DateTime.getPartUtc(yield* DateTime.now, "year")
      return identify(index, vehicle, year)
    }),

    /** Adds or replaces versions (by codia) in one transaction. */
    importRecords: Effect.fnUntraced(function*(records: ReadonlyArray<CatalogRecord>) {
      const rows = records.map((r) => ({
        codia: r.codia,
        brand: r.brand,
        brandAliases: [...r.brandAliases],
        family: r.family,
        familyAliases: [...r.familyAliases],
        version: r.version,
        years: [...r.years],
        category: r.category,
        bodyType: r.bodyType,
        vehicleType: r.vehicleType,
        specification: JSON.stringify(r.specification)
      }))
      for (const chunk of Arr.chunksOf(rows, 500)) {
        yield* sql`
          insert into catalog_versions ${sql.insert(chunk)}
          on conflict (codia) do update set
            brand = excluded.brand, brand_aliases = excluded.brand_aliases, family = excluded.family,
            family_aliases = excluded.family_aliases, version = excluded.version, years = excluded.years,
            category = excluded.category, body_type = excluded.body_type,
            vehicle_type = excluded.vehicle_type, specification = excluded.specification`
      }
      yield* sql`update catalog_revision set revision = revision + 1, updated_at = now()`
      return records.length
    }, sql.withTransaction, Effect.orDie)
  }
})

export class Catalog extends Context.Service<Catalog, Effect.Success<typeof make>>()("vda/Catalog", { make }) {
  static readonly layer = Layer.effect(Catalog, make)
}
