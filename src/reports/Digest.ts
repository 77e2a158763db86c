/**
 * A report's digest (DESIGN §11): what a reader needs at a glance from the vehicle's module
 * results. One pure function; the report workflow and the v1 test event both use it.
 *
 * - fines and tax debt: how many records and their total amount (0 when the module gave none);
 * - VTV: `valid` when the latest inspection passed and is not past its due date, `expired` when it
 *   is, `none` without inspections, `unknown` when the module did not answer (or was not asked);
 * - GNC: `active` with a conversion on record, `none` without, `unknown` when it did not answer;
 * - alerts, in this order: unpaid_fines, tax_debt, vtv_expired, vtv_missing, module_unavailable.
 */
import type { FinesData, GncData, TaxDebtData, VtvData } from "../modules/Records.js"

export type DigestAlert = "unpaid_fines" | "tax_debt" | "vtv_expired" | "vtv_missing" | "module_unavailable"

export interface Digest {
  readonly currency: "ARS"
  readonly finesCount: number
  readonly finesAmount: number
  readonly taxDebtCount: number
  readonly taxDebtAmount: number
  readonly vtvStatus: "valid" | "expired" | "none" | "unknown"
  readonly gncStatus: "active" | "none" | "unknown"
  readonly alerts: ReadonlyArray<DigestAlert>
}

/** A module's result as an operation holds it: data when it answered, null when it failed. */
export interface ModuleResultLike<D> {
  readonly status: string
  readonly data: D | null
}

export interface DigestInput {
  readonly fines?: ModuleResultLike<FinesData>
  readonly vtv?: ModuleResultLike<VtvData>
  readonly tax_debt?: ModuleResultLike<TaxDebtData>
  readonly gnc?: ModuleResultLike<GncData>
}

const answered = <D>(result: ModuleResultLike<D> | undefined): D | undefined =>
  result !== undefined && result.status !== "failed" && result.data !== null ? result.data : undefined

const vtvStatusOf = (data: VtvData | undefined, asOf: string): Digest["vtvStatus"] => {
  if (data === undefined) return "unknown"
  const latest = [...data.items].sort((a, b) => (b.date ?? "").localeCompare(a.date ?? ""))[0]
  if (latest === undefined) return "none"
  const passed = latest.result === "approved" || latest.result === "conditional"
  const current = latest.dueDate === null || latest.dueDate >= asOf
  return passed && current ? "valid" : "expired"
}

/** `asOf` is the day the digest speaks for (`YYYY-MM-DD`): VTV due dates are compared with it. */
export const digestOf = (results: DigestInput, asOf: string): Digest => {
  const fines = answered(results.fines)
  const taxDebt = answered(results.tax_debt)
  const vtv = answered(results.vtv)
  const gnc = answered(results.gnc)
  const vtvStatus = vtvStatusOf(vtv, asOf)
  const gncStatus: Digest["gncStatus"] = gnc === undefined ? "unknown" : gnc.items.length > 0 ? "active" : "none"
  const failed = Object.values(results).some((r) => r !== undefined && answered(r) === undefined)
  const alerts: Array<DigestAlert> = []
  if (fines?.items.some((item) => item.status.toLowerCase() !== "paid")) alerts.push("unpaid_fines")
  if (taxDebt !== undefined && (taxDebt.total > 0 || taxDebt.amountTotal > 0)) alerts.push("tax_debt")
  if (vtvStatus === "expired") alerts.push("vtv_expired")
  if (vtvStatus === "none") alerts.push("vtv_missing")
  if (failed) alerts.push("module_unavailable")
  return {
    currency: "ARS",
    finesCount: fines?.total ?? 0,
    finesAmount: fines?.amountTotal ?? 0,
    taxDebtCount: taxDebt?.total ?? 0,
    taxDebtAmount: taxDebt?.amountTotal ?? 0,
    vtvStatus,
    gncStatus,
    alerts
  }
}
