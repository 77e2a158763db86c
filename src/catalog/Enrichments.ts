/**
 * Codia and sheet lookups, tires and classification, derived from an identification. Pure.
 */
import type { Classification, CodiaLookup, DiagnosticCode, LookupStatus, SheetLookup, Tire } from "./Api.js"
import type { CatalogVersion, Identification, VehicleDescription } from "./Matching.js"
import { tokens } from "./Matching.js"
import type { SpecCategory, VehicleCategory } from "./Records.js"

export const lookupStatus = (id: Identification): LookupStatus => {
  switch (id._tag) {
    case "Exact":
      return "exact_match"
    case "Candidates":
      return "candidates"
    case "BrandNotFound":
      return "brand_not_found"
    case "FamilyNotFound":
      return "family_not_found"
    case "CatalogUnavailable":
    case "InvalidYear":
    case "YearNotAvailable":
      return "no_match"
  }
}

/** The version a caller should look at: confirmed for an exact match, tentative for candidates. */
const bestVersion = (id: Identification): CatalogVersion | undefined =>
  id._tag === "Exact" ? id.version : id._tag === "Candidates" ? id.candidates[0] : undefined

export const codiaLookup = (id: Identification): CodiaLookup => {
  const version = bestVersion(id)
  return {
    status: lookupStatus(id),
    requestedYear: id.requestedYear,
    bestCandidate: version && (id._tag === "Exact" || id._tag === "Candidates")
      ? {
        codia: version.codia,
        brandName: id.brand.name,
        familyName: id.family.name,
        versionName: version.name,
        year: id.requestedYear
      }
      : null
  }
}

/** A (category, label) documented twice with different values: the data contradicts itself. */
const contradicts = (specification: ReadonlyArray<SpecCategory>) =>
  specification.some((category) =>
    category.fields.some((field, i) =>
      category.fields.some((other, j) => j !== i && other.label === field.label && other.value !== field.value)
    )
  )

/** Values documented once, and identically, in every version; categories with none are dropped. */
export const commonCategories = (versions: ReadonlyArray<CatalogVersion>): Array<SpecCategory> => {
  const [first, ...others] = versions
  if (first === undefined) return []
  const single = (category: SpecCategory | undefined, label: string) => {
    const matches = category?.fields.filter((f) => f.label === label) ?? []
    return matches.length === 1 ? matches[0]!.value : undefined
  }
  return first.specification.flatMap((category) => {
    const peers = others.map((v) => v.specification.find((c) => c.key === category.key))
    const fields = category.fields.filter((field) => {
      const value = single(category, field.label)
      return value !== undefined && peers.every((peer) => single(peer, field.label) === value)
    })
    return fields.length > 0 ? [{ key: category.key, label: category.label, fields }] : []
  })
}

const diagnostics = (id: Identification, conflict: boolean): SheetLookup["diagnostics"] => {
  const withCode = (reason: string, code?: DiagnosticCode) => (code ? { reason, code } : { reason })
  switch (id._tag) {
    case "CatalogUnavailable":
      return withCode("The technical catalog is not available", "CATALOG_UNAVAILABLE")
    case "BrandNotFound":
      return withCode(`The brand "${id.make}" is not covered by the catalog`, "BRAND_NOT_COVERED")
    case "FamilyNotFound":
      return withCode(`No ${id.brand.name} model in the catalog matches "${id.model}"`)
    case "InvalidYear":
      return withCode(
        id.requestedYear === null ? "The vehicle has no model year" : `${id.requestedYear} is not a valid model year`,
        "INVALID_YEAR"
      )
    case "YearNotAvailable":
      return withCode(`${id.brand.name} ${id.family.name} has no version sold in ${id.requestedYear}`, "YEAR_NOT_AVAILABLE")
    case "Exact":
      return withCode(
        conflict
          ? `Version identified, but its catalog data contradicts itself`
          : `Version identified: ${id.brand.name} ${id.family.name} ${id.version.name} ${id.requestedYear}`,
        conflict ? "ATTRIBUTE_CONFLICT" : undefined
      )
    case "Candidates":
      return withCode(
        conflict
          ? `${id.candidates.length} compatible versions; their catalog data contradicts itself`
          : `${id.candidates.length} compatible versions of ${id.brand.name} ${id.family.name} ${id.requestedYear}; the trim could not be determined`,
        conflict ? "ATTRIBUTE_CONFLICT" : undefined
      )
  }
}

export const sheetLookup = (id: Identification): SheetLookup => {
  const base = { market: "AR" as const, status: lookupStatus(id), requestedYear: id.requestedYear }
  if (id._tag === "Exact") {
    return {
      ...base,
      bestCandidate: { brandName: id.brand.name, familyName: id.family.name, versionName: id.version.name, year: id.requestedYear },
      specification: {
        market: "AR",
        make: id.brand.name,
        model: id.family.name,
        version: id.version.name,
        year: id.requestedYear,
        categories: id.version.specification
      },
      diagnostics: diagnostics(id, contradicts(id.version.specification))
    }
  }
  if (id._tag === "Candidates") {
    const best = id.candidates[0]!
    const conflict = id.candidates.some((v) => contradicts(v.specification))
    const common = conflict ? [] : commonCategories(id.candidates)
    return {
      ...base,
      bestCandidate: { brandName: id.brand.name, familyName: id.family.name, versionName: best.name, year: id.requestedYear },
      specification: null,
      ...(common.length > 0
        ? {
          commonSpecification: {
            market: "AR" as const,
            make: id.brand.name,
            model: id.family.name,
            year: id.requestedYear,
            categories: common
          }
        }
        : {}),
      diagnostics: diagnostics(id, conflict)
    }
  }
  return { ...base, bestCandidate: null, specification: null, diagnostics: diagnostics(id, false) }
}

const tireSizes = (version: CatalogVersion): Array<string> => {
  const wheels = version.specification.find((c) => c.key === "wheels")
  const sizes = wheels?.fields.filter((f) => /^neum[aá]tico/i.test(f.label)).map((f) => f.value.trim()) ?? []
  return [...new Set(sizes)]
}

/**
 * Tire sizes with how sure we are: high for the identified version; for candidates, medium when
 * every compatible version uses the size and low when only some do.
 */
export const tires = (id: Identification): Array<Tire> => {
  if (id._tag === "Exact") return tireSizes(id.version).map((size) => ({ size, confidence: "high" as const }))
  if (id._tag !== "Candidates") return []
  const perVersion = id.candidates.map(tireSizes)
  const all = [...new Set(perVersion.flat())]
  return all.map((size) => ({
    size,
    confidence: perVersion.every((sizes) => sizes.includes(size)) ? "medium" as const : "low" as const
  }))
}

/** When every version agrees on a value, that value; otherwise null. */
const agreed = <A>(versions: ReadonlyArray<CatalogVersion>, pick: (v: CatalogVersion) => A): A | null => {
  const values = [...new Set(versions.map(pick))]
  return values.length === 1 ? values[0]! : null
}

/** Keywords of registry model texts, for vehicles the catalog cannot place. */
const KEYWORDS: ReadonlyArray<readonly [RegExp, Exclude<VehicleCategory, "unknown">, string]> = [
  [/\b(PICK ?UP|CABINA DOBLE|CAB DOBLE|DC|4X4)\b/, "camioneta", "pickup"],
  [/\b(FURGON|VAN|UTILITARIO)\b/, "utilitario", "furgon"],
  [/\b(CAMION|CHASIS|TRACTOR)\b/, "camion", "chasis"],
  [/\b(MOTO|MOTOCICLETA|SCOOTER|CICLOMOTOR)\b/, "moto", "calle"],
  [/\b(SEDAN|HATCHBACK|COUPE|RURAL|[2345]P)\b/, "auto", "auto"]
]

export const classification = (id: Identification, vehicle: VehicleDescription): Classification => {
  if (id._tag === "Exact") {
    const v = id.version
    return {
      vehicleType: v.vehicleType,
      bodyType: v.bodyType,
      vehicleCategory: v.category,
      confidence: "high",
      approximateMatch: false,
      description: `${v.vehicleType}: ${id.brand.name} ${id.family.name} ${v.name} (${id.requestedYear})`
    }
  }
  if (id._tag === "Candidates" || id._tag === "InvalidYear" || id._tag === "YearNotAvailable") {
    const versions = id._tag === "Candidates" ? id.candidates : id.family.versions
    const vehicleType = agreed(versions, (v) => v.vehicleType)
    const category = agreed(versions, (v) => v.category)
    return {
      vehicleType,
      bodyType: agreed(versions, (v) => v.bodyType),
      vehicleCategory: category ?? "unknown",
      confidence: id._tag === "Candidates" ? "medium" : "low",
      approximateMatch: true,
      description: `${vehicleType ?? "Vehículo"}: ${id.brand.name} ${id.family.name}, versión no determinada`
    }
  }
  const text = tokens(`${vehicle.make} ${vehicle.model}`).join(" ")
  const hit = KEYWORDS.find(([pattern]) => pattern.test(text))
  if (hit) {
    return {
      vehicleType: null,
      bodyType: hit[2] === "auto" ? null : hit[2],
      vehicleCategory: hit[1],
      confidence: "low",
      approximateMatch: true,
      description: `Clasificación aproximada por la descripción "${vehicle.make} ${vehicle.model}"`
    }
  }
  return {
    vehicleType: null,
    bodyType: null,
    vehicleCategory: "unknown",
    confidence: "unavailable",
    approximateMatch: null,
    description: null
  }
}
