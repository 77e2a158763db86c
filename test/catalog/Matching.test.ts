import { describe, expect, it } from "vitest"
import { classification, codiaLookup, sheetLookup, tires } from "../../src/catalog/Enrichments.js"
import { buildIndex, identify, normalize, tokens } from "../../src/catalog/Matching.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"

const index = buildIndex(FIXTURE_CATALOG)
const lookup = (make: string, model: string, year: number | null) => identify(index, { make, model, year }, 2026)

describe("name normalisation", () => {
  it("ignores case, accents, punctuation and spacing, and unifies abbreviations", () => {
    expect(normalize("  Citroën   Berlingo-1.6 ")).toBe("CITROEN BERLINGO 1.6")
    expect(normalize("M.Benz")).toBe("M.BENZ")
    expect(tokens("Highline Aut. L/19")).toEqual(["HIGHLINE", "AT", "L", "19"])
  })
})

describe("identification and lookups", () => {
  it("exact match: every token of one version, sold that year, through the brand alias", () => {
    const id = lookup("VW", "GOL TREND 1.6 TRENDLINE 5P", 2018)
    expect(id._tag).toBe("Exact")
    expect(codiaLookup(id)).toEqual({
      status: "exact_match",
      requestedYear: 2018,
      bestCandidate: { codia: "1000001", brandName: "Volkswagen", familyName: "Gol Trend", versionName: "1.6 Trendline", year: 2018 }
    })
    const sheet = sheetLookup(id)
    expect(sheet.status).toBe("exact_match")
    expect(sheet.specification).toMatchObject({ market: "AR", make: "Volkswagen", model: "Gol Trend", version: "1.6 Trendline", year: 2018 })
    expect(sheet.specification?.categories).toEqual(FIXTURE_CATALOG[0]!.specification)
    expect(sheet.commonSpecification).toBeUndefined()
    expect(sheet.diagnostics.code).toBeUndefined()
    expect(tires(id)).toEqual([{ size: "175/70 R14", confidence: "high" }])
    expect(classification(id, { make: "VW", model: "GOL TREND", year: 2018 })).toEqual({
      vehicleType: "Hatchback 5 puertas",
      bodyType: "hatchback",
      vehicleCategory: "auto",
      confidence: "high",
      approximateMatch: false,
      description: "Hatchback 5 puertas: Volkswagen Gol Trend 1.6 Trendline (2018)"
    })
  })

  it("accents, abbreviations and the family alias still identify the version", () => {
    expect(codiaLookup(lookup("volkswagen", "gol 1.6 highline aut.", 2019)).bestCandidate?.codia).toBe("1000003")
    expect(lookup("CITROEN", "BERLINGO 1.6 HDI FURGON", 2016)._tag).toBe("Exact")
    expect(lookup("M.BENZ", "ACCELO 815 CHASIS", 2020)._tag).toBe("Exact")
    expect(lookup("MERCEDES BENZ", "ACCELO 815", 2020)._tag).toBe("Exact")
  })

  it("candidates: the trim is not in the text; values common to every compatible version are given", () => {
    const id = lookup("VOLKSWAGEN", "GOL TREND 1.6", 2019)
    expect(id._tag).toBe("Candidates")
    const codia = codiaLookup(id)
    expect(codia.status).toBe("candidates")
    expect(codia.bestCandidate?.versionName).toBe("1.6 Comfortline")
    const sheet = sheetLookup(id)
    expect(sheet.specification).toBeNull()
    expect(sheet.bestCandidate).toEqual({ brandName: "Volkswagen", familyName: "Gol Trend", versionName: "1.6 Comfortline", year: 2019 })
    expect(sheet.commonSpecification).toEqual({
      market: "AR",
      make: "Volkswagen",
      model: "Gol Trend",
      year: 2019,
      categories: [
        { key: "engine", label: "Motor", fields: [
          { label: "Combustible", value: "Nafta" },
          { label: "Cilindrada", value: "1598 cm³" },
          { label: "Potencia", value: "101 CV" }
        ] },
        { key: "safety", label: "Seguridad", fields: [{ label: "ABS", value: "Sí" }] }
      ]
    })
    expect(sheet.diagnostics).toEqual({
      reason: "3 compatible versions of Volkswagen Gol Trend 2019; the trim could not be determined"
    })
    // two of three trims use 185/60 R15, one uses 175/70 R14
    expect(tires(id)).toEqual([
      { size: "185/60 R15", confidence: "low" },
      { size: "175/70 R14", confidence: "low" }
    ])
    expect(classification(id, { make: "VW", model: "GOL TREND 1.6", year: 2019 })).toMatchObject({
      vehicleCategory: "auto",
      bodyType: "hatchback",
      confidence: "medium",
      approximateMatch: true
    })
  })

  it("tires shared by every candidate have medium confidence", () => {
    const sameTires = buildIndex(FIXTURE_CATALOG.filter((r) => r.codia === "1000002" || r.codia === "1000003"))
    const id = identify(sameTires, { make: "VW", model: "GOL TREND 1.6", year: 2019 }, 2026)
    expect(id._tag).toBe("Candidates")
    expect(tires(id)).toEqual([{ size: "185/60 R15", confidence: "medium" }])
  })

  it("tokens shared by every version sold that year do not tell versions apart", () => {
    // "CHASIS" is in both Accelo versions: "ACCELO 815" alone identifies the 815
    expect(codiaLookup(lookup("MERCEDES BENZ", "ACCELO 815", 2020)).bestCandidate?.codia).toBe("3000001")
    // "1.6" is in every 2019 Gol Trend: it identifies none of them
    expect(lookup("VW", "GOL TREND 1.6 5P", 2019)._tag).toBe("Candidates")
  })

  it("a family with a single version sold that year is an exact match", () => {
    const id = lookup("VW", "GOL TREND", 2017)
    expect(id._tag).toBe("Exact")
    expect(codiaLookup(id).bestCandidate?.codia).toBe("1000001")
  })

  it("contradicting catalog data: no common specification, ATTRIBUTE_CONFLICT", () => {
    const id = lookup("MERCEDES-BENZ", "ACCELO", 2019)
    expect(id._tag).toBe("Candidates")
    const sheet = sheetLookup(id)
    expect(sheet.commonSpecification).toBeUndefined()
    expect(sheet.diagnostics.code).toBe("ATTRIBUTE_CONFLICT")
    const exact = sheetLookup(lookup("MERCEDES", "ACCELO 1016 CHASIS", 2019))
    expect(exact.status).toBe("exact_match")
    expect(exact.diagnostics.code).toBe("ATTRIBUTE_CONFLICT")
  })

  it("no useful agreement: the common specification is omitted", () => {
    const id = lookup("VW", "GOL TREND", 2013)
    expect(id._tag).toBe("Exact") // only 1.4 Power sold in 2013
    const candidates = identify(buildIndex([
      { ...FIXTURE_CATALOG[0]!, codia: "9000001", version: "A", specification: [wheelsOnly("1")] },
      { ...FIXTURE_CATALOG[0]!, codia: "9000002", version: "B", specification: [wheelsOnly("2")] }
    ]), { make: "VW", model: "GOL TREND", year: 2018 }, 2026)
    expect(candidates._tag).toBe("Candidates")
    expect(sheetLookup(candidates).commonSpecification).toBeUndefined()
  })

  it("brand not found", () => {
    const id = lookup("IKA", "TORINO 380", 1975)
    expect(codiaLookup(id)).toEqual({ status: "brand_not_found", requestedYear: 1975, bestCandidate: null })
    expect(sheetLookup(id)).toEqual({
      market: "AR",
      status: "brand_not_found",
      requestedYear: 1975,
      bestCandidate: null,
      specification: null,
      diagnostics: { reason: "The brand \"IKA\" is not covered by the catalog", code: "BRAND_NOT_COVERED" }
    })
    expect(tires(id)).toEqual([])
    expect(classification(id, { make: "IKA", model: "TORINO 380", year: 1975 })).toEqual({
      vehicleType: null, bodyType: null, vehicleCategory: "unknown", confidence: "unavailable", approximateMatch: null, description: null
    })
  })

  it("family not found; the model text still gives an approximate class", () => {
    const id = lookup("VOLKSWAGEN", "AMAROK 2.0 TDI CABINA DOBLE 4X4", 2015)
    expect(codiaLookup(id).status).toBe("family_not_found")
    expect(sheetLookup(id).diagnostics).toEqual({ reason: "No Volkswagen model in the catalog matches \"AMAROK 2.0 TDI CABINA DOBLE 4X4\"" })
    expect(classification(id, { make: "VOLKSWAGEN", model: "AMAROK 2.0 TDI CABINA DOBLE 4X4", year: 2015 })).toMatchObject({
      vehicleCategory: "camioneta", bodyType: "pickup", confidence: "low", approximateMatch: true
    })
  })

  it("year not available and invalid years are no_match with their codes", () => {
    const notSold = lookup("VW", "GOL TREND 1.6 TRENDLINE", 2024)
    expect(codiaLookup(notSold)).toEqual({ status: "no_match", requestedYear: 2024, bestCandidate: null })
    expect(sheetLookup(notSold).diagnostics.code).toBe("YEAR_NOT_AVAILABLE")
    expect(classification(notSold, { make: "VW", model: "GOL TREND", year: 2024 })).toMatchObject({
      vehicleCategory: "auto", confidence: "low", approximateMatch: true
    })
    for (const year of [null, 1900, 2031]) {
      const invalid = lookup("VW", "GOL TREND 1.6 TRENDLINE", year)
      expect(codiaLookup(invalid).status).toBe("no_match")
      expect(sheetLookup(invalid).diagnostics.code).toBe("INVALID_YEAR")
    }
  })

  it("an empty catalog is CATALOG_UNAVAILABLE", () => {
    const id = identify(buildIndex([]), { make: "VW", model: "GOL", year: 2019 }, 2026)
    expect(codiaLookup(id).status).toBe("no_match")
    expect(sheetLookup(id).diagnostics.code).toBe("CATALOG_UNAVAILABLE")
  })
})

function wheelsOnly(size: string) {
  return { key: "wheels", label: "Llantas y neumáticos", fields: [{ label: "Neumáticos", value: size }] }
}
