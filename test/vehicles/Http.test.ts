import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { Catalog } from "../../src/catalog/Catalog.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { ManualClock } from "../support/ManualClock.js"
import { registryVehicle } from "../support/VehicleFixtures.js"
import { ErrorResponse, expectShape, VehicleResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:00Z"))
let app: TestApp

beforeAll(async () => {
  app = await makeTestApp({ clock })
  await app.run(Effect.gen(function*() {
    yield* (yield* Catalog).importRecords(FIXTURE_CATALOG)
    yield* (yield* VehicleStore).importRegistry([
      registryVehicle("AC123BD"),
      registryVehicle("KLM456", { model: "GOL TREND 1.6", year: 2019, firstRegistered: "2019-02-01" }),
      registryVehicle("DEF789", { make: "IKA", model: "TORINO 380 W", year: 1978, firstRegistered: null })
    ], new Date())
  }))
})
afterAll(() => app.dispose())

const usage = async (account: TestAccount, environment: "production" | "sandbox" = "production") => {
  const call = environment === "production" ? app.production : app.sandbox
  const key = environment === "production" ? account.production.key : account.sandbox.key
  return (await json(await call("/v2/usage", withKey(key)))).data
}

const getVehicle = (account: TestAccount, path: string) => app.production(`/v2/vehicles/${path}`, withKey(account.production.key))
const getSandbox = (account: TestAccount, path: string) => app.sandbox(`/v2/vehicles/${path}`, withKey(account.sandbox.key))

const setCustom = (accountId: string, changes: Parameters<Accounts["Service"]["setCustom"]>[1]) =>
  app.run(Effect.flatMap(Accounts, (a) => a.setCustom(accountId, changes)))

describe("plates", () => {
  it("accepts both formats in any case and answers with the plate in upper case", async () => {
    const account = await app.createAccount()
    for (const [path, plate] of [["AC123BD", "AC123BD"], ["ac123bd", "AC123BD"], ["kLm456", "KLM456"]] as const) {
      const res = await getVehicle(account, path)
      expect(res.status).toBe(200)
      const body = await json(res)
      expectShape(body, VehicleResponse)
      expect(body.data.plate).toBe(plate)
    }
  })

  it("rejects anything else with 400 invalid_plate and consumes nothing", async () => {
    const account = await app.createAccount()
    for (const plate of ["AB1234", "ABCD12", "A1B2C3", "ABC12", "AB123C", "AB123CDE", "123ABC", "ABC-123", "%C3%91AB123", "AB%20123CD"]) {
      const res = await getVehicle(account, plate)
      expect(res.status, plate).toBe(400)
      const body = await json(res)
      expectShape(body, ErrorResponse("invalid_plate"))
    }
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(0)
    expect(after.uniquePlates.used).toBe(0)
    expect(after.requests.used).toBe(11) // every rejected request still counts toward RPM
  })

  it("letters that upper-case into ASCII (ı, ſ, ﬀ, ﬁ, K) make no plate: 400 invalid_plate, nothing consumed", async () => {
    const account = await app.createAccount()
    // "ACı23BD" aside, each upper-cases into a valid plate: "AC123BI", "AS123BD", "FF123FI", "KLM456"
    for (const plate of ["AC123Bı", "aſ123bd", "ﬀ123ﬁ", "\u212ALM456", "ACı23BD"]) {
      const res = await getVehicle(account, encodeURIComponent(plate))
      expect(res.status, plate).toBe(400)
      expectShape(await json(res), ErrorResponse("invalid_plate"))
    }
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(0)
    expect(after.uniquePlates.used).toBe(0)
  })
})

describe("query parameters", () => {
  it("booleans accept only true and false", async () => {
    const account = await app.createAccount()
    for (const query of ["codia=yes", "debug=1", "classification=TRUE", "tires=", "sheet=true&sheet=false"]) {
      const res = await getVehicle(account, `AC123BD?${query}`)
      expect(res.status, query).toBe(400)
      const body = await json(res)
      expectShape(body, ErrorResponse("invalid_request"))
    }
    expect((await getVehicle(account, "AC123BD?codia=false&debug=false")).status).toBe(200)
    expect((await usage(account)).plateQueries.used).toBe(1)
  })

  it("sandbox parameters are refused on production", async () => {
    const account = await app.createAccount()
    const res = await getVehicle(account, "AC123BD?sandbox_scenario=clean&sandbox_seed=x")
    expect(res.status).toBe(400)
    const body = await json(res)
    expectShape(body, ErrorResponse("invalid_request"))
    expect(body.error.message).toBe("sandbox_scenario and sandbox_seed are accepted by the sandbox only")
    expect((await usage(account)).plateQueries.used).toBe(0)
  })

  it("sandbox parameters are validated on the sandbox", async () => {
    const account = await app.createAccount()
    for (const query of ["sandbox_scenario=chaos", `sandbox_seed=${"x".repeat(129)}`]) {
      const res = await getSandbox(account, `AC123BD?${query}`)
      expect(res.status, query).toBe(400)
      expectShape(await json(res), ErrorResponse("invalid_request"))
    }
    expect((await getSandbox(account, `AC123BD?sandbox_seed=${"x".repeat(128)}`)).status).toBe(200)
    expect((await usage(account, "sandbox")).plateQueries.used).toBe(1)
  })
})

describe("plan gating", () => {
  it("codia, sheet and tires need a paid plan; nothing is consumed", async () => {
    const account = await app.createAccount({ plan: "free" })
    for (const option of ["codia", "sheet", "tires"]) {
      const res = await getVehicle(account, `AC123BD?${option}=true`)
      expect(res.status).toBe(403)
      const body = await json(res)
      expectShape(body, ErrorResponse("access_denied"))
      expect(body.error.message).toContain(option)
    }
    expect((await usage(account)).plateQueries.used).toBe(0)
  })

  it("classification and debug work on Free", async () => {
    const account = await app.createAccount({ plan: "free" })
    const res = await getVehicle(account, "AC123BD?classification=true&debug=true")
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.data.classification.vehicleCategory).toBe("auto")
    expect(body.data.debug).toMatchObject({ cache: "hit", source: "registry" })
  })

  it("the custom plan has the paid options", async () => {
    const account = await app.createAccount({ plan: "custom" })
    expect((await getVehicle(account, "AC123BD?codia=true&sheet=true&tires=true")).status).toBe(200)
  })
})

describe("registry answers and enrichments", () => {
  it("returns the registry data and exactly the requested enrichments", async () => {
    const account = await app.createAccount()
    const plain = await json(await getVehicle(account, "AC123BD"))
    expect(plain).toEqual({
      success: true,
      found: true,
      data: {
        plate: "AC123BD",
        make: "VOLKSWAGEN",
        model: "GOL TREND 1.6 TRENDLINE 5P",
        year: 2018,
        firstRegistered: "2018-04-10",
        totalOwners: 2,
        currentOwners: 1,
        currentLocation: { city: "Rosario", province: "Santa Fe" },
        locations: ["Córdoba, Córdoba", "Rosario, Santa Fe"],
        sourceDate: "2026-10-28",
        modelImage: null
      }
    })
    const full = await json(await getVehicle(account, "AC123BD?codia=true&sheet=true&tires=true&classification=true"))
    expectShape(full, VehicleResponse)
    expect(full.data.codia).toEqual({
      status: "exact_match",
      requestedYear: 2018,
      bestCandidate: { codia: "1000001", brandName: "Volkswagen", familyName: "Gol Trend", versionName: "1.6 Trendline", year: 2018 }
    })
    expect(full.data.sheet.specification.version).toBe("1.6 Trendline")
    expect(full.data.tires).toEqual([{ size: "175/70 R14", confidence: "high" }])
    expect(full.data.classification.confidence).toBe("high")
    expect(Object.keys(full.data).sort()).toEqual([
      "classification", "codia", "currentLocation", "currentOwners", "firstRegistered", "locations", "make", "model",
      "modelImage", "plate", "sheet", "sourceDate", "tires", "totalOwners", "year"
    ])
    const tiresOnly = await json(await getVehicle(account, "AC123BD?tires=true"))
    expect(Object.keys(tiresOnly.data)).toContain("tires")
    expect(Object.keys(tiresOnly.data)).not.toContain("codia")
  })

  it("candidates with a common specification, and brands the catalog does not cover", async () => {
    const account = await app.createAccount()
    const candidates = await json(await getVehicle(account, "KLM456?sheet=true&tires=true"))
    expect(candidates.data.sheet.status).toBe("candidates")
    expect(candidates.data.sheet.commonSpecification.categories[0].key).toBe("engine")
    expect(candidates.data.tires.every((t: { confidence: string }) => t.confidence === "low")).toBe(true)
    const uncovered = await json(await getVehicle(account, "DEF789?codia=true&sheet=true&classification=true&tires=true"))
    expect(uncovered.data.codia).toEqual({ status: "brand_not_found", requestedYear: 1978, bestCandidate: null })
    expect(uncovered.data.sheet.diagnostics.code).toBe("BRAND_NOT_COVERED")
    expect(uncovered.data.tires).toEqual([])
    expect(uncovered.data.classification.confidence).toBe("unavailable")
  })

  it("debug is sanitised metadata: request id, cache, source, timings", async () => {
    const account = await app.createAccount()
    const res = await app.production("/v2/vehicles/AC123BD?debug=true", withKey(account.production.key, { headers: { "x-request-id": "dbg-1" } }))
    const { data } = await json(res)
    expect(data.debug).toEqual({
      requestId: "dbg-1",
      cache: "hit",
      source: "registry",
      timings: { lookupMs: expect.any(Number), enrichmentMs: expect.any(Number) }
    })
  })
})

describe("metering", () => {
  it("every accepted call consumes one plate query; a plate counts once a day toward unique plates", async () => {
    clock.set("2026-11-22T02:30:00Z") // still the 21st in Buenos Aires
    const account = await app.createAccount()
    await getVehicle(account, "AC123BD")
    await getVehicle(account, "AC123BD?classification=true")
    await getVehicle(account, "ZZZ999") // not found: still an accepted call
    const before = await usage(account)
    expect(before.plateQueries.used).toBe(3)
    expect(before.uniquePlates.used).toBe(2)
    expect(before.byVersion.v2.plateQueries).toBe(3)

    clock.set("2026-11-22T03:00:00Z") // a new day for the account
    await getVehicle(account, "AC123BD")
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(4)
    expect(after.uniquePlates).toMatchObject({ used: 1, startsAt: "2026-11-22T03:00:00.000Z" })
    clock.set("2026-11-21T15:00:00Z")
  })

  it("a plate with no data answers found:false and is charged", async () => {
    const account = await app.createAccount()
    const res = await getVehicle(account, "ZZZ998?codia=true&debug=true")
    expect(res.status).toBe(200)
    expect(await json(res)).toEqual({ success: true, found: false, data: null })
    expect((await usage(account)).plateQueries.used).toBe(1)
  })

  it("plate quota: 429 quota_exceeded with details, never past the limit under concurrency", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account.id, { plateQueriesMonthly: 10, uniquePlatesDaily: null, requestsPerMinute: null })
    const responses = await Promise.all(Array.from({ length: 30 }, () => getVehicle(account, "AC123BD")))
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10)
    const refused = responses.filter((r) => r.status === 429)
    expect(refused).toHaveLength(20)
    const body = await json(refused[0]!)
    expectShape(body, ErrorResponse("quota_exceeded", true))
    expect(body.error.details).toEqual({ meter: "plate_queries", limit: 10, used: 10, resetAt: "2026-12-01T03:00:00.000Z" })
    expect(refused[0]!.headers.get("retry-after")).toBe(String((Date.parse("2026-12-01T03:00:00Z") - clock.currentTimeMillisUnsafe()) / 1000))
    expect((await usage(account)).plateQueries.used).toBe(10)
  })

  it("unique plates quota: a new plate is refused, a plate already seen today is not", async () => {
    const account = await app.createAccount({ plan: "custom" })
    await setCustom(account.id, { uniquePlatesDaily: 2 })
    expect((await getVehicle(account, "AC123BD")).status).toBe(200)
    expect((await getVehicle(account, "KLM456")).status).toBe(200)
    const refused = await getVehicle(account, "DEF789")
    expect(refused.status).toBe(429)
    expect((await json(refused)).error.details).toMatchObject({ meter: "unique_plates", limit: 2, used: 2 })
    expect((await getVehicle(account, "KLM456")).status).toBe(200)
    const after = await usage(account)
    expect(after.plateQueries.used).toBe(3)
    expect(after.uniquePlates.used).toBe(2)
  })
})
