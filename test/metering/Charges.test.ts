/**
 * What each kind of accepted call consumes (`metering/Charges.ts`), and the one shape every charge
 * has whichever call made it.
 */
import { describe, expect, it } from "vitest"
import * as Charges from "../../src/metering/Charges.js"
import type { Charge } from "../../src/metering/Metering.js"
import { dayOf, monthOf, type Period } from "../../src/metering/Periods.js"
import type { Principal } from "../../src/principal/Domain.js"

const TIMEZONE = "America/Argentina/Buenos_Aires"
const AT = Date.UTC(2026, 10, 27, 15, 0, 0)

const principal: Principal = {
  accountId: "acc_charges", owner: "Charges", keyId: "key_charges", environment: "production", timezone: TIMEZONE, modulePricing: null,
  entitlements: {
    plan: "growth", plateQueriesMonthly: 100, moduleQueriesMonthly: 10, uniquePlatesDaily: 10, requestsPerMinute: 60,
    enabledModules: ["fines", "vtv"], timezone: TIMEZONE
  }
}

const MONTH = monthOf(AT, TIMEZONE)
const DAY = dayOf(AT, TIMEZONE)

const samePeriod = (a: Period, b: Period) => a.start.getTime() === b.start.getTime() && a.end.getTime() === b.end.getTime()

/** Each charge, its period named. */
const counted = (charges: ReadonlyArray<Charge>) =>
  charges.map(({ meter, amount, period, limit, distinctValue }) => ({
    meter,
    amount,
    period: samePeriod(period, MONTH) ? "month" : samePeriod(period, DAY) ? "day" : period,
    limit,
    distinctValue
  }))

describe("what each kind of call consumes", () => {
  it("a plate query: the month's plate queries, the plate toward the day's unique plates, its version's and its day's counts", () => {
    expect(counted(Charges.plateQuery(principal, "AB123CD", AT).charges)).toEqual([
      { meter: "plate_queries", amount: 1, period: "month", limit: 100, distinctValue: undefined },
      { meter: "unique_plates", amount: 1, period: "day", limit: 10, distinctValue: "AB123CD" },
      { meter: "v2:plate_queries", amount: 1, period: "month", limit: undefined, distinctValue: undefined },
      { meter: "day:plate_queries", amount: 1, period: "day", limit: undefined, distinctValue: undefined }
    ])
  })

  it("module queries: one per module, by version, by day and by module", () => {
    expect(counted(Charges.moduleQueries(principal, ["fines", "vtv"], AT, "v1").charges)).toEqual([
      { meter: "module_queries", amount: 2, period: "month", limit: 10, distinctValue: undefined },
      { meter: "v1:module_queries", amount: 2, period: "month", limit: undefined, distinctValue: undefined },
      { meter: "day:module_queries", amount: 2, period: "day", limit: undefined, distinctValue: undefined },
      { meter: "module:fines", amount: 1, period: "month", limit: undefined, distinctValue: undefined },
      { meter: "module:vtv", amount: 1, period: "month", limit: undefined, distinctValue: undefined }
    ])
  })

  it("a v1 report: its plate query and module queries under v1, and the report itself", () => {
    expect(counted(Charges.report(principal, "AB123CD", ["gnc"], AT).charges).map(({ meter, amount }) => `${meter} ${amount}`)).toEqual([
      "plate_queries 1",
      "unique_plates 1",
      "v1:plate_queries 1",
      "day:plate_queries 1",
      "module_queries 1",
      "v1:module_queries 1",
      "day:module_queries 1",
      "module:gnc 1",
      "v1:reports 1"
    ])
  })

  it("every charge has one shape, its fields in one order, whichever call made it", () => {
    const charges = [
      ...Charges.plateQuery(principal, "AB123CD", AT).charges,
      ...Charges.moduleQueries(principal, ["gnc"], AT).charges,
      ...Charges.report(principal, "AB123CD", ["tax_debt"], AT).charges
    ]
    expect(new Set(charges.map((charge) => Object.keys(charge).join()))).toEqual(new Set(["meter,amount,period,limit,distinctValue"]))
  })
})
