/**
 * How the sandbox plays its scenarios (`Scenario`, a parameter of the vehicle contract). A request
 * picks one with `sandbox_scenario`; without it, the plate's digit group does (the magic plates), so module requests, which take no parameter, can choose too.
 */
import type { Scenario } from "../vehicles/Api.js"
import { plateDigits } from "../vehicles/Plates.js"

export interface SandboxBehaviour {
  readonly scenario: Scenario
  /** The vehicle query answers `found: false`. */
  readonly notFound: boolean
  /** The vehicle is not "cached": the query waits for the (simulated) source. */
  readonly cacheMiss: boolean
}

const MAGIC: Record<string, SandboxBehaviour> = {
  "000": { scenario: "clean", notFound: false, cacheMiss: false },
  "111": { scenario: "debt", notFound: false, cacheMiss: false },
  "222": { scenario: "partial", notFound: false, cacheMiss: false },
  "333": { scenario: "unavailable", notFound: false, cacheMiss: false },
  "444": { scenario: "failed", notFound: true, cacheMiss: false },
  "404": { scenario: "default", notFound: true, cacheMiss: false },
  "202": { scenario: "default", notFound: false, cacheMiss: true }
}

export const sandboxBehaviour = (plate: string, requested: Scenario | undefined): SandboxBehaviour =>
  requested !== undefined
    ? { scenario: requested, notFound: requested === "failed", cacheMiss: false }
    : MAGIC[plateDigits(plate)] ?? { scenario: "default", notFound: false, cacheMiss: false }
