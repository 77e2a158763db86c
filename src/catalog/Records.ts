/**
 * The catalog file format (`vda catalog import FILE`): JSON Lines, one version per line.
 *
 *   {"codia":"0540123","brand":"Volkswagen","brandAliases":["VW"],"family":"Gol Trend",
 *    "familyAliases":["Gol"],"version":"1.6 Trendline","years":[2017,2018,2019],
 *    "category":"auto","bodyType":"hatchback","vehicleType":"Hatchback 5 puertas",
 *    "specification":[{"key":"engine","label":"Motor","fields":[{"label":"Cilindrada","value":"1598 cm³"}]}]}
 *
 * Brands and families are identified by name (accents, case and spacing ignored); aliases add
 * other names they are known by. `codia` identifies the version and is unique.
 */
import { Effect, Schema } from "effect"

export const VehicleCategory = Schema.Literals(["auto", "camioneta", "utilitario", "camion", "moto", "otro", "unknown"])
export type VehicleCategory = typeof VehicleCategory.Type

const NonEmpty = Schema.Trim.check(Schema.isNonEmpty())

export const SpecField = Schema.Struct({ label: NonEmpty, value: NonEmpty })
export type SpecField = typeof SpecField.Type

export const SpecCategory = Schema.Struct({
  key: Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9_]*$/)),
  label: NonEmpty,
  fields: Schema.Array(SpecField)
})
export type SpecCategory = typeof SpecCategory.Type

/** Other names, none when absent. */
const Aliases = Schema.Array(NonEmpty).pipe(Schema.withDecodingDefaultType(Effect.succeed<ReadonlyArray<string>>([])))

export const CatalogRecord = Schema.Struct({
  codia: Schema.String.check(Schema.isPattern(/^[0-9A-Z]{4,12}$/)),
  brand: NonEmpty,
  brandAliases: Aliases,
  family: NonEmpty,
  familyAliases: Aliases,
  version: NonEmpty,
  years: Schema.NonEmptyArray(Schema.Int.check(Schema.isBetween({ minimum: 1950, maximum: 2035 }))),
  category: VehicleCategory.check(Schema.makeFilter((c) => c !== "unknown" || "category must be known")),
  bodyType: NonEmpty,
  vehicleType: NonEmpty,
  specification: Schema.Array(SpecCategory)
})
export type CatalogRecord = typeof CatalogRecord.Type
