/**
 * A realistic report for a sample plate, from the sandbox's generators: what v1's test event
 * carries, so an integrator sees the real shape (vehicle, module results, digest).
 */
import { MODULES } from "../../workflows/shared.js"
import { generateVehicle } from "../sandbox/Generator.js"
import { syntheticModule } from "../sandbox/Modules.js"
import { digestOf, type DigestInput } from "./Digest.js"

export const SAMPLE_PLATE = "AB123CD"

export const sampleReport = (at: Date) => {
  const vehicle = generateVehicle(SAMPLE_PLATE, "", "debt")
  const results: Record<string, { status: "completed"; data: unknown; error: null }> = {}
  for (const module of MODULES) {
    const answer = syntheticModule(SAMPLE_PLATE, "debt", module, MODULES, at.getTime())
    results[module] = { status: "completed", data: answer._tag === "Data" ? answer.data : null, error: null }
  }
  return {
    vehicle: { plate: SAMPLE_PLATE, ...vehicle.facts },
    results,
    digest: digestOf(results as DigestInput, at.toISOString().slice(0, 10))
  }
}
