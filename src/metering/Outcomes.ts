/**
 * What metering decided, counted for the people who run the service: charges accepted,
 * operations reused (nothing charged), quotas exceeded by meter, requests refused by the
 * per-minute limit. Counted where the decision is made, once per metered request.
 */
import { Either, Metric } from "effect"
import { labelSets } from "../platform/Telemetry.js"
import type { Environment } from "../platform/RequestContext.js"
import type { Decision } from "./Metering.js"

const outcomes = Metric.counter("vda_metering_outcomes", {
  description: "Metering decisions by outcome (accepted, reused, quota_exceeded, rate_limited) and meter",
  incremental: true
})
const labelsOf = labelSets("environment", "outcome", "meter")

const count = (environment: Environment, outcome: string, meter: string) =>
  outcomes.unsafeUpdate(1, labelsOf(environment, outcome, meter))

/** A consumption charged (`accepted`) or refused by an allowance (`quota_exceeded` on its meter). */
export const countDecision = (environment: Environment, decision: Decision) =>
  Either.isRight(decision) ? count(environment, "accepted", "none") : count(environment, "quota_exceeded", decision.left.meter)

/** A request refused by the per-minute limit. */
export const countRateLimited = (environment: Environment) => count(environment, "rate_limited", "requests")

/** An identical active operation reused: nothing charged. */
export const countReused = (environment: Environment) => count(environment, "reused", "none")
