import { describe, expect, it } from "vitest"
import * as Charges from "../../src/metering/Charges.js"
import type { Charge } from "../../src/metering/Metering.js"
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

const named = (charges: ReadonlyArray<Charge>) =>
  charges.map(({ meter, amount, limit, distinctValue }) => ({ meter, amount, limit, distinctValue }))

describe("what each kind of call consumes", () => {
  it("a plate query: the month's plate queries, the plate toward the day's unique plates, its version's and its day's counts", () => {
    expect(named(Charges.plateQuery(principal, "AB123CD", AT).charges)).toEqual([
      { meter: "plate_queries", amount: 1, limit: 100, distinctValue: undefined },
      { meter: "unique_plates", amount: 1, limit: 10, distinctValue: "AB123CD" },
      { meter: "v2:plate_queries", amount: 1, limit: undefined, distinctValue: undefined },
      { meter: "day:plate_queries", amount: 1, limit: undefined, distinctValue: undefined }
    ])
  })

  it("module queries: one per module, by version, by day and by module", () => {
    expect(named(Charges.moduleQueries(principal, ["fines", "vtv"], AT, "v1").charges)).toEqual([
      { meter: "module_queries", amount: 2, limit: 10, distinctValue: undefined },
      { meter: "v1:module_queries", amount: 2, limit: undefined, distinctValue: undefined },
      { meter: "day:module_queries", amount: 2, limit: undefined, distinctValue: undefined },
      { meter: "module:fines", amount: 1, limit: undefined, distinctValue: undefined },
      { meter: "module:vtv", amount: 1, limit: undefined, distinctValue: undefined }
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
