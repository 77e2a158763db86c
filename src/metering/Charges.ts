/**
 * What each kind of accepted call consumes (the spec's metering rules), as consumptions for the
 * consumption primitive.
 */
import type { Principal } from "../accounts/Domain.js"
import type { Consumption } from "./Metering.js"
import { type ApiVersion, byVersion } from "./Meters.js"
import { dayOf, monthOf } from "./Periods.js"

/** One plate query this month, and the plate once per account-day toward unique plates. */
export const plateQuery = (principal: Principal, plate: string, at: number, version: ApiVersion = "v2"): Consumption => {
  const month = monthOf(at, principal.timezone)
  const { entitlements } = principal
  return {
    accountId: principal.accountId,
    environment: principal.environment,
    charges: [
      { meter: "plate_queries", amount: 1, limit: entitlements.plateQueriesMonthly, period: month },
      {
        meter: "unique_plates",
        amount: 1,
        limit: entitlements.uniquePlatesDaily,
        period: dayOf(at, principal.timezone),
        distinctValue: plate
      },
      { meter: byVersion(version, "plate_queries"), amount: 1, period: month }
    ]
  }
}
