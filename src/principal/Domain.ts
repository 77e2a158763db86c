/**
 * Plans and the authenticated caller, as every feature sees them: the accounts administer them,
 * metering counts against them.
 */
import { Data, Schema } from "effect"
import type { Environment } from "../platform/http/RequestContext.js"
import { Module } from "../modules/Names.js"
import { Limit } from "../platform/contract/Schemas.js"

/** An API key's prefix per environment; the secret after it is `KEY_SECRET_LENGTH` base62 characters. */
export const KEY_PREFIX: Readonly<Record<Environment, string>> = { production: "vda_live_", sandbox: "vda_test_" }
export const KEY_SECRET_LENGTH = 32

/** The plans anyone can pick, cheapest first; `custom` is negotiated per account. */
export const STANDARD_PLANS = ["free", "basic", "growth", "scale"] as const
export const StandardPlanId = Schema.Literals(STANDARD_PLANS)
export type StandardPlanId = typeof StandardPlanId.Type
export const PlanId = Schema.Literals([...STANDARD_PLANS, "custom"])
export type PlanId = typeof PlanId.Type

/** The standard plan whose allowances and modules a custom plan starts from, as the plans table holds it. */
export const CUSTOM_PLAN_BASE: StandardPlanId = "scale"

/** A plan's allowances (null is unlimited) and modules, as plans, custom plans and entitlements hold them. */
export const allowanceFields = {
  plateQueriesMonthly: Limit,
  moduleQueriesMonthly: Limit,
  uniquePlatesDaily: Limit,
  requestsPerMinute: Limit,
  enabledModules: Schema.Array(Module)
}

export const Entitlements = Schema.Struct({
  plan: PlanId,
  ...allowanceFields,
  timezone: Schema.String
}).annotate({ identifier: "Entitlements" })
export type Entitlements = typeof Entitlements.Type

/** Custom plans bill modules: the price and included units that apply to a new billing period. */
export interface ModulePricing {
  readonly unitPriceCents: number
  readonly included: number
}

/** Who is calling: the account behind a valid key, on the key's environment. */
export interface Principal {
  readonly accountId: string
  readonly owner: string
  readonly keyId: string
  readonly environment: Environment
  readonly timezone: string
  readonly entitlements: Entitlements
  /** Present for the custom plan only. */
  readonly modulePricing: ModulePricing | null
}

/** What the caller's reads of its own account data are shared by: its account and environment. */
export const accountKey = (principal: Principal) => `${principal.accountId}/${principal.environment}`

export const isPaidOrCustom = (plan: PlanId) => plan !== "free"

/** What the caller asked for needs a paid or custom plan: `options`, by the names the caller used. */
export class PaidPlanRequired extends Data.TaggedError("PaidPlanRequired")<{ readonly options: ReadonlyArray<string> }> {}
