/**
 * Identifying a vehicle's catalog version from what a registry says: make, model text and year.
 *
 * Names are compared after normalisation (case, accents, punctuation and spacing ignored; common
 * abbreviations such as "AUT" for "AT" unified). The brand is the make (or an alias of it); the
 * family is the longest family name (or alias) the model text starts with; among the versions sold
 * that year, a version matches when every token that tells it apart from the others appears in the
 * rest of the model text. One matching version is an exact match; otherwise the versions that
 * match best are candidates.
 */
import type { CatalogRecord, SpecCategory, VehicleCategory } from "./Records.js"

export interface CatalogVersion {
  readonly codia: string
  readonly name: string
  readonly tokens: ReadonlyArray<string>
  readonly years: ReadonlySet<number>
  readonly category: Exclude<VehicleCategory, "unknown">
  readonly bodyType: string
  readonly vehicleType: string
  readonly specification: ReadonlyArray<SpecCategory>
}

export interface CatalogFamily {
  readonly name: string
  readonly keys: ReadonlyArray<ReadonlyArray<string>>
  readonly versions: ReadonlyArray<CatalogVersion>
}

export interface CatalogBrand {
  readonly name: string
  readonly families: ReadonlyArray<CatalogFamily>
}

export interface CatalogIndex {
  readonly brands: ReadonlyMap<string, CatalogBrand>
  readonly versionCount: number
}

export interface VehicleDescription {
  readonly make: string
  readonly model: string
  readonly year: number | null
}

export type Identification =
  | { readonly _tag: "CatalogUnavailable"; readonly requestedYear: number | null }
  | { readonly _tag: "BrandNotFound"; readonly requestedYear: number | null; readonly make: string }
  | { readonly _tag: "FamilyNotFound"; readonly requestedYear: number | null; readonly brand: CatalogBrand; readonly model: string }
  | {
    readonly _tag: "InvalidYear" | "YearNotAvailable"
    readonly requestedYear: number | null
    readonly brand: CatalogBrand
    readonly family: CatalogFamily
  }
  | {
    readonly _tag: "Exact"
    readonly requestedYear: number
    readonly brand: CatalogBrand
    readonly family: CatalogFamily
    readonly version: CatalogVersion
  }
  | {
    readonly _tag: "Candidates"
    readonly requestedYear: number
    readonly brand: CatalogBrand
    readonly family: CatalogFamily
    /** Best first; never empty. */
    readonly candidates: ReadonlyArray<CatalogVersion>
  }

/** Registry and catalog spellings of the same thing. */
const SYNONYMS: Record<string, string> = {
  AUT: "AT",
  AUTO: "AT",
  AUTOMATICO: "AT",
  AUTOMATICA: "AT",
  AUTOMATIC: "AT",
  MANUAL: "MT",
  MAN: "MT",
  "4WD": "4X4",
  "4X2": "4X2",
  CD: "DC",
  DOBLE: "DC"
}

/** Tokens that describe the body or the registration line, never the trim. */
const TRIM_NOISE = new Set(["5P", "4P", "3P", "2P", "5PTAS", "4PTAS", "3PTAS", "PTAS", "PUERTAS", "CABINA"])

export const normalize = (text: string): string =>
  text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toUpperCase()
    .replace(/[^A-Z0-9.]+/g, " ")
    .replace(/(^|\s)\.+|\.+(\s|$)/g, " ")
    .trim()
    .replace(/\s+/g, " ")

export const tokens = (text: string): Array<string> =>
  normalize(text).split(" ").filter((t) => t.length > 0).map((t) => SYNONYMS[t] ?? t)

const versionTokens = (name: string) => tokens(name).filter((t) => !TRIM_NOISE.has(t))

/** Builds the lookup index of a catalog (records of one brand may come in any order). */
export const buildIndex = (records: ReadonlyArray<CatalogRecord>): CatalogIndex => {
  interface MutableFamily { name: string; keys: Array<Array<string>>; versions: Array<CatalogVersion> }
  interface MutableBrand { name: string; keys: Set<string>; families: Map<string, MutableFamily> }
  const brands = new Map<string, MutableBrand>()
  for (const record of records) {
    const brandKey = normalize(record.brand)
    let brand = brands.get(brandKey)
    if (!brand) {
      brand = { name: record.brand, keys: new Set([brandKey]), families: new Map() }
      brands.set(brandKey, brand)
    }
    for (const alias of record.brandAliases) brand.keys.add(normalize(alias))
    const familyKey = normalize(record.family)
    let family = brand.families.get(familyKey)
    if (!family) {
      family = { name: record.family, keys: [tokens(record.family)], versions: [] }
      brand.families.set(familyKey, family)
    }
    for (const alias of record.familyAliases) {
      const aliasTokens = tokens(alias)
      if (!family.keys.some((k) => k.join(" ") === aliasTokens.join(" "))) family.keys.push(aliasTokens)
    }
    family.versions.push({
      codia: record.codia,
      name: record.version,
      tokens: versionTokens(record.version),
      years: new Set(record.years),
      category: record.category as Exclude<VehicleCategory, "unknown">,
      bodyType: record.bodyType,
      vehicleType: record.vehicleType,
      specification: record.specification
    })
  }
  const index = new Map<string, CatalogBrand>()
  for (const brand of brands.values()) {
    const frozen: CatalogBrand = {
      name: brand.name,
      families: [...brand.families.values()].map((f) => ({
        name: f.name,
        keys: f.keys,
        versions: [...f.versions].sort((a, b) => a.name.localeCompare(b.name))
      }))
    }
    for (const key of brand.keys) if (!index.has(key)) index.set(key, frozen)
  }
  return { brands: index, versionCount: records.length }
}

const startsWith = (haystack: ReadonlyArray<string>, needle: ReadonlyArray<string>, at = 0) =>
  needle.length > 0 && needle.every((t, i) => haystack[at + i] === t)

/**
 * The family named by the model text: the longest name or alias it starts with, else one it
 * contains (only names of three characters or more: "L" must not match the "L" of "L/19").
 */
const findFamily = (brand: CatalogBrand, model: ReadonlyArray<string>) => {
  let best: { family: CatalogFamily; at: number; length: number } | undefined
  for (const family of brand.families) {
    for (const key of family.keys) {
      const anywhere = key.join(" ").length >= 3
      for (let at = 0; at + key.length <= model.length && (at === 0 || anywhere); at++) {
        if (!startsWith(model, key, at)) continue
        const better = best === undefined || (at === 0 && best.at !== 0) ||
          ((at === 0) === (best.at === 0) && key.length > best.length)
        if (better) best = { family, at, length: key.length }
      }
    }
  }
  return best && { family: best.family, rest: [...model.slice(0, best.at), ...model.slice(best.at + best.length)] }
}

/**
 * The tokens that tell a version apart from the others sold that year: those not shared by all of
 * them ("CHASIS" in "815 Chasis" and "1016 Chasis" identifies neither).
 */
const distinguishing = (versions: ReadonlyArray<CatalogVersion>) => {
  const shared = versions[0]!.tokens.filter((t) => versions.every((v) => v.tokens.includes(t)))
  return new Map(versions.map((v) => [v, v.tokens.filter((t) => !shared.includes(t))]))
}

/** `currentYear` bounds plausible model years (a car of next year's model may already be sold). */
export const identify = (index: CatalogIndex, vehicle: VehicleDescription, currentYear: number): Identification => {
  const requestedYear = vehicle.year
  if (index.versionCount === 0) return { _tag: "CatalogUnavailable", requestedYear }
  const brand = index.brands.get(normalize(vehicle.make))
  if (!brand) return { _tag: "BrandNotFound", requestedYear, make: vehicle.make }
  const found = findFamily(brand, tokens(vehicle.model))
  if (!found) return { _tag: "FamilyNotFound", requestedYear, brand, model: vehicle.model }
  const { family } = found
  if (requestedYear === null || requestedYear < 1950 || requestedYear > currentYear + 1) {
    return { _tag: "InvalidYear", requestedYear, brand, family }
  }
  const sold = family.versions.filter((v) => v.years.has(requestedYear))
  if (sold.length === 0) return { _tag: "YearNotAvailable", requestedYear, brand, family }
  if (sold.length === 1) return { _tag: "Exact", requestedYear, brand, family, version: sold[0]! }

  const rest = new Set(found.rest)
  const own = distinguishing(sold)
  const scored = sold.map((version) => {
    const mine = own.get(version)!
    const matched = mine.filter((t) => rest.has(t)).length
    return { version, score: matched, full: matched === mine.length }
  })
  const full = scored.filter((s) => s.full)
  if (full.length > 0) {
    const most = Math.max(...full.map((s) => s.score))
    const best = full.filter((s) => s.score === most)
    if (best.length === 1) return { _tag: "Exact", requestedYear, brand, family, version: best[0]!.version }
    return { _tag: "Candidates", requestedYear, brand, family, candidates: best.map((s) => s.version) }
  }
  const top = Math.max(...scored.map((s) => s.score))
  const candidates = scored.filter((s) => s.score === top).map((s) => s.version)
  return { _tag: "Candidates", requestedYear, brand, family, candidates }
}
