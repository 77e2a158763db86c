/**
 * Module data (the spec's shapes) and the registry lines that carry module records
 * (`vda registry import`, one record per line):
 *
 *   {"kind":"fine","plate":"AB123CD","date":"2026-03-02","amount":45000,"status":"pending",...}
 *   {"kind":"vtv","plate":"AB123CD","type":"VTV","date":"2025-08-11","result":"approved",...}
 *   {"kind":"tax_debt","plate":"AB123CD","period":"2026-01","amount":18250.5,...}
 *   {"kind":"gnc","plate":"AB123CD","operationDate":"2024-05-20","workshop":"...",...}
 */
import { Schema } from "effect"
import { PlateString } from "../vehicles/Records.js"

const Text = Schema.NullOr(Schema.String)
const Amount = Schema.NullOr(Schema.Number)

export const FineItem = Schema.Struct({
  date: Text,
  amount: Amount,
  status: Schema.String,
  authority: Text,
  reference: Text,
  description: Text,
  jurisdiction: Schema.String,
  dueDate: Text,
  discountedAmount: Amount
}).annotate({ identifier: "FineItem" })
export type FineItem = typeof FineItem.Type

export const VtvItem = Schema.Struct({
  type: Schema.String,
  date: Text,
  sticker: Text,
  inspectionType: Schema.Literals(["inspection", "reinspection", "unknown"]),
  detail: Text,
  result: Schema.Literals(["approved", "conditional", "rejected", "expired", "unknown"]),
  certificate: Text,
  jurisdiction: Schema.String,
  facility: Text,
  dueDate: Text
}).annotate({ identifier: "VtvItem" })
export type VtvItem = typeof VtvItem.Type

export const TaxDebtItem = Schema.Struct({
  period: Text,
  description: Text,
  dueDate: Text,
  amount: Amount,
  updatedAmount: Amount,
  status: Schema.String,
  jurisdiction: Schema.String
}).annotate({ identifier: "TaxDebtItem" })
export type TaxDebtItem = typeof TaxDebtItem.Type

export const GncItem = Schema.Struct({
  operationDate: Text,
  workshop: Text,
  workshopTaxId: Text,
  workshopCode: Text,
  sticker: Text,
  previousSticker: Text
}).annotate({ identifier: "GncItem" })
export type GncItem = typeof GncItem.Type

const Total = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const FinesData = Schema.Struct({
  total: Total,
  amountTotal: Schema.Number,
  currency: Schema.Literal("ARS"),
  items: Schema.Array(FineItem)
}).annotate({ identifier: "FinesData" })

export const VtvData = Schema.Struct({ total: Total, items: Schema.Array(VtvItem) }).annotate({ identifier: "VtvData" })

export const TaxDebtData = Schema.Struct({
  total: Total,
  amountTotal: Schema.Number,
  currency: Schema.Literal("ARS"),
  items: Schema.Array(TaxDebtItem)
}).annotate({ identifier: "TaxDebtData" })

export const GncData = Schema.Struct({ total: Total, items: Schema.Array(GncItem) }).annotate({ identifier: "GncData" })

export type FinesData = typeof FinesData.Type
export type VtvData = typeof VtvData.Type
export type TaxDebtData = typeof TaxDebtData.Type
export type GncData = typeof GncData.Type

/** Sums amounts that are known; the total is rounded to cents. */
const sum = (amounts: ReadonlyArray<number | null>) =>
  Math.round(amounts.reduce<number>((total, a) => total + (a ?? 0), 0) * 100) / 100

export const finesData = (items: ReadonlyArray<FineItem>): FinesData => ({
  total: items.length,
  amountTotal: sum(items.map((i) => i.amount)),
  currency: "ARS",
  items
})

export const vtvData = (items: ReadonlyArray<VtvItem>): VtvData => ({ total: items.length, items })

export const taxDebtData = (items: ReadonlyArray<TaxDebtItem>): TaxDebtData => ({
  total: items.length,
  amountTotal: sum(items.map((i) => i.updatedAmount ?? i.amount)),
  currency: "ARS",
  items
})

export const gncData = (items: ReadonlyArray<GncItem>): GncData => ({ total: items.length, items })

export const RegistryFine = Schema.Struct({ kind: Schema.Literal("fine"), plate: PlateString }).pipe(Schema.fieldsAssign(FineItem.fields))
export const RegistryVtv = Schema.Struct({ kind: Schema.Literal("vtv"), plate: PlateString }).pipe(Schema.fieldsAssign(VtvItem.fields))
export const RegistryTaxDebt = Schema.Struct({ kind: Schema.Literal("tax_debt"), plate: PlateString }).pipe(Schema.fieldsAssign(TaxDebtItem.fields))
export const RegistryGnc = Schema.Struct({ kind: Schema.Literal("gnc"), plate: PlateString }).pipe(Schema.fieldsAssign(GncItem.fields))

export const RegistryModuleRecord = Schema.Union([RegistryFine, RegistryVtv, RegistryTaxDebt, RegistryGnc])
export type RegistryModuleRecord = typeof RegistryModuleRecord.Type
