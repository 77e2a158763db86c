/**
 * Synthetic vehicles for the sandbox: deterministic from plate, seed and scenario, and plausible:
 * real models of the Argentine market, a model year consistent with the plate's age, real places.
 */
import type { VehicleFacts } from "../vehicles/Records.js"
import { plateFormat } from "../vehicles/Plates.js"
import { SANDBOX_MODELS, type SandboxModel } from "./Models.js"
import { PLACES } from "./Places.js"
import { type Random, seededRandom } from "./Random.js"

export interface SyntheticVehicle {
  readonly facts: VehicleFacts
  readonly vehicleType: string
}

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/** When the 1995 series reached each first letter: slowly at first, faster as sales grew. */
const OLD_SERIES_YEARS = [1995, 1996.5, 1998, 2000, 2002, 2004, 2006, 2008, 2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016]

/**
 * The year a plate was issued, roughly: the 1995 series ran from AAA (1995) to about PZZ (2016);
 * the Mercosur series started at AA in 2016 and advances about one second letter a year.
 */
export const plateYear = (plate: string): number => {
  const first = LETTERS.indexOf(plate[0]!)
  const second = LETTERS.indexOf(plate[1]!)
  if (plateFormat(plate) === "old") {
    if (first >= OLD_SERIES_YEARS.length - 1) return 2016
    const from = OLD_SERIES_YEARS[first]!
    const to = OLD_SERIES_YEARS[first + 1]!
    return Math.round(from + ((to - from) * second) / 26)
  }
  return Math.min(2016 + Math.round((first * 26 + second) * 1.3), 2026)
}

const pad = (n: number) => String(n).padStart(2, "0")

const dateIn = (random: Random, year: number, monthFrom = 1) =>
  `${year}-${pad(random.int(monthFrom, 12))}-${pad(random.int(1, 28))}`

const place = (random: Random) => random.weighted(PLACES, (p) => p.weight)

const yearsAway = (model: SandboxModel, year: number) =>
  year < model.years[0] ? model.years[0] - year : year > model.years[1] ? year - model.years[1] : 0

/** A model sold when the plate was issued (or, failing that, the nearest ones), at that year. */
const modelFor = (random: Random, issued: number): { model: SandboxModel; year: number } => {
  const nearest = Math.min(...SANDBOX_MODELS.map((m) => yearsAway(m, issued)))
  const model = random.weighted(SANDBOX_MODELS.filter((m) => yearsAway(m, issued) === nearest), (m) => m.popularity)
  return { model, year: Math.min(Math.max(issued, model.years[0]), model.years[1]) }
}

export const generateVehicle = (plate: string, seed: string, scenario: string): SyntheticVehicle => {
  const random = seededRandom(`${plate}|${seed}|${scenario}`)
  const issued = plateYear(plate)
  const { model, year } = modelFor(random, issued)
  const age = Math.max(0, 2026 - year)
  const totalOwners = Math.min(5, 1 + random.int(0, Math.ceil(age / 4)))
  const currentOwners = totalOwners > 1 && random.chance(0.1) ? 2 : 1
  const places = Array.from({ length: totalOwners }, () => place(random))
  const current = places[places.length - 1]!
  // where it has been registered, oldest first, each place once (its latest stay), ending with the current one
  const locations = [...new Set(places.map((p) => `${p.city}, ${p.province}`).reverse())].reverse()
  const registeredYear = year + (random.chance(0.2) ? 1 : 0)
  const sourceDay = random.int(0, 40)
  return {
    vehicleType: model.vehicleType,
    facts: {
      make: model.make,
      model: model.model,
      year,
      firstRegistered: dateIn(random, Math.min(registeredYear, 2026)),
      totalOwners,
      currentOwners,
      currentLocation: { city: current.city, province: current.province },
      locations,
      sourceDate: new Date(Date.UTC(2026, 9, 1) + sourceDay * 86_400_000).toISOString().slice(0, 10),
      modelImage: null
    }
  }
}
