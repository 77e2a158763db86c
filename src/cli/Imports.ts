/**
 * Catalog and registry imports from JSON Lines files: every line is validated first, then
 * everything is written in one transaction, or nothing is.
 */
import { Clock, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Catalog } from "../catalog/Catalog.js"
import { CatalogRecord } from "../catalog/Records.js"
import { RegistryFine, RegistryGnc, RegistryTaxDebt, RegistryVtv } from "../modules/Records.js"
import { ModuleRegistry } from "../modules/Registry.js"
import { readJsonLines } from "../platform/decoding/JsonLines.js"
import { RegistryVehicle } from "../vehicles/Records.js"
import { VehicleStore } from "../vehicles/Store.js"

export const importCatalog = Effect.fnUntraced(function*(path: string) {
  const rows = yield* readJsonLines(path, CatalogRecord, { name: "codia", key: (r) => r.codia })
  return yield* (yield* Catalog).importRecords(rows.map((r) => r.value))
})

export interface RegistryCounts {
  readonly vehicles: number
  readonly moduleRecords: number
}

export const describeRegistryCounts = (counts: RegistryCounts) =>
  `${counts.vehicles} vehicles and ${counts.moduleRecords} module records`

/**
 * A registry line: a vehicle, or one record of a module (a fine, an inspection…). One flat union
 * discriminated by `kind`, so a bad line is reported against its own kind only.
 */
const RegistryLine = Schema.Union([RegistryVehicle, RegistryFine, RegistryVtv, RegistryTaxDebt, RegistryGnc])

export const importRegistry = Effect.fnUntraced(function*(path: string) {
  const rows = yield* readJsonLines(path, RegistryLine, {
    name: "vehicle plate",
    key: (r) => (r.kind === "vehicle" ? r.plate : undefined)
  })
  const at = new Date(yield* Clock.currentTimeMillis)
  const lines = rows.map((r) => r.value)
  const sql = yield* SqlClient.SqlClient
  return yield* Effect.gen(function*() {
    const vehicles = yield* (yield* VehicleStore).importRegistry(lines.filter((l) => l.kind === "vehicle"), at)
    const moduleRecords = yield* (yield* ModuleRegistry).replace(lines.filter((l) => l.kind !== "vehicle"), at)
    return { vehicles, moduleRecords } satisfies RegistryCounts
  }).pipe(sql.withTransaction, Effect.orDie)
})
