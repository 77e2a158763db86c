/**
 * A small catalog with the cases the lookups must handle: trims sharing an engine, trims with
 * different tires, a family with one version, aliases, accents, and a self-contradicting entry.
 */
import type { CatalogRecord, SpecCategory } from "../../src/catalog/Records.js"

const engine = (displacement: string, power: string): SpecCategory => ({
  key: "engine",
  label: "Motor",
  fields: [
    { label: "Combustible", value: "Nafta" },
    { label: "Cilindrada", value: displacement },
    { label: "Potencia", value: power }
  ]
})

const wheels = (...tires: Array<string>): SpecCategory => ({
  key: "wheels",
  label: "Llantas y neumáticos",
  fields: tires.map((size) => ({ label: "Neumáticos", value: size }))
})

const safety = (airbags: string): SpecCategory => ({
  key: "safety",
  label: "Seguridad",
  fields: [{ label: "Airbags", value: airbags }, { label: "ABS", value: "Sí" }]
})

const version = (record: Partial<CatalogRecord> & Pick<CatalogRecord, "codia" | "version" | "years" | "specification">): CatalogRecord => ({
  brand: "Volkswagen",
  brandAliases: ["VW"],
  family: "Gol Trend",
  familyAliases: ["Gol"],
  category: "auto",
  bodyType: "hatchback",
  vehicleType: "Hatchback 5 puertas",
  ...record
})

export const FIXTURE_CATALOG: ReadonlyArray<CatalogRecord> = [
  version({
    codia: "1000001",
    version: "1.6 Trendline",
    years: [2017, 2018, 2019],
    specification: [engine("1598 cm³", "101 CV"), wheels("175/70 R14"), safety("2")]
  }),
  version({
    codia: "1000002",
    version: "1.6 Comfortline",
    years: [2018, 2019],
    specification: [engine("1598 cm³", "101 CV"), wheels("185/60 R15"), safety("2")]
  }),
  version({
    codia: "1000003",
    version: "1.6 Highline AT",
    years: [2019],
    specification: [engine("1598 cm³", "101 CV"), wheels("185/60 R15"), safety("4")]
  }),
  version({
    codia: "1000004",
    version: "1.4 Power",
    years: [2012, 2013],
    specification: [engine("1390 cm³", "83 CV"), wheels("175/70 R14")]
  }),
  {
    codia: "2000001",
    brand: "Citroën",
    brandAliases: [],
    family: "Berlingo",
    familyAliases: [],
    version: "1.6 HDi Furgón",
    years: [2015, 2016, 2017],
    category: "utilitario",
    bodyType: "furgon",
    vehicleType: "Furgón",
    specification: [engine("1560 cm³", "90 CV"), wheels("195/65 R15")]
  },
  {
    codia: "3000001",
    brand: "Mercedes-Benz",
    brandAliases: ["M.Benz", "Mercedes"],
    family: "Accelo",
    familyAliases: [],
    version: "815 Chasis",
    years: [2019, 2020],
    category: "camion",
    bodyType: "chasis",
    vehicleType: "Camión chasis cabina",
    specification: [engine("4801 cm³", "156 CV"), wheels("215/75 R17.5")]
  },
  {
    codia: "3000002",
    brand: "Mercedes-Benz",
    brandAliases: ["M.Benz", "Mercedes"],
    family: "Accelo",
    familyAliases: [],
    version: "1016 Chasis",
    years: [2019, 2020],
    category: "camion",
    bodyType: "chasis",
    vehicleType: "Camión chasis cabina",
    // a data error on purpose: the same field twice with different values
    specification: [
      { key: "engine", label: "Motor", fields: [{ label: "Cilindrada", value: "4801 cm³" }, { label: "Cilindrada", value: "5132 cm³" }] },
      wheels("215/75 R17.5")
    ]
  }
]
