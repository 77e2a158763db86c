/**
 * Catalog and registry imports from JSON Lines files: every line is validated first, then
 * everything is written in one transaction, or nothing is.
 */
import { Clock, Effect } from "effect"
import { Catalog } from "../catalog/Catalog.js"
import { CatalogRecord } from "../catalog/Records.js"
import { readJsonLines } from "../platform/JsonLines.js"
import { RegistryVehicle } from "../vehicles/Records.js"
import { VehicleStore } from "../vehicles/Store.js"

export const importCatalog = (path: string) =>
  Effect.gen(function*() {
    const rows = yield* readJsonLines(path, CatalogRecord, { name: "codia", key: (r) => r.codia })
    return yield* (yield* Catalog).importRecords(rows.map((r) => r.value))
  })

export interface RegistryCounts {
  readonly vehicles: number
}

export const describeRegistryCounts = (counts: RegistryCounts) => `${counts.vehicles} vehicles`

export const importRegistry = (path: string) =>
  Effect.gen(function*() {
    const rows = yield* readJsonLines(path, RegistryVehicle, { name: "plate", key: (r) => r.plate })
    const at = new Date(yield* Clock.currentTimeMillis)
    const vehicles = yield* (yield* VehicleStore).importRegistry(rows.map((r) => r.value), at)
    return { vehicles } satisfies RegistryCounts
  })
