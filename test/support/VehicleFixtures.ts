/**
 * Registry vehicles for tests: a Volkswagen Gol Trend unless told otherwise.
 */
import type { RegistryVehicle } from "../../src/vehicles/Records.js"

export const registryVehicle = (plate: string, overrides: Partial<RegistryVehicle> = {}): RegistryVehicle => ({
  kind: "vehicle",
  plate,
  make: "VOLKSWAGEN",
  model: "GOL TREND 1.6 TRENDLINE 5P",
  year: 2018,
  firstRegistered: "2018-04-10",
  totalOwners: 2,
  currentOwners: 1,
  currentLocation: { city: "Rosario", province: "Santa Fe" },
  locations: ["Córdoba, Córdoba", "Rosario, Santa Fe"],
  sourceDate: "2026-10-28",
  modelImage: null,
  ...overrides
})
