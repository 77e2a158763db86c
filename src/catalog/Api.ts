/**
 * The enrichment objects of the Vehicle response: codia lookup, sheet lookup, tires,
 * classification.
 */
import { Schema } from "effect"
import { VehicleCategory } from "./Records.js"

export const LookupStatus = Schema.Literals(["exact_match", "candidates", "no_match", "brand_not_found", "family_not_found"])
export type LookupStatus = typeof LookupStatus.Type

export const CodiaCandidate = Schema.Struct({
  codia: Schema.String,
  brandName: Schema.String,
  familyName: Schema.NullOr(Schema.String),
  versionName: Schema.String,
  year: Schema.Int
}).annotate({ identifier: "CodiaCandidate" })

export const CodiaLookup = Schema.Struct({
  status: LookupStatus,
  requestedYear: Schema.NullOr(Schema.Int),
  bestCandidate: Schema.NullOr(CodiaCandidate)
}).annotate({ identifier: "CodiaLookup" })
export type CodiaLookup = typeof CodiaLookup.Type

export const SpecificationCategory = Schema.Struct({
  key: Schema.String,
  label: Schema.String,
  fields: Schema.Array(Schema.Struct({ label: Schema.String, value: Schema.String }))
}).annotate({ identifier: "SpecificationCategory" })

export const Specification = Schema.Struct({
  market: Schema.Literal("AR"),
  make: Schema.String,
  model: Schema.String,
  version: Schema.String,
  year: Schema.Int,
  categories: Schema.Array(SpecificationCategory)
}).annotate({ identifier: "Specification" })

export const CommonSpecification = Schema.Struct({
  market: Schema.Literal("AR"),
  make: Schema.String,
  model: Schema.String,
  year: Schema.Int,
  categories: Schema.Array(SpecificationCategory)
}).annotate({ identifier: "CommonSpecification" })

export const DiagnosticCode = Schema.Literals([
  "INVALID_YEAR",
  "BRAND_NOT_COVERED",
  "CATALOG_UNAVAILABLE",
  "YEAR_NOT_AVAILABLE",
  "ATTRIBUTE_CONFLICT"
])
export type DiagnosticCode = typeof DiagnosticCode.Type

export const SheetLookup = Schema.Struct({
  market: Schema.Literal("AR"),
  status: LookupStatus,
  requestedYear: Schema.NullOr(Schema.Int),
  bestCandidate: Schema.NullOr(Schema.Struct({
    brandName: Schema.String,
    familyName: Schema.NullOr(Schema.String),
    versionName: Schema.String,
    year: Schema.Int
  })),
  specification: Schema.NullOr(Specification),
  commonSpecification: Schema.optional(CommonSpecification),
  diagnostics: Schema.Struct({ reason: Schema.String, code: Schema.optional(DiagnosticCode) })
}).annotate({ identifier: "SheetLookup" })
export type SheetLookup = typeof SheetLookup.Type

export const Tire = Schema.Struct({
  size: Schema.String,
  confidence: Schema.Literals(["high", "medium", "low"])
}).annotate({ identifier: "Tire" })
export type Tire = typeof Tire.Type

export const Classification = Schema.Struct({
  vehicleType: Schema.NullOr(Schema.String),
  bodyType: Schema.NullOr(Schema.String),
  vehicleCategory: VehicleCategory,
  confidence: Schema.Literals(["high", "medium", "low", "unavailable"]),
  approximateMatch: Schema.NullOr(Schema.Boolean),
  description: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Classification" })
export type Classification = typeof Classification.Type
