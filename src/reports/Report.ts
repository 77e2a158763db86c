/**
 * The V1Report resource (DESIGN §11) from a report operation's row: `report` is filled once the
 * report is final (the vehicle's v2 data or null, the module results as v2 shows them, the digest).
 */
import { completedAtOf, isFinal, type VehicleSearchResult } from "../../workflows/shared.js"
import type { ModuleRow, OperationRow } from "../operations/Repo.js"
import type { ModuleResults } from "../operations/Api.js"
import type { VehicleData } from "../vehicles/Response.js"
import type { V1Report } from "./Api.js"
import { digestOf, type DigestInput } from "./Digest.js"


const moduleResult = (row: ModuleRow) => ({
  status: row.status,
  data: row.data ?? null,
  error: row.error ?? null,
  ...(row.warnings.length > 0 ? { warnings: row.warnings } : {})
})

/** The vehicle's data as the basic query gives it; null when not found or not obtained. */
const vehicleOf = (result: VehicleSearchResult | null) => {
  if (result === null || !result.ok) return null
  const response = result.response as { found?: boolean; data?: unknown } | null
  return response?.found === true ? response.data ?? null : null
}

export const toV1Report = (row: OperationRow, modules: ReadonlyArray<ModuleRow>): V1Report => {
  const final = isFinal(row.status)
  const results = Object.fromEntries(modules.map((m) => [m.module, moduleResult(m)]))
  return {
    id: row.id,
    status: row.status,
    plate: row.plate,
    report: final
      ? {
        vehicle: vehicleOf(row.result) as VehicleData | null,
        results: results as ModuleResults,
        digest: digestOf(results as DigestInput, row.updatedAt.toISOString().slice(0, 10))
      }
      : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: completedAtOf(row)
  }
}
