/**
 * v1's status (DESIGN §11), computed from the account status v2 shows: v1's plan names, its three
 * usage meters, and for custom plans the billing estimate with the month's frozen module prices.
 */
import type { PlanId } from "../principal/Domain.js"
import type { Usage } from "../metering/Api.js"
import type { V1Status } from "./Api.js"

/** The v1 names of the plans, position by position: v2's basic was v1's starter. */
const V1_PLAN_NAMES: Record<PlanId, V1Status["plan"]> = {
  free: "free",
  basic: "starter",
  growth: "growth",
  scale: "scale",
  custom: "custom"
}

export interface AccountStatusData {
  readonly owner: string
  readonly plan: PlanId
  readonly usage: Usage
  readonly keys: V1Status["keys"]
}

/** `YYYY-MM` of the month that starts at `start`, in the account's timezone. */
const monthKey = (start: Date, timezone: string) => {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit" }).formatToParts(start)
  return `${parts.find((p) => p.type === "year")!.value}-${parts.find((p) => p.type === "month")!.value}`
}

const customBilling = (usage: Usage): NonNullable<V1Status["customBilling"]> => {
  const modules = Object.values(usage.modules ?? {}).filter((m) => m !== undefined)
  const overage = modules.reduce((sum, m) => sum + m.overage, 0)
  const overageCents = modules.reduce((sum, m) => sum + m.overage * m.unitPriceCents, 0)
  const { moduleQueries, plateQueries } = usage
  return {
    contract: { status: "active" },
    period: { key: monthKey(plateQueries.startsAt, usage.timezone), start: plateQueries.startsAt, end: plateQueries.endsAt },
    usage: {
      basic: { used: plateQueries.used, limit: plateQueries.limit, remaining: plateQueries.remaining },
      report: { used: usage.byVersion.v1?.reports ?? 0, limit: null, remaining: null },
      modules: {
        used: moduleQueries.used,
        limit: moduleQueries.limit,
        remaining: moduleQueries.remaining,
        overage,
        subtotal_cents: overageCents,
        currency: "ARS"
      }
    },
    // a custom plan has no base fee of its own: the estimate is what its module overage comes to
    billing: {
      base: { estimated_total_cents: overageCents, currency: "ARS", pricing_mode: "custom", tier_name: "custom" },
      modules: { estimated_overage_cents: overageCents, currency: "ARS" }
    }
  }
}

export const toV1Status = (status: AccountStatusData): V1Status => {
  const { usage } = status
  const rpm = usage.entitlements.requestsPerMinute
  return {
    owner: status.owner,
    plan: V1_PLAN_NAMES[status.plan],
    usage: {
      fast: { used: usage.plateQueries.used, limit: usage.plateQueries.limit },
      intelligent: { used: usage.moduleQueries.used, limit: usage.moduleQueries.limit },
      miss: { used: usage.uniquePlates.used, limit: usage.uniquePlates.limit }
    },
    rateLimits: { rpm_total: rpm, rpm_intelligent: rpm },
    resetAt: usage.plateQueries.endsAt,
    customBilling: status.plan === "custom" ? customBilling(usage) : null,
    keys: status.keys
  }
}
