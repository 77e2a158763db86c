/**
 * Synthetic module records for the sandbox, by scenario. Deterministic for a plate and scenario
 * (and the day: due dates are relative to today, so "current" stays current). Places follow the
 * synthetic vehicle's province.
 */
import type { ModuleName } from "../../workflows/shared.js"
import {
  type FineItem,
  finesData,
  type GncItem,
  gncData,
  type TaxDebtItem,
  taxDebtData,
  type VtvItem,
  vtvData
} from "../modules/Records.js"
import { generateVehicle } from "./Generator.js"
import { type Random, seededRandom } from "./Random.js"
import type { Scenario } from "../vehicles/Api.js"

export type SyntheticModule =
  | { readonly _tag: "Data"; readonly data: unknown; readonly reducedCoverage: boolean }
  | { readonly _tag: "Unavailable"; readonly retryable: boolean }

const DAY = 86_400_000
const isoDate = (millis: number) => new Date(millis).toISOString().slice(0, 10)
const money = (random: Random, min: number, max: number) => random.int(min / 50, max / 50) * 50

const AUTHORITIES: Record<string, string> = {
  "Ciudad Autónoma de Buenos Aires": "Agencia Gubernamental de Control",
  "Buenos Aires": "Ministerio de Transporte de la Provincia de Buenos Aires",
  "Córdoba": "Policía Caminera de Córdoba",
  "Santa Fe": "Agencia Provincial de Seguridad Vial"
}

const FINE_REASONS = [
  "Exceso de velocidad",
  "Estacionamiento prohibido",
  "Cruce de semáforo en rojo",
  "Falta de VTV vigente",
  "Uso de teléfono celular al conducir",
  "Circular sin luces bajas encendidas"
]

const fines = (random: Random, province: string, count: number, today: number): ReadonlyArray<FineItem> =>
  Array.from({ length: count }, (_, i) => {
    const date = today - random.int(20, 700) * DAY
    const amount = money(random, 40_000, 420_000)
    const paid = random.chance(0.2)
    return {
      date: isoDate(date),
      amount,
      status: paid ? "paid" : "pending",
      authority: AUTHORITIES[province] ?? `Juzgado de Faltas de ${province}`,
      reference: `ACTA-${String(random.int(100000, 999999))}-${i + 1}`,
      description: random.pick(FINE_REASONS),
      jurisdiction: province,
      dueDate: isoDate(date + 60 * DAY),
      discountedAmount: paid ? null : Math.round(amount * 0.5)
    }
  })

const vtv = (random: Random, province: string, current: boolean, today: number): ReadonlyArray<VtvItem> => {
  const last = today - random.int(current ? 30 : 420, current ? 300 : 800) * DAY
  const items: Array<VtvItem> = [{
    type: "VTV",
    date: isoDate(last),
    sticker: `OB${random.int(1000000, 9999999)}`,
    inspectionType: "inspection",
    detail: null,
    result: current ? "approved" : "expired",
    certificate: `CERT-${random.int(100000, 999999)}`,
    jurisdiction: province,
    facility: `Planta VTV ${random.pick(["Norte", "Sur", "Oeste", "Centro"])}`,
    dueDate: isoDate(last + 365 * DAY)
  }]
  if (random.chance(0.3)) {
    items.push({
      type: "VTV",
      date: isoDate(last - 380 * DAY),
      sticker: null,
      inspectionType: "reinspection",
      detail: "Luces de freno; neumáticos con desgaste irregular",
      result: "conditional",
      certificate: null,
      jurisdiction: province,
      facility: null,
      dueDate: isoDate(last - 350 * DAY)
    })
  }
  return items
}

const taxDebt = (random: Random, province: string, count: number, today: number): ReadonlyArray<TaxDebtItem> =>
  Array.from({ length: count }, (_, i) => {
    const due = new Date(today - (i + 1) * 61 * DAY)
    const amount = money(random, 8_000, 95_000)
    return {
      period: `${due.getUTCFullYear()}-${String(due.getUTCMonth() + 1).padStart(2, "0")}`,
      description: `Impuesto automotor, cuota ${Math.floor(due.getUTCMonth() / 2) + 1}`,
      dueDate: isoDate(due.getTime()),
      amount,
      updatedAmount: Math.round(amount * (1 + 0.04 * (i + 1))),
      status: "overdue",
      jurisdiction: province
    }
  })

const gnc = (random: Random, count: number, today: number): ReadonlyArray<GncItem> =>
  Array.from({ length: count }, (_, i) => ({
    operationDate: isoDate(today - (i * 365 + random.int(10, 300)) * DAY),
    workshop: random.pick(["Taller GNC del Sur", "Autogas Centro", "GNC Express", "Equipos Gas Norte"]),
    workshopTaxId: `30-${random.int(10000000, 99999999)}-${random.int(0, 9)}`,
    workshopCode: `T${random.int(1000, 9999)}`,
    sticker: `GNC${random.int(100000, 999999)}`,
    previousSticker: i === count - 1 ? null : `GNC${random.int(100000, 999999)}`
  }))

const dataFor = (module: ModuleName, scenario: Scenario, random: Random, province: string, today: number): unknown => {
  const clean = scenario === "clean"
  const debt = scenario === "debt"
  switch (module) {
    case "fines":
      return finesData(fines(random, province, clean ? 0 : debt ? random.int(3, 6) : random.chance(0.5) ? random.int(1, 3) : 0, today))
    case "vtv":
      return vtvData(vtv(random, province, clean || (!debt && random.chance(0.7)), today))
    case "tax_debt":
      return taxDebtData(taxDebt(random, province, clean ? 0 : debt ? random.int(2, 5) : random.chance(0.3) ? random.int(1, 2) : 0, today))
    case "gnc":
      return gncData(gnc(random, clean ? 0 : random.chance(0.2) ? random.int(1, 2) : 0, today))
  }
}

/**
 * One module's sandbox answer. `partial`: the first requested module fails (retryable) and the
 * next answers with reduced coverage (a single module answers with reduced coverage);
 * `unavailable`: every module fails, retryable; `failed`: every module fails, not retryable.
 */
export const syntheticModule = (
  plate: string,
  scenario: Scenario,
  module: ModuleName,
  requested: ReadonlyArray<ModuleName>,
  today: number
): SyntheticModule => {
  if (scenario === "unavailable") return { _tag: "Unavailable", retryable: true }
  if (scenario === "failed") return { _tag: "Unavailable", retryable: false }
  const position = requested.indexOf(module)
  if (scenario === "partial" && requested.length > 1 && position === 0) return { _tag: "Unavailable", retryable: true }
  const province = generateVehicle(plate, "", scenario).facts.currentLocation.province ?? "Buenos Aires"
  const random = seededRandom(`${plate}|${scenario}|${module}|${isoDate(today)}`)
  const reducedCoverage = scenario === "partial" && position === (requested.length > 1 ? 1 : 0)
  return { _tag: "Data", data: dataFor(module, scenario, random, province, Math.floor(today / DAY) * DAY), reducedCoverage }
}
