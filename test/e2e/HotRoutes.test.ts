/**
 * The hot routes on the real Node listeners (what the lean lane's differential test held, now as
 * tests of the one HTTP path): the vehicle query (v2 and v1), refusals, both 429s, plan changes
 * between requests, operation polls, the account's status and module queries, down to a body on
 * the wire. Every answer is checked whole: status, the contract's headers, the decoded body
 * (from bytes that must be UTF-8 JSON of the declared length), and the account's counters after.
 */
import * as Http from "node:http"
import * as Net from "node:net"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import type { PlanId } from "../../src/principal/Domain.js"
import { Catalog } from "../../src/catalog/Catalog.js"
import type { Environment } from "../../src/platform/http/RequestContext.js"
import type { RegistryVehicle } from "../../src/vehicles/Records.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { expectErrorBody } from "../support/ErrorShape.js"
import { ManualClock } from "../support/ManualClock.js"
import { waitFor } from "../support/Processes.js"
import { makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"
import { registryVehicle } from "../support/VehicleFixtures.js"

// -- fixtures ---------------------------------------------------------------------------------

/** Odd characters in the answer: quotes, a backslash, accents, an emoji. */
const ODD = registryVehicle("AC123BD", {
  currentLocation: { city: "Villa \"Gral.\" Belgrano \\ ñandú 🚗", province: "Córdoba" },
  locations: ["Córdoba, Córdoba", "Rosario, Santa Fe \"centro\" \\ ñandú 🚗"],
  modelImage: "https://img.example/gol \"trend\" \\ ñ 🚗.png"
})
/** A brand the catalog does not cover, its model text odd too (it shows in the classification). */
const ODD_MODEL = registryVehicle("DEF789", {
  make: "IKA",
  model: "TORINO \"380 W\" \\ ñandú 🚗 SEDAN",
  year: 1978,
  firstRegistered: null,
  totalOwners: 7
})
/** The catalog version AC123BD's make, model and year identify exactly. */
const GOL = FIXTURE_CATALOG.find((version) => version.codia === "1000001")!

const ALL_MODULES = ["fines", "vtv", "tax_debt", "gnc"]
const BUENOS_AIRES = "America/Argentina/Buenos_Aires"
const MONTH = { startsAt: "2026-11-01T03:00:00.000Z", endsAt: "2026-12-01T03:00:00.000Z" }
const DAY = { startsAt: "2026-11-21T03:00:00.000Z", endsAt: "2026-11-22T03:00:00.000Z" }

const clock = new ManualClock(Date.parse("2026-11-21T15:00:20Z"))
let app: TestApp
let urls: { production: string; sandbox: string; metrics: string }
let gncSource: Http.Server

beforeAll(async () => {
  // a gnc source that never answers: its operations stay active (10 s per attempt, three attempts), to be reused
  gncSource = Http.createServer(() => {})
  await new Promise<void>((resolve) => gncSource.listen(0, "127.0.0.1", resolve))
  const gnc = `http://127.0.0.1:${(gncSource.address() as Net.AddressInfo).port}/gnc`
  app = await makeTestApp({
    clock,
    // the breaker would end them early after five failed calls
    config: { GNC_UPSTREAM_URL: gnc, MODULE_UPSTREAM_TIMEOUT_MS: "10000", UPSTREAM_BREAKER_FAILURES: "1000" }
  })
  await app.run(Effect.gen(function*() {
    yield* (yield* Catalog).importRecords(FIXTURE_CATALOG)
    yield* (yield* VehicleStore).importRegistry([ODD, ODD_MODEL], new Date())
  }))
  urls = await app.listen()
})

afterAll(async () => {
  gncSource?.closeAllConnections()
  await new Promise((resolve) => gncSource?.close(resolve))
  await app?.dispose()
})

// -- helpers ----------------------------------------------------------------------------------

const MINUTE_MS = 60_000
const minuteStart = () => Math.floor(clock.currentTimeMillisUnsafe() / MINUTE_MS) * MINUTE_MS
const minuteEnd = () => minuteStart() + MINUTE_MS
const iso = (millis: number) => new Date(millis).toISOString()

/** Moves the clock to 20 s into the next minute: a fresh per-minute window, 40 s from its reset. */
const freshMinute = () => clock.set(minuteEnd() + 20_000)

const accounts = <A>(use: (accounts: Accounts["Service"]) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(Accounts, use))
const setPlan = (account: TestAccount, plan: PlanId) => accounts((a) => a.setPlan(account.id, plan))
const setCustom = (account: TestAccount, terms: Parameters<Accounts["Service"]["setCustom"]>[1]) => accounts((a) => a.setCustom(account.id, terms))
const sql = <A extends object>(query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, query))

/**
 * The account's counters in an environment, read from the database (reading them through the
 * API would count a request): every meter of this month and day, and this minute's requests.
 * A counter at zero (a refused charge may leave one) is as good as none.
 */
const counters = async (account: TestAccount, environment: Environment = "production") => {
  const rows = await sql((sql) => sql<{ meter: string; periodStart: Date; used: number }>`
    select meter, period_start, used from meter_counters where account_id = ${account.id} and environment = ${environment}`)
  const counted: Record<string, number> = {}
  for (const row of rows) {
    if (row.used > 0 && (row.meter !== "requests" || row.periodStart.getTime() === minuteStart())) counted[row.meter] = row.used
  }
  return counted
}

/** What `n` plate queries of `plates` distinct plates charge, `byVersion` splitting them by API version. */
const plateQueries = (n: number, plates: number, byVersion: Record<string, number> = { v2: n }) => ({
  plate_queries: n,
  unique_plates: plates,
  "day:plate_queries": n,
  ...Object.fromEntries(Object.entries(byVersion).map(([version, count]) => [`${version}:plate_queries`, count]))
})

/** Waits for an operation's status as stored (polling it would count toward the per-minute limit). */
const untilStored = (id: string, wanted: string) =>
  waitFor(async () => {
    const [row] = await sql((sql) => sql<{ status: string }>`select status from operations where id = ${id}`)
    return row?.status === wanted ? true : undefined
  }, `operation ${id} to be ${wanted}`, 15_000)

/** The headers the contract speaks of; the others (date, connection, keep-alive) are Node's. */
const CONTRACT_HEADERS = [
  "x-request-id",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit-policy",
  "ratelimit",
  "retry-after",
  "location"
]

interface Answer {
  readonly requestId: string
  readonly status: number
  /** The contract's headers, those present only. */
  readonly headers: Record<string, string>
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

let sent = 0

/**
 * One request to a listener (a POST of `body` when given), with a request id of its own. The
 * answer's bytes must be UTF-8 JSON of the length the headers declare.
 */
const call = async (
  environment: Environment,
  path: string,
  options: { readonly key?: string; readonly body?: string; readonly contentType?: string | undefined } = {}
): Promise<Answer> => {
  const requestId = `hot-${++sent}`
  const headers: Record<string, string> = { "x-request-id": requestId }
  if (options.key !== undefined) headers["x-api-key"] = options.key
  if (options.body !== undefined) headers["content-type"] = options.contentType ?? "application/json"
  const res = await fetch(`${urls[environment]}${path}`, {
    method: options.body === undefined ? "GET" : "POST",
    headers,
    ...(options.body === undefined ? {} : { body: options.body })
  })
  const bytes = Buffer.from(await res.arrayBuffer())
  expect(res.headers.get("content-type"), path).toBe("application/json")
  expect(Number(res.headers.get("content-length")), path).toBe(bytes.length)
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  const contract = Object.fromEntries([...res.headers].filter(([name]) => CONTRACT_HEADERS.includes(name)))
  return { requestId, status: res.status, headers: contract, text, body: JSON.parse(text) }
}

/** A request with the account's key for that environment. */
const as = (account: TestAccount, path: string, environment: Environment = "production", body?: string, contentType?: string) =>
  call(environment, path, { key: account[environment].key, ...(body === undefined ? {} : { body, contentType }) })

/** The headers of a request admitted as the `used`-th of its minute under a limit of `limit`. */
const admitted = (answer: Answer, limit: number, used: number, extra: Record<string, string> = {}) => ({
  "x-request-id": answer.requestId,
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(limit - used),
  "x-ratelimit-reset": String(minuteEnd() / 1000),
  "ratelimit-policy": `"rpm";q=${limit};w=60`,
  "ratelimit": `"rpm";r=${limit - used};t=40`,
  ...extra
})

interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly retryable?: boolean
  readonly details?: Record<string, unknown>
  readonly v1?: boolean
}

/** A refusal's exact body (v2's, or v1's envelope), with nothing internal in it. */
const expectRefused = (answer: Answer, refusal: Refusal) => {
  expect(answer.status, answer.text).toBe(refusal.status)
  const error = {
    code: refusal.code,
    message: refusal.message,
    requestId: answer.requestId,
    retryable: refusal.retryable ?? false,
    ...(refusal.details === undefined ? {} : { details: refusal.details })
  }
  expect(answer.body).toEqual(refusal.v1 ? { success: false, error } : { error })
  if (!refusal.v1) expectErrorBody(answer.text, answer.requestId, answer.text)
}

const INVALID_PLATE = "The plate must be three letters and three digits (AAA999) or two letters, three digits and two letters (AA999AA)"

/** A registry vehicle as `data` shows it, without enrichments. */
const dataOf = ({ kind: _kind, ...data }: RegistryVehicle) => data

// -- the vehicle query --------------------------------------------------------------------------

describe("GET /v2/vehicles/{plate} and GET /v1/vehicles/basic", () => {
  it("every flag, found and not found, v2 and v1: the exact answers, odd characters intact, one plate query each", async () => {
    freshMinute()
    const account = await app.createAccount()
    const found = { success: true, found: true, data: dataOf(ODD) }
    const notFound = { success: true, found: false, data: null }
    const full = {
      codia: {
        status: "exact_match",
        requestedYear: 2018,
        bestCandidate: { codia: GOL.codia, brandName: GOL.brand, familyName: GOL.family, versionName: GOL.version, year: 2018 }
      },
      sheet: {
        market: "AR",
        status: "exact_match",
        requestedYear: 2018,
        bestCandidate: { brandName: GOL.brand, familyName: GOL.family, versionName: GOL.version, year: 2018 },
        specification: { market: "AR", make: GOL.brand, model: GOL.family, version: GOL.version, year: 2018, categories: GOL.specification },
        diagnostics: { reason: `Version identified: ${GOL.brand} ${GOL.family} ${GOL.version} 2018` }
      },
      classification: {
        vehicleType: GOL.vehicleType,
        bodyType: GOL.bodyType,
        vehicleCategory: GOL.category,
        confidence: "high",
        approximateMatch: false,
        description: `${GOL.vehicleType}: ${GOL.brand} ${GOL.family} ${GOL.version} (2018)`
      },
      tires: [{ size: "175/70 R14", confidence: "high" }]
    }
    const uncovered = {
      codia: { status: "brand_not_found", requestedYear: 1978, bestCandidate: null },
      sheet: {
        market: "AR",
        status: "brand_not_found",
        requestedYear: 1978,
        bestCandidate: null,
        specification: null,
        diagnostics: { reason: "The brand \"IKA\" is not covered by the catalog", code: "BRAND_NOT_COVERED" }
      },
      classification: {
        vehicleType: null,
        bodyType: null,
        vehicleCategory: "auto",
        confidence: "low",
        approximateMatch: true,
        description: `Clasificación aproximada por la descripción "${ODD_MODEL.make} ${ODD_MODEL.model}"`
      },
      tires: []
    }
    const cases: Array<readonly [string, (answer: Answer) => unknown]> = [
      ["/v2/vehicles/AC123BD", () => found],
      // percent-encoded letters are the same plate
      ["/v2/vehicles/%61c123%42D", () => found],
      ["/v2/vehicles/ac123bd?codia=true&sheet=true&tires=true&classification=true&debug=true", (answer) => ({
        ...found,
        data: {
          ...found.data,
          ...full,
          debug: { requestId: answer.requestId, cache: "hit", source: "registry", timings: { lookupMs: expect.any(Number), enrichmentMs: expect.any(Number) } }
        }
      })],
      ["/v2/vehicles/DEF789?codia=true&sheet=true&tires=true&classification=true", () => ({
        success: true,
        found: true,
        data: { ...dataOf(ODD_MODEL), ...uncovered }
      })],
      ["/v2/vehicles/DEF789?codia=false&sheet=false&tires=false&classification=false&debug=false", () => ({
        success: true,
        found: true,
        data: dataOf(ODD_MODEL)
      })],
      ["/v2/vehicles/AC123BD?unknown=1", () => found],
      ["/v2/vehicles/ZZ999ZZ", () => notFound],
      ["/v2/vehicles/zz999zz?debug=true&codia=true", () => notFound],
      ["/v1/vehicles/basic?plate=ac123bd", () => found],
      ["/v1/vehicles/basic?plate=ZZZ999", () => notFound]
    ]
    for (const [i, [path, expected]] of cases.entries()) {
      const answer = await as(account, path)
      expect(answer.status, path).toBe(200)
      expect(answer.headers, path).toEqual(admitted(answer, 120, i + 1))
      expect(answer.body, path).toEqual(expected(answer))
    }
    // the odd characters went out as themselves, escaped only as JSON requires
    const raw = (await as(account, "/v2/vehicles/AC123BD")).text
    expect(raw).toContain(String.raw`"city":"Villa \"Gral.\" Belgrano \\ ñandú 🚗"`)
    expect(await counters(account)).toEqual({ requests: cases.length + 1, ...plateQueries(cases.length + 1, 4, { v1: 2, v2: cases.length - 1 }) })
  })

  it("a registry import shows at once: not found before, the new row after, its change after that", async () => {
    freshMinute()
    const account = await app.createAccount()
    const importRow = (vehicle: RegistryVehicle) =>
      app.run(Effect.flatMap(VehicleStore, (store) => store.importRegistry([vehicle], new Date())))
    expect((await as(account, "/v2/vehicles/GHI321")).body).toEqual({ success: true, found: false, data: null })
    const amarok = registryVehicle("GHI321", { make: "VOLKSWAGEN", model: "AMAROK V6 \"Extreme\" 🚙" })
    await importRow(amarok)
    for (let i = 0; i < 2; i++) {
      expect((await as(account, "/v2/vehicles/GHI321")).body).toEqual({ success: true, found: true, data: dataOf(amarok) })
    }
    const changed = registryVehicle("GHI321", { make: "VOLKSWAGEN", model: "AMAROK V8" })
    await importRow(changed)
    expect((await as(account, "/v1/vehicles/basic?plate=GHI321")).body).toEqual({ success: true, found: true, data: dataOf(changed) })
    expect(await counters(account)).toEqual({ requests: 4, ...plateQueries(4, 1, { v1: 1, v2: 3 }) })
  })
})

// -- refusals ---------------------------------------------------------------------------------

describe("the vehicle query of a key seen before", () => {
  /** The transaction that last wrote each of the account's counters (the minute's requests, and the plate queries). */
  const writers = async (account: TestAccount) => {
    const rows = await sql((sql) => sql<{ meter: string; periodStart: Date; writer: string }>`
      select meter, period_start, xmin::text as writer from meter_counters
      where account_id = ${account.id} and environment = 'production'`)
    return Object.fromEntries(rows
      .filter((row) => row.meter !== "requests" || row.periodStart.getTime() === minuteStart())
      .map((row) => [row.meter, row.writer]))
  }

  it("is admitted and charged in one transaction", async () => {
    freshMinute()
    const account = await app.createAccount()
    // the first: the key's account is learned from its admission, the plate query charged after
    expect((await as(account, "/v2/vehicles/AC123BD")).status).toBe(200)
    const first = await writers(account)
    expect(first.requests).not.toBe(first.plate_queries)

    const second = await as(account, "/v2/vehicles/DEF789?debug=true")
    expect(second.status).toBe(200)
    expect(second.body.data).toMatchObject({ plate: "DEF789", debug: { requestId: second.requestId, cache: "hit", source: "registry" } })
    expect(second.headers).toEqual(admitted(second, 120, 2))
    const after = await writers(account)
    const one = after.requests
    expect(one).not.toBe(first.requests)
    expect(after).toEqual({
      requests: one,
      plate_queries: one,
      unique_plates: one,
      "day:plate_queries": one,
      "v2:plate_queries": one
    })
    expect(await counters(account)).toEqual({ requests: 2, ...plateQueries(2, 2) })
  })
})

describe("refusals of the vehicle query", () => {
  it("bad plates and bad flags: 400 with the exact body, each counted once toward the per-minute limit, nothing charged", async () => {
    freshMinute()
    const account = await app.createAccount()
    const cases: Array<readonly [string, Omit<Refusal, "status">]> = [
      ["/v2/vehicles/AB12", { code: "invalid_plate", message: INVALID_PLATE }],
      ["/v2/vehicles/AC123BDE", { code: "invalid_plate", message: INVALID_PLATE }],
      [`/v2/vehicles/${"A".repeat(100)}`, { code: "invalid_plate", message: INVALID_PLATE }],
      // ı upper-cases to I: it makes no plate
      ["/v2/vehicles/%C4%B1AB123", { code: "invalid_plate", message: INVALID_PLATE }],
      ["/v2/vehicles/AC%22123%5C", { code: "invalid_plate", message: INVALID_PLATE }],
      ["/v2/vehicles/AC%F0%9F%9A%97BD", { code: "invalid_plate", message: INVALID_PLATE }],
      ["/v2/vehicles/AC%20123BD", { code: "invalid_plate", message: INVALID_PLATE }],
      ["/v2/vehicles/AC123BD?codia=yes", { code: "invalid_request", message: expect.stringMatching(/^Invalid request: codia: /) }],
      ["/v2/vehicles/AC123BD?classification=TRUE", { code: "invalid_request", message: expect.stringMatching(/^Invalid request: classification: /) }],
      ["/v2/vehicles/AC123BD?debug=true&debug=false", { code: "invalid_request", message: expect.stringMatching(/^Invalid request: debug: /) }],
      ["/v2/vehicles/AC123BD?tires=%F0%9F%9A%97", { code: "invalid_request", message: expect.stringMatching(/^Invalid request: tires: /) }],
      ["/v2/vehicles/AC123BD?onMiss=never", { code: "invalid_request", message: expect.stringMatching(/^Invalid request: onMiss: /) }],
      ["/v2/vehicles/AC123BD?sandbox_seed=x", { code: "invalid_request", message: "sandbox_seed is accepted by the sandbox only" }],
      ["/v2/vehicles/AC123BD?sandbox_scenario=debt&sandbox_seed=x", {
        code: "invalid_request",
        message: "sandbox_scenario and sandbox_seed are accepted by the sandbox only"
      }],
      ["/v1/vehicles/basic", { code: "invalid_plate", message: INVALID_PLATE, v1: true }],
      ["/v1/vehicles/basic?plate=ab1", { code: "invalid_plate", message: INVALID_PLATE, v1: true }],
      ["/v1/vehicles/basic?plate=%22%5C%C3%B1%F0%9F%9A%97", { code: "invalid_plate", message: INVALID_PLATE, v1: true }]
    ]
    for (const [i, [path, refusal]] of cases.entries()) {
      const answer = await as(account, path)
      expectRefused(answer, { status: 400, ...refusal })
      expect(answer.headers, path).toEqual(admitted(answer, 120, i + 1))
    }
    expect(await counters(account)).toEqual({ requests: cases.length })
  })

  it("a missing, unknown, malformed or revoked key, or one of the other environment: 401, counted nowhere", async () => {
    freshMinute()
    const account = await app.createAccount()
    const revoked = await accounts((a) => a.createKey({ accountId: account.id, environment: "production", name: "old" }))
    await accounts((a) => a.revokeKey(revoked.id))
    const otherEnvironment =
      "This API key belongs to the other environment; production keys work only on the production address and sandbox keys only on the sandbox address"
    const cases: Array<readonly [Environment, string | undefined, string]> = [
      ["production", undefined, "Missing x-api-key header"],
      ["production", "", "Missing x-api-key header"],
      ["production", `vda_live_${"0".repeat(32)}`, "Invalid or revoked API key"],
      ["production", "not-a-key", "Invalid or revoked API key"],
      ["production", "vda_live_\"\\ñ", "Invalid or revoked API key"],
      ["production", account.production.key.slice(0, -1), "Invalid or revoked API key"],
      ["production", revoked.key, "Invalid or revoked API key"],
      ["production", account.sandbox.key, otherEnvironment],
      ["sandbox", account.production.key, otherEnvironment]
    ]
    for (const [environment, key, message] of cases) {
      for (const [path, v1] of [["/v2/vehicles/AC123BD", false], ["/v1/vehicles/basic?plate=AC123BD", true]] as const) {
        const answer = await call(environment, path, key === undefined ? {} : { key })
        expectRefused(answer, { status: 401, code: "invalid_api_key", message, v1 })
        // not admitted: no rate-limit headers
        expect(answer.headers, `${environment} ${key}`).toEqual({ "x-request-id": answer.requestId })
      }
    }
    expect(await counters(account, "production")).toEqual({})
    expect(await counters(account, "sandbox")).toEqual({})
  })

  it("paid options on the free plan: 403 access_denied, counted toward the per-minute limit only; classification and debug are free", async () => {
    freshMinute()
    const account = await app.createAccount({ plan: "free" })
    const cases: Array<readonly [string, string, boolean]> = [
      ["/v2/vehicles/AC123BD?codia=true", "codia needs a paid or custom plan", false],
      ["/v2/vehicles/AC123BD?sheet=true&classification=true", "sheet needs a paid or custom plan", false],
      ["/v2/vehicles/AC123BD?codia=true&sheet=true&tires=true", "codia, sheet, tires need a paid or custom plan", false],
      ["/v2/vehicles/AC123BD?onMiss=search", "onMiss needs a paid or custom plan", false],
      ["/v2/vehicles/AC123BD?tires=true&onMiss=search", "tires, onMiss need a paid or custom plan", false]
    ]
    for (const [i, [path, message]] of cases.entries()) {
      const answer = await as(account, path)
      expectRefused(answer, { status: 403, code: "access_denied", message })
      expect(answer.headers).toEqual(admitted(answer, 30, i + 1))
    }
    expect(await counters(account)).toEqual({ requests: cases.length })
    const free = await as(account, "/v2/vehicles/AC123BD?classification=true&debug=true")
    expect(free.status).toBe(200)
    expect(free.body.data).toMatchObject({ classification: { confidence: "high" }, debug: { requestId: free.requestId } })
    expect(await counters(account)).toEqual({ requests: cases.length + 1, ...plateQueries(1, 1) })
  })
})

// -- 429s -------------------------------------------------------------------------------------

describe("the two 429s", () => {
  it("the allowance used up (quota_exceeded, Retry-After to the month's end), then the per-minute limit (rate_limit_exceeded, Retry-After to the minute's end)", async () => {
    freshMinute()
    const account = await app.createAccount()
    await setCustom(account, { plateQueriesMonthly: 3, requestsPerMinute: 6 })
    for (const [i, plate] of ["AC123BD", "DEF789", "ZZ999ZZ"].entries()) {
      const answer = await as(account, `/v2/vehicles/${plate}`)
      expect(answer.status).toBe(200)
      expect(answer.headers).toEqual(admitted(answer, 6, i + 1))
    }
    const quota = {
      status: 429,
      code: "quota_exceeded",
      message: `The plate queries allowance of 3 is used up until ${MONTH.endsAt}`,
      retryable: true,
      details: { meter: "plate_queries", limit: 3, used: 3, resetAt: MONTH.endsAt }
    }
    const untilMonthEnd = () => String(Math.ceil((Date.parse(MONTH.endsAt) - clock.currentTimeMillisUnsafe()) / 1000))
    for (const [i, [path, v1]] of ([["/v2/vehicles/AC123BD", false], ["/v1/vehicles/basic?plate=AC123BD", true], ["/v2/vehicles/KLM456", false]] as const).entries()) {
      const answer = await as(account, path)
      expectRefused(answer, { ...quota, v1 })
      // admitted (the headers), then refused by the allowance
      expect(answer.headers, path).toEqual(admitted(answer, 6, 4 + i, { "retry-after": untilMonthEnd() }))
    }
    const rpm = {
      status: 429,
      code: "rate_limit_exceeded",
      message: "Requests per minute limit of 6 reached",
      retryable: true,
      details: { meter: "requests", limit: 6, used: 6, resetAt: iso(minuteEnd()) }
    }
    for (const [path, v1] of [["/v2/vehicles/AC123BD", false], ["/v1/vehicles/basic?plate=AC123BD", true], ["/v2/status", false]] as const) {
      const answer = await as(account, path)
      expectRefused(answer, { ...rpm, v1 })
      expect(answer.headers, path).toEqual({ "x-request-id": answer.requestId, "retry-after": "40" })
    }
    // requests past the limit are not counted; refused plate queries charge nothing
    expect(await counters(account)).toEqual({ requests: 6, ...plateQueries(3, 3) })

    freshMinute()
    const next = await as(account, "/v1/vehicles/basic?plate=AC123BD")
    expectRefused(next, { ...quota, v1: true })
    expect(next.headers).toEqual(admitted(next, 6, 1, { "retry-after": untilMonthEnd() }))
    expect(await counters(account)).toEqual({ requests: 1, ...plateQueries(3, 3) })
  })
})

// -- an account changed between requests -------------------------------------------------------

describe("an account changed between requests", () => {
  it("the next request is charged by the new terms, exactly once", async () => {
    freshMinute()
    const account = await app.createAccount()
    const first = await as(account, "/v2/vehicles/AC123BD")
    expect(first.headers).toEqual(admitted(first, 120, 1))

    await setPlan(account, "free")
    const denied = await as(account, "/v2/vehicles/AC123BD?codia=true")
    expectRefused(denied, { status: 403, code: "access_denied", message: "codia needs a paid or custom plan" })
    expect(denied.headers).toEqual(admitted(denied, 30, 2))
    const onFree = await as(account, "/v2/vehicles/AC123BD")
    expect(onFree.status).toBe(200)
    expect(onFree.headers).toEqual(admitted(onFree, 30, 3))

    await setCustom(account, { plateQueriesMonthly: 2 })
    const used = await as(account, "/v2/vehicles/AC123BD")
    expectRefused(used, {
      status: 429,
      code: "quota_exceeded",
      message: `The plate queries allowance of 2 is used up until ${MONTH.endsAt}`,
      retryable: true,
      details: { meter: "plate_queries", limit: 2, used: 2, resetAt: MONTH.endsAt }
    })
    // the custom plan's default per-minute limit
    expect(used.headers["x-ratelimit-limit"]).toBe("240")

    await setCustom(account, { plateQueriesMonthly: 10, requestsPerMinute: 7 })
    const again = await as(account, "/v2/vehicles/AC123BD")
    expect(again.status).toBe(200)
    expect(again.headers).toEqual(admitted(again, 7, 5))
    expect(await counters(account)).toEqual({ requests: 5, ...plateQueries(3, 1) })
  })

  it("a key revoked between requests is refused at once, and nothing is charged", async () => {
    freshMinute()
    const account = await app.createAccount()
    expect((await as(account, "/v2/vehicles/AC123BD")).status).toBe(200)
    await accounts((a) => a.revokeKey(account.production.id))
    expectRefused(await as(account, "/v2/vehicles/AC123BD"), { status: 401, code: "invalid_api_key", message: "Invalid or revoked API key" })
    expectRefused(await as(account, "/v1/vehicles/basic?plate=AC123BD"), {
      status: 401,
      code: "invalid_api_key",
      message: "Invalid or revoked API key",
      v1: true
    })
    expect(await counters(account)).toEqual({ requests: 1, ...plateQueries(1, 1) })
  })
})

describe("keys that change on one connection", () => {
  /** GETs `path` with `key` on `agent`'s one connection: the status, whether the connection was reused, and the body. */
  const onConnection = (agent: Http.Agent, path: string, key: string | undefined) =>
    new Promise<{ readonly status: number; readonly reused: boolean; readonly body: string }>((resolve, reject) => {
      const request = Http.get(`${urls.production}${path}`, { agent, headers: key === undefined ? {} : { "x-api-key": key } }, (response) => {
        let body = ""
        response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, reused: request.reusedSocket, body }))
      })
      request.on("error", reject)
    })

  it("each request is admitted and charged by the key it sends, whatever the one before it sent", async () => {
    freshMinute()
    const first = await app.createAccount()
    const second = await app.createAccount()
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const keys = [
        [first.production.key, 200],
        [first.production.key, 200],
        [second.production.key, 200],
        [`vda_live_${"0".repeat(32)}`, 401],
        [first.production.key, 200],
        [undefined, 401],
        [first.sandbox.key, 401],
        [second.production.key, 200]
      ] as const
      const answers = []
      for (const [key] of keys) answers.push(await onConnection(agent, "/v2/vehicles/AC123BD", key))
      expect(answers.map((answer) => answer.status)).toEqual(keys.map(([, status]) => status))
      expect(answers.slice(1).every((answer) => answer.reused)).toBe(true)
      expect(JSON.parse(answers[3]!.body).error.message).toBe("Invalid or revoked API key")
      expect(JSON.parse(answers[5]!.body).error.message).toBe("Missing x-api-key header")
      expect(JSON.parse(answers[6]!.body).error.code).toBe("invalid_api_key")
      expect(await counters(first)).toEqual({ requests: 3, ...plateQueries(3, 1) })
      expect(await counters(second)).toEqual({ requests: 2, ...plateQueries(2, 1) })
    } finally {
      agent.destroy()
    }
  })
})

// -- operation polls ----------------------------------------------------------------------------

describe("GET /v2/operations/{id}", () => {
  it("its own operation, running (Retry-After: 2) and final (none); another's, unknown and odd ids: 404 alike; each poll counted once", async () => {
    freshMinute()
    const owner = await app.createAccount()
    const stranger = await app.createAccount()
    const createdAt = iso(clock.currentTimeMillisUnsafe())
    const create = async (modules: Array<string>) =>
      (await as(owner, "/v2/vehicles/AC123BD/modules", "production", JSON.stringify({ modules }))).body.id as string
    const running = await create(["gnc"])
    const final = await create(["fines", "vtv"])
    await untilStored(running, "processing")
    await untilStored(final, "completed")
    freshMinute()

    let ownerPolls = 0
    const poll = (id: string, account = owner, environment: Environment = "production") => {
      if (account === owner && environment === "production") ownerPolls++
      return as(account, `/v2/operations/${id}`, environment)
    }

    const runningAnswer = await poll(running)
    expect(runningAnswer.status).toBe(200)
    expect(runningAnswer.headers).toEqual(admitted(runningAnswer, 120, ownerPolls, { "retry-after": "2" }))
    expect(runningAnswer.body).toEqual({
      id: running,
      kind: "modules",
      status: "processing",
      plate: "AC123BD",
      createdAt,
      updatedAt: createdAt,
      modules: { gnc: { status: "processing", data: null, error: null } }
    })

    const finalAnswer = await poll(`${final}?x=1`)
    expect(finalAnswer.status).toBe(200)
    expect(finalAnswer.headers).toEqual(admitted(finalAnswer, 120, ownerPolls))
    expect(finalAnswer.body).toEqual({
      id: final,
      kind: "modules",
      status: "completed",
      plate: "AC123BD",
      createdAt,
      updatedAt: createdAt,
      modules: {
        fines: { status: "completed", data: { total: 0, amountTotal: 0, currency: "ARS", items: [] }, error: null },
        vtv: { status: "completed", data: { total: 0, items: [] }, error: null }
      }
    })

    // another account's operation answers exactly as an id that does not exist
    const others = await poll(running, stranger)
    const unknownId = "op_01M7ZZZZZZZZZZZZZZZZZZZZZZ"
    const unknown = await poll(unknownId, stranger)
    for (const [answer, id, used] of [[others, running, 1], [unknown, unknownId, 2]] as const) {
      expectRefused(answer, { status: 404, code: "operation_not_found", message: `No operation ${id}` })
      expect(answer.headers).toEqual(admitted(answer, 120, used))
    }
    expect(others.text.replace(running, "<id>").replace(others.requestId, "<request>"))
      .toBe(unknown.text.replace(unknownId, "<id>").replace(unknown.requestId, "<request>"))

    // nor is it the owner's on the other environment's listener
    const sandboxPoll = await poll(running, owner, "sandbox")
    expectRefused(sandboxPoll, { status: 404, code: "operation_not_found", message: `No operation ${running}` })
    expect(sandboxPoll.headers).toEqual(admitted(sandboxPoll, 120, 1))

    const odd: Array<readonly [string, string]> = [
      [unknownId, unknownId],
      ["op-1%20x", "op-1 x"],
      ["op_%22%5C%C3%B1%F0%9F%9A%97", "op_\"\\ñ🚗"],
      ["a%2Fb", "a/b"],
      ["x".repeat(100), "x".repeat(100)]
    ]
    for (const [path, id] of odd) {
      const answer = await poll(path)
      expectRefused(answer, { status: 404, code: "operation_not_found", message: `No operation ${id}` })
      expect(answer.headers, path).toEqual(admitted(answer, 120, ownerPolls))
    }

    // polls charge only the per-minute limit: the two creations' module queries are all there is
    const modules = { module_queries: 3, "v2:module_queries": 3, "day:module_queries": 3, "module:gnc": 1, "module:fines": 1, "module:vtv": 1 }
    expect(await counters(owner)).toEqual({ requests: ownerPolls, ...modules })
    expect(await counters(stranger)).toEqual({ requests: 2 })
    expect(await counters(owner, "sandbox")).toEqual({ requests: 1 })
  })
  it("a poll by a key seen before is read while it is admitted, and a refusal still wins: the minute used up, then the key revoked", async () => {
    freshMinute()
    const owner = await app.createAccount()
    await setCustom(owner, { requestsPerMinute: 3 })
    const created = await as(owner, "/v2/vehicles/AC123BD/modules", "production", JSON.stringify({ modules: ["fines"] }))
    expect(created.status).toBe(202)
    const id = created.body.id as string
    await untilStored(id, "completed")
    const poll = () => as(owner, `/v2/operations/${id}`)

    const own = await poll()
    expect(own.status).toBe(200)
    expect(own.headers).toEqual(admitted(own, 3, 2))
    const missing = await as(owner, "/v2/operations/op_01M7ZZZZZZZZZZZZZZZZZZZZZZ")
    expectRefused(missing, { status: 404, code: "operation_not_found", message: "No operation op_01M7ZZZZZZZZZZZZZZZZZZZZZZ" })
    expect(missing.headers).toEqual(admitted(missing, 3, 3))
    // its own operation and an unknown one alike: the per-minute limit answers, not the read
    for (const path of [`/v2/operations/${id}`, "/v2/operations/op_01M7ZZZZZZZZZZZZZZZZZZZZZZ", `/v1/vehicles/modules/${id}`]) {
      const limited = await as(owner, path)
      expectRefused(limited, {
        status: 429,
        code: "rate_limit_exceeded",
        message: "Requests per minute limit of 3 reached",
        retryable: true,
        details: { meter: "requests", limit: 3, used: 3, resetAt: iso(minuteEnd()) },
        v1: path.startsWith("/v1")
      })
    }

    freshMinute()
    expect((await poll()).status).toBe(200)
    await accounts((a) => a.revokeKey(owner.production.id))
    expectRefused(await poll(), { status: 401, code: "invalid_api_key", message: "Invalid or revoked API key" })
    expect(await counters(owner)).toEqual({
      requests: 1,
      module_queries: 1,
      "v2:module_queries": 1,
      "day:module_queries": 1,
      "module:fines": 1
    })
  })
})

// -- the account's status ---------------------------------------------------------------------

describe("GET /v2/status", () => {
  const meter = (limit: number | null, used: number, period: { startsAt: string; endsAt: string }) => ({
    limit,
    used,
    remaining: limit === null ? null : limit - used,
    ...period
  })
  /** The usage as the status shows it: plan and limits (plate, module, unique plates, requests), what was used, where the periods fall. */
  const usage = (
    plan: string,
    [plates, modules, unique, rpm]: readonly [number, number, number, number],
    used: { readonly requests: number; readonly plates?: number },
    options: { readonly timezone?: string; readonly month?: typeof MONTH; readonly day?: typeof DAY; readonly modules?: unknown } = {}
  ) => {
    const { day = DAY, month = MONTH, timezone = BUENOS_AIRES } = options
    return {
      environment: "production",
      apiVersion: "v2",
      meteringPolicyVersion: "2026-11",
      entitlements: {
        plan,
        plateQueriesMonthly: plates,
        moduleQueriesMonthly: modules,
        uniquePlatesDaily: unique,
        requestsPerMinute: rpm,
        enabledModules: ALL_MODULES,
        timezone
      },
      timezone,
      plateQueries: meter(plates, used.plates ?? 0, month),
      moduleQueries: meter(modules, 0, month),
      uniquePlates: meter(unique, used.plates ?? 0, day),
      requests: meter(rpm, used.requests, { startsAt: iso(minuteStart()), endsAt: iso(minuteEnd()) }),
      byVersion: { v2: { plateQueries: used.plates ?? 0, moduleQueries: 0, reports: 0 } },
      ...(options.modules === undefined ? {} : { modules: options.modules })
    }
  }
  const keyOf = (account: TestAccount, createdAt: string, lastUsedAt: string) => ({
    id: account.production.id,
    prefix: account.production.prefix,
    last4: account.production.last4,
    name: "test",
    status: "active",
    lastUsedAt,
    createdAt
  })
  /** Waits until the key's last use is noted (in the background, beside the request). */
  const untilNoted = (account: TestAccount) =>
    waitFor(async () => {
      const [row] = await sql((sql) => sql<{ lastUsedAt: Date | null }>`select last_used_at from api_keys where id = ${account.production.id}`)
      return row?.lastUsedAt ? row.lastUsedAt.toISOString() : undefined
    }, "the key's last use to be noted", 5_000)

  it("as it stands: owner, plan, usage counting the request itself, and this environment's keys", async () => {
    freshMinute()
    const createdAt = iso(clock.currentTimeMillisUnsafe())
    const account = await app.createAccount()
    expect((await as(account, "/v2/vehicles/AC123BD")).status).toBe(200)
    expect(await untilNoted(account)).toBe(createdAt)
    for (const requests of [2, 3]) {
      const answer = await as(account, "/v2/status")
      expect(answer.status).toBe(200)
      expect(answer.headers).toEqual(admitted(answer, 120, requests))
      expect(answer.body).toEqual({
        success: true,
        data: {
          owner: "Test owner",
          plan: "growth",
          usage: usage("growth", [10_000, 3_000, 1_000, 120], { requests, plates: 1 }),
          keys: [keyOf(account, createdAt, createdAt)]
        }
      })
    }
    expect(await counters(account)).toEqual({ requests: 3, ...plateQueries(1, 1) })
  })

  it("after the account changed: a new plan, new custom terms and a new timezone show at once", async () => {
    freshMinute()
    const createdAt = iso(clock.currentTimeMillisUnsafe())
    const account = await app.createAccount()
    expect((await as(account, "/v2/status")).body.data.plan).toBe("growth")
    await untilNoted(account)
    const status = (plan: string, accountUsage: unknown) => ({
      success: true,
      data: { owner: "Test owner", plan, usage: accountUsage, keys: [keyOf(account, createdAt, createdAt)] }
    })

    await setPlan(account, "scale")
    const scale = await as(account, "/v2/status")
    expect(scale.headers).toEqual(admitted(scale, 240, 2))
    expect(scale.body).toEqual(status("scale", usage("scale", [50_000, 15_000, 5_000, 240], { requests: 2 })))

    await setCustom(account, { requestsPerMinute: 50, modulePriceArs: 700, includedModules: 2 })
    const custom = await as(account, "/v2/status")
    expect(custom.headers).toEqual(admitted(custom, 50, 3))
    const billing = Object.fromEntries(ALL_MODULES.map((module) => [module, { used: 0, included: 2, overage: 0, unitPriceCents: 70_000, currency: "ARS" }]))
    expect(custom.body).toEqual(status("custom", usage("custom", [50_000, 15_000, 5_000, 50], { requests: 3 }, { modules: billing })))

    // (no API changes a timezone: the database does here) months and days follow it at once; minutes are UTC
    await sql((sql) => sql`update accounts set timezone = 'Asia/Kathmandu' where id = ${account.id}`)
    const moved = await as(account, "/v2/status")
    expect(moved.headers).toEqual(admitted(moved, 50, 4))
    expect(moved.body).toEqual(status("custom", usage("custom", [50_000, 15_000, 5_000, 50], { requests: 4 }, {
      timezone: "Asia/Kathmandu",
      month: { startsAt: "2026-10-31T18:15:00.000Z", endsAt: "2026-11-30T18:15:00.000Z" },
      day: { startsAt: "2026-11-20T18:15:00.000Z", endsAt: "2026-11-21T18:15:00.000Z" },
      modules: billing
    })))
    expect(await counters(account)).toEqual({ requests: 4 })
  })
})

// -- module queries -----------------------------------------------------------------------------

describe("POST /v2/vehicles/{plate}/modules", () => {
  const GNC = JSON.stringify({ modules: ["gnc"] })
  const gncCharged = { module_queries: 1, "v2:module_queries": 1, "day:module_queries": 1, "module:gnc": 1 }

  it("a creation (202 with Location, one module query per module); identical requests while it runs: 200, the same operation, nothing charged; then the per-minute limit", async () => {
    freshMinute()
    const createdAt = iso(clock.currentTimeMillisUnsafe())
    const account = await app.createAccount()
    await setCustom(account, { requestsPerMinute: 6 })
    const created = await as(account, "/v2/vehicles/AC123BD/modules", "production", GNC)
    expect(created.status).toBe(202)
    const id = created.body.id as string
    expect(id).toMatch(/^op_[0-9A-Z]{26}$/)
    expect(created.headers).toEqual(admitted(created, 6, 1, { location: `/v2/operations/${id}` }))
    const operation = (status: string) => ({
      id,
      kind: "modules",
      status,
      plate: "AC123BD",
      createdAt,
      updatedAt: createdAt,
      modules: { gnc: { status, data: null, error: null } }
    })
    expect(created.body).toEqual(operation("queued"))
    expect(await counters(account)).toEqual({ requests: 1, ...gncCharged })

    await untilStored(id, "processing")
    const identical: Array<readonly [string, string, string?]> = [
      ["/v2/vehicles/AC123BD/modules", GNC],
      ["/v2/vehicles/ac123bd/modules", "{ \"modules\" : [ \"gnc\" ] }\n"],
      ["/v2/vehicles/AC123BD/modules", "{\"modules\":[\"g\\u006ec\"]}"],
      ["/v2/vehicles/AC123BD/modules", GNC, "application/json; charset=utf-8"],
      ["/v2/vehicles/AC123BD/modules", GNC]
    ]
    for (const [i, [path, body, contentType]] of identical.entries()) {
      const reused = await as(account, path, "production", body, contentType)
      expect(reused.status, body).toBe(200)
      expect(reused.headers, body).toEqual(admitted(reused, 6, 2 + i))
      expect(reused.body, body).toEqual(operation("processing"))
    }
    // the minute's sixth request was the last one admitted
    const limited = await as(account, "/v2/vehicles/AC123BD/modules", "production", GNC)
    expectRefused(limited, {
      status: 429,
      code: "rate_limit_exceeded",
      message: "Requests per minute limit of 6 reached",
      retryable: true,
      details: { meter: "requests", limit: 6, used: 6, resetAt: iso(minuteEnd()) }
    })
    expect(limited.headers).toEqual({ "x-request-id": limited.requestId, "retry-after": "40" })
    expect(await counters(account)).toEqual({ requests: 6, ...gncCharged })
  })

  it("refusals: unknown or repeated modules, bad bodies, a module the plan lacks: exact status and body, counted toward the per-minute limit only", async () => {
    freshMinute()
    const account = await app.createAccount()
    const cases: Array<readonly [string, string, Refusal]> = [
      ["AC123BD", JSON.stringify({ modules: ["gnc", "radar"] }), {
        status: 400,
        code: "unsupported_module",
        message: "Unsupported module radar: use fines, vtv, tax_debt or gnc"
      }],
      ["AC123BD", JSON.stringify({ modules: ["g🚗\"\\"] }), {
        status: 400,
        code: "unsupported_module",
        message: "Unsupported module g🚗\"\\: use fines, vtv, tax_debt or gnc"
      }],
      ["AC123BD", JSON.stringify({ modules: ["gnc", "fines", "gnc"] }), {
        status: 400,
        code: "duplicate_module",
        message: "Module requested more than once: gnc"
      }],
      ["AC123BD", JSON.stringify({ modules: [] }), {
        status: 400,
        code: "invalid_request",
        message: "Invalid request: modules: Expected a value with a length of at least 1"
      }],
      ["AC123BD", JSON.stringify({}), { status: 400, code: "invalid_request", message: "Invalid request: modules: is missing" }],
      ["AC123BD", JSON.stringify({ modules: ["gnc"], also: 1 }), {
        status: 400,
        code: "invalid_request",
        message: "Invalid request: also: is unexpected, expected: \"modules\""
      }],
      ["AC123BD", "{\"modules\":[\"gnc\"]", { status: 400, code: "invalid_request", message: "Malformed request body: expected JSON of at most 64 KiB" }],
      ["AB12", GNC, { status: 400, code: "invalid_plate", message: INVALID_PLATE }]
    ]
    for (const [i, [plate, body, refusal]] of cases.entries()) {
      const answer = await as(account, `/v2/vehicles/${plate}/modules`, "production", body)
      expectRefused(answer, refusal)
      expect(answer.headers, body).toEqual(admitted(answer, 120, i + 1))
    }
    expect(await counters(account)).toEqual({ requests: cases.length })

    const free = await app.createAccount({ plan: "free" })
    const notEnabled = await as(free, "/v2/vehicles/AC123BD/modules", "production", JSON.stringify({ modules: ["fines", "gnc", "tax_debt"] }))
    expectRefused(notEnabled, { status: 403, code: "module_not_enabled", message: "Module not enabled for this account: tax_debt, gnc" })
    expect(notEnabled.headers).toEqual(admitted(notEnabled, 30, 1))
    expect(await counters(free)).toEqual({ requests: 1 })
  })
})

// -- a module query's body on the wire ------------------------------------------------------------

describe("a module query's body on the wire", () => {
  const FINES = JSON.stringify({ modules: ["fines"] })
  const finesCharged = { module_queries: 1, "v2:module_queries": 1, "day:module_queries": 1, "module:fines": 1 }
  const head = (account: TestAccount, plate: string) =>
    `POST /v2/vehicles/${plate}/modules HTTP/1.1\r\nHost: vda.test\r\nX-Api-Key: ${account.production.key}\r\nX-Request-Id: wire-1\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${FINES.length}\r\nConnection: close\r\n\r\n`

  /** A connection of our own; `received` has what the server sent, once it closed. */
  const connect = () => {
    const { hostname, port } = new URL(urls.production)
    const socket = Net.connect(Number(port), hostname).setNoDelay(true)
    const received = new Promise<string>((resolve, reject) => {
      let text = ""
      socket.setTimeout(20_000, () => socket.destroy(new Error("the server never closed the connection")))
      socket.on("data", (chunk) => (text += chunk.toString("utf8")))
      socket.on("close", () => resolve(text))
      socket.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" ? resolve(text) : reject(error)))
    })
    return { socket, received }
  }

  /** The request counted toward the account's per-minute limit: admitted, so the server is reading its body. */
  const untilAdmitted = (account: TestAccount, requests: number) =>
    waitFor(async () => ((await counters(account)).requests === requests ? true : undefined), "the request to be admitted", 10_000)

  /** Requests on the route whose client left before the answer (status 499 in the metrics). */
  const dropped = async () => {
    const metrics = await (await fetch(urls.metrics)).text()
    const line = /^vda_http_requests_total\{environment="production",method="POST",route="\/v2\/vehicles\/\{plate\}\/modules",status="499"[^}]*\} (\d+)$/m
      .exec(metrics)
    return Number(line?.[1] ?? 0)
  }

  it("a body that arrives in pieces is read whole", async () => {
    freshMinute()
    const createdAt = iso(clock.currentTimeMillisUnsafe())
    const account = await app.createAccount()
    const { received, socket } = connect()
    socket.write(head(account, "AD456EF") + FINES.slice(0, 5))
    // the server has the request and waits for the rest of the body
    await untilAdmitted(account, 1)
    socket.write(FINES.slice(5, 12))
    socket.write(FINES.slice(12))
    const answer = await received
    const [headers = "", body = ""] = answer.split("\r\n\r\n")
    expect(headers.split("\r\n")[0]).toBe("HTTP/1.1 202 Accepted")
    const operation = JSON.parse(body)
    expect(operation).toEqual({
      id: expect.stringMatching(/^op_[0-9A-Z]{26}$/),
      kind: "modules",
      status: "queued",
      plate: "AD456EF",
      createdAt,
      updatedAt: createdAt,
      modules: { fines: { status: "queued", data: null, error: null } }
    })
    expect(headers).toContain(`\r\nlocation: /v2/operations/${operation.id}\r\n`)
    expect(headers).toContain(`\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`)
    expect(await counters(account)).toEqual({ requests: 1, ...finesCharged })
  })

  it("a client that leaves mid-body is dropped: no operation, nothing charged, its admission counted once", async () => {
    freshMinute()
    const account = await app.createAccount()
    const before = await dropped()

    // gone without a word
    const gone = connect()
    gone.socket.write(head(account, "AD457EF") + FINES.slice(0, 5))
    await untilAdmitted(account, 1)
    gone.socket.destroy()
    expect(await gone.received).toBe("")
    await waitFor(async () => ((await dropped()) === before + 1 ? true : undefined), "the request to be dropped", 10_000)

    // its side closed: Node itself refuses what is left of the request
    const closed = connect()
    closed.socket.write(head(account, "AD458EF") + FINES.slice(0, 5))
    await untilAdmitted(account, 2)
    closed.socket.end()
    const refusal = await closed.received
    expect(refusal.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
    const requestId = /\r\nX-Request-Id: (req_[0-9A-Z]{26})\r\n/.exec(refusal)?.[1]
    expect(expectErrorBody(refusal.split("\r\n\r\n")[1] ?? "", requestId, refusal).message).toBe("Malformed HTTP request")
    await waitFor(async () => ((await dropped()) === before + 2 ? true : undefined), "the request to be dropped", 10_000)

    const operations = await sql((sql) => sql<{ id: string }>`select id from operations where account_id = ${account.id}`)
    expect(operations).toEqual([])
    // every authenticated request counts toward the per-minute limit, even one refused later
    expect(await counters(account)).toEqual({ requests: 2 })
  })
})
