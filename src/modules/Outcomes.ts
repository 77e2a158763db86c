/**
 * A module source's answer as the module's outcome, whichever source gave it (production's, the
 * sandbox's, or a client's test double of the sandbox).
 */
import type { ModuleOutcome } from "../../workflows/shared.js"

const REDUCED_COVERAGE = "The source covered only part of the jurisdictions for this plate"

/** A source's data as the module's outcome. */
export const answered = (data: unknown, reducedCoverage: boolean): ModuleOutcome => ({
  status: reducedCoverage ? "partial" : "completed",
  data,
  error: null,
  warnings: reducedCoverage ? [{ code: "reduced_coverage", message: REDUCED_COVERAGE }] : []
})
