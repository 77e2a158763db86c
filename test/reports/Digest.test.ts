/**
 * The report digest as a pure function: counts and amounts, VTV and GNC statuses, and alerts.
 */
import { describe, expect, it } from "vitest"
import { digestOf } from "../../src/reports/Digest.js"

const fine = (status: string, amount: number) => ({
  date: "2026-10-01", amount, status, authority: null, reference: null, description: null,
  jurisdiction: "Córdoba", dueDate: null, discountedAmount: null
})
const vtv = (date: string, result: "approved" | "expired" | "rejected", dueDate: string | null) => ({
  type: "VTV", date, sticker: null, inspectionType: "inspection" as const, detail: null, result,
  certificate: null, jurisdiction: "Córdoba", facility: null, dueDate
})
const gncItem = { operationDate: "2025-01-01", workshop: null, workshopTaxId: null, workshopCode: null, sticker: "X", previousSticker: null }
const ok = <D>(data: D) => ({ status: "completed", data })
const failed = { status: "failed", data: null }

describe("digestOf", () => {
  it("a clean vehicle: no alerts, valid VTV, no GNC", () => {
    expect(digestOf({
      fines: ok({ total: 0, amountTotal: 0, currency: "ARS" as const, items: [] }),
      tax_debt: ok({ total: 0, amountTotal: 0, currency: "ARS" as const, items: [] }),
      vtv: ok({ total: 1, items: [vtv("2026-03-01", "approved", "2027-03-01")] }),
      gnc: ok({ total: 0, items: [] })
    }, "2026-11-24")).toEqual({
      currency: "ARS", finesCount: 0, finesAmount: 0, taxDebtCount: 0, taxDebtAmount: 0,
      vtvStatus: "valid", gncStatus: "none", alerts: []
    })
  })

  it("debts, an expired VTV (the latest inspection counts), GNC on record", () => {
    expect(digestOf({
      fines: ok({ total: 2, amountTotal: 45_000, currency: "ARS" as const, items: [fine("paid", 15_000), fine("pending", 30_000)] }),
      tax_debt: ok({ total: 1, amountTotal: 12_500.5, currency: "ARS" as const, items: [] }),
      vtv: ok({ total: 2, items: [vtv("2024-01-10", "approved", "2025-01-10"), vtv("2023-01-10", "approved", "2030-01-01")] }),
      gnc: ok({ total: 1, items: [gncItem] })
    }, "2026-11-24")).toEqual({
      currency: "ARS", finesCount: 2, finesAmount: 45_000, taxDebtCount: 1, taxDebtAmount: 12_500.5,
      vtvStatus: "expired", gncStatus: "active", alerts: ["unpaid_fines", "tax_debt", "vtv_expired"]
    })
  })

  it("all fines paid: no unpaid_fines alert; a VTV due today is still valid; a rejected one is expired", () => {
    const paid = ok({ total: 1, amountTotal: 10, currency: "ARS" as const, items: [fine("PAID", 10)] })
    expect(digestOf({ fines: paid, vtv: ok({ total: 1, items: [vtv("2025-11-24", "approved", "2026-11-24")] }) }, "2026-11-24"))
      .toMatchObject({ finesCount: 1, vtvStatus: "valid", alerts: [] })
    expect(digestOf({ vtv: ok({ total: 1, items: [vtv("2026-11-01", "rejected", "2027-11-01")] }) }, "2026-11-24"))
      .toMatchObject({ vtvStatus: "expired", alerts: ["vtv_expired"] })
  })

  it("no inspection on record: vtv_missing; modules that failed or were not asked are unknown", () => {
    expect(digestOf({ vtv: ok({ total: 0, items: [] }), gnc: failed, fines: failed }, "2026-11-24")).toEqual({
      currency: "ARS", finesCount: 0, finesAmount: 0, taxDebtCount: 0, taxDebtAmount: 0,
      vtvStatus: "none", gncStatus: "unknown", alerts: ["vtv_missing", "module_unavailable"]
    })
    expect(digestOf({}, "2026-11-24")).toMatchObject({ vtvStatus: "unknown", gncStatus: "unknown", alerts: [] })
  })
})
