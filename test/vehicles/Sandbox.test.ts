/**
 * The sandbox vehicle query: scenarios, magic plates, determinism, plausibility.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateVehicle, plateYear } from "../../src/sandbox/Generator.js"
import { SANDBOX_MODELS } from "../../src/sandbox/Models.js"
import { ErrorResponse, expectShape, VehicleResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
let account: TestAccount

beforeAll(async () => {
  app = await makeTestApp({ config: { SANDBOX_MODULE_LATENCY_MS: "200" } })
  account = await app.createAccount()
})
afterAll(() => app.dispose())

const sandbox = (path: string) => app.sandbox(`/v2/vehicles/${path}`, withKey(account.sandbox.key))
const body = async (path: string) => {
  const res = await sandbox(path)
  expect(res.status, path).toBe(200)
  const parsed = await json(res)
  expectShape(parsed, VehicleResponse)
  return parsed
}
const plateQueriesUsed = async () =>
  (await json(await app.sandbox("/v2/usage", withKey(account.sandbox.key)))).data.plateQueries.used as number

describe("sandbox vehicles", () => {
  it("are synthetic, flagged, and carry their scenario and vehicle type", async () => {
    const { found, data } = await body("AD456FG")
    expect(found).toBe(true)
    expect(data).toMatchObject({ plate: "AD456FG", sandbox: true, scenario: "default", vehicleType: expect.any(String) })
    expect(SANDBOX_MODELS.some((m) => m.make === data.make && m.model === data.model)).toBe(true)
  })

  it("are deterministic by plate, seed and scenario, and differ by seed", async () => {
    const a = await body("AD456FG?sandbox_seed=alpha")
    const again = await body("AD456FG?sandbox_seed=alpha")
    expect(again).toEqual(a)
    const seeds = await Promise.all(["b", "c", "d", "e", "f", "g"].map((seed) => body(`AD456FG?sandbox_seed=${seed}`)))
    const distinct = new Set([a, ...seeds].map((r) => JSON.stringify(r.data)))
    expect(distinct.size).toBeGreaterThan(4)
  })

  it("each scenario: clean, debt and partial answer the vehicle; failed is found:false", async () => {
    for (const scenario of ["default", "clean", "debt", "partial"]) {
      const { data } = await body(`AD456FG?sandbox_scenario=${scenario}`)
      expect(data.scenario).toBe(scenario)
    }
    expect(await body("AD456FG?sandbox_scenario=failed")).toEqual({ success: true, found: false, data: null })
  })

  it("the unavailable scenario is 503 and consumes nothing", async () => {
    const before = await plateQueriesUsed()
    const res = await sandbox("AD456FG?sandbox_scenario=unavailable")
    expect(res.status).toBe(503)
    const error = await json(res)
    expectShape(error, ErrorResponse("temporarily_unavailable"))
    expect(error.error.retryable).toBe(true)
    expect(await plateQueriesUsed()).toBe(before)
  })

  it("magic plates pick the scenario when none is given", async () => {
    expect((await body("AB000CD")).data.scenario).toBe("clean")
    expect((await body("ABC111")).data.scenario).toBe("debt")
    expect((await body("AB222CD")).data.scenario).toBe("partial")
    expect((await sandbox("AB333CD")).status).toBe(503)
    expect((await body("AB444CD")).found).toBe(false)
    expect((await body("AB404CD")).found).toBe(false)
    // an explicit scenario wins over the plate
    expect((await body("AB333CD?sandbox_scenario=clean")).data.scenario).toBe("clean")
  })

  it("the 202 plate is a cache miss: the answer waits for the simulated source", async () => {
    const started = Date.now()
    const { data } = await body("AB202CD?debug=true")
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    expect(data.debug).toMatchObject({ cache: "miss", source: "synthetic", scenario: "default", seed: null })
    const hit = await body("AB203CD?debug=true&sandbox_seed=s1")
    expect(hit.data.debug).toMatchObject({ cache: "hit", seed: "s1" })
  })
})

describe("synthetic data is plausible", () => {
  it("model years follow the plate's age and first registration follows the year", () => {
    expect(plateYear("AAA111")).toBe(1995)
    expect(plateYear("GHI123")).toBe(2007)
    expect(plateYear("PZZ999")).toBe(2016)
    expect(plateYear("AA123BB")).toBe(2016)
    expect(plateYear("AF123BB")).toBeGreaterThanOrEqual(2022)
    for (const plate of ["AAB123", "FGH456", "KLM789", "NOP246", "AA135BC", "AC579DE", "AE802FG", "AG110HJ"]) {
      for (const seed of ["", "1", "2", "3"]) {
        const { facts } = generateVehicle(plate, seed, "default")
        expect(Math.abs(facts.year! - plateYear(plate)), plate).toBeLessThanOrEqual(6)
        const registered = Number(facts.firstRegistered!.slice(0, 4))
        expect(registered - facts.year!).toBeGreaterThanOrEqual(0)
        expect(registered - facts.year!).toBeLessThanOrEqual(1)
        expect(facts.currentOwners).toBeLessThanOrEqual(facts.totalOwners)
        expect(facts.totalOwners).toBeGreaterThanOrEqual(1)
        expect(facts.locations.at(-1)).toBe(`${facts.currentLocation.city}, ${facts.currentLocation.province}`)
      }
    }
  })

  it("covers every vehicle category", () => {
    expect(new Set(SANDBOX_MODELS.map((m) => m.category))).toEqual(
      new Set(["auto", "camioneta", "utilitario", "camion", "moto", "otro"])
    )
  })
})
