/**
 * The lean lane against the HttpApi path: two Node listeners on the same application, one with the
 * lane in front, one without, each driven with its own account (same plan) by the same requests
 * in lockstep. Status, headers (but `Date`) and bodies must be the same bytes, usage must end the
 * same, and the lane must have answered the plain requests itself (the rest it passes on).
 */
import { createServer, type Server } from "node:http"
import * as Net from "node:net"
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.js"
import { AccountStatus } from "../../src/accounts/Status.js"
import { Catalog } from "../../src/catalog/Catalog.js"
import { forListener } from "../../src/Http.js"
import { Lane } from "../../src/lane/Lane.js"
import type { Environment } from "../../src/platform/RequestContext.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { ManualClock } from "../support/ManualClock.js"
import { waitFor } from "../support/Processes.js"
import { registryVehicle } from "../support/VehicleFixtures.js"
import { makeTestApp, type TestAccount, type TestApp } from "../support/TestApp.js"

const clock = new ManualClock(Date.parse("2026-11-21T15:00:20Z"))
let app: TestApp
let statusService: AccountStatus
const servers: Array<Server> = []
const passedOn: Array<string> = []
const urls = {} as Record<"lane" | "plain", Record<Environment, string>>

const listen = (handler: Parameters<typeof createServer>[1]) =>
  new Promise<string>((resolve) => {
    const server = createServer(handler).listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`))
    servers.push(server)
  })

beforeAll(async () => {
  // a gnc source that never answers (for 10 s, then again on retry): its operations stay active, to be reused
  const hanging = await listen(() => {})
  app = await makeTestApp({ clock, config: { GNC_UPSTREAM_URL: `${hanging}/gnc`, MODULE_UPSTREAM_TIMEOUT_MS: "10000" } })
  await app.run(Effect.gen(function*() {
    yield* (yield* Catalog).importRecords(FIXTURE_CATALOG)
    yield* (yield* VehicleStore).importRegistry([
      // odd characters in the answer: quotes, a backslash, accents, an emoji
      registryVehicle("AC123BD", { locations: ["Córdoba, Córdoba", "Rosario, Santa Fe \"centro\" \\ ñandú 🚗"] }),
      registryVehicle("KLM456", { model: "GOL TREND 1.6", year: 2019, firstRegistered: "2019-02-01" }),
      registryVehicle("DEF789", { make: "IKA", model: "TORINO 380 W", year: 1978, firstRegistered: null, totalOwners: 7 })
    ], new Date())
  }))
  statusService = await app.run(AccountStatus)
  const httpApp = await app.run(HttpApiBuilder.httpApp)
  for (const environment of ["production", "sandbox"] as const) {
    const handler = await app.run(NodeHttpServer.makeHandler(httpApp).pipe(forListener(environment)))
    const front = await app.run(Effect.flatMap(Lane, (lane) =>
      lane.front(environment, (request, response) => {
        passedOn.push(`${environment} ${request.url}`)
        handler(request, response)
      })))
    urls.lane = { ...urls.lane, [environment]: await listen(front) }
    urls.plain = { ...urls.plain, [environment]: await listen(handler) }
  }
})
afterAll(async () => {
  for (const server of servers) server.closeAllConnections()
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  await app?.dispose()
})

interface Twins {
  readonly lane: TestAccount
  readonly plain: TestAccount
}

const twins = async (setup?: (account: TestAccount) => Promise<unknown>): Promise<Twins> => {
  const lane = await app.createAccount()
  const plain = await app.createAccount()
  if (setup) {
    await setup(lane)
    await setup(plain)
  }
  return { lane, plain }
}

const setCustom = (account: TestAccount, changes: Parameters<Accounts["setCustom"]>[1]) =>
  app.run(Effect.flatMap(Accounts, (accounts) => accounts.setCustom(account.id, changes)))

let requestCount = 0

/**
 * One request to each listener, each with its own account's key; what came back, compared. With
 * a `body`, a POST of it (as JSON, unless the headers say otherwise).
 */
const both = async (
  accounts: Twins,
  environment: Environment,
  path: string | ((side: "lane" | "plain") => string),
  headers: (account: TestAccount) => Record<string, string> = (account) => ({ "x-api-key": account[environment].key }),
  /** Strings that differ between the twins by nature (their own ids), masked in headers and bodies. */
  own: (side: "lane" | "plain") => ReadonlyArray<string> = () => [],
  body?: string
) => {
  const requestId = `diff-${++requestCount}`
  const call = async (side: "lane" | "plain") => {
    const url = `${urls[side][environment]}${typeof path === "string" ? path : path(side)}`
    const res = await fetch(url, {
      headers: { "x-request-id": requestId, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers(accounts[side]) },
      ...(body === undefined ? {} : { method: "POST", body })
    })
    const masked = (text: string) => own(side).reduce((masking, value) => masking.replaceAll(value, "<own>"), text)
    const kept = [...res.headers].filter(([name]) => name !== "date").map(([name, value]) => [name, masked(value)])
    return { status: res.status, headers: kept, body: masked(await res.text()) }
  }
  const lane = await call("lane")
  const plain = await call("plain")
  expect(lane, `${environment} ${typeof path === "string" ? path : path("lane")}`).toEqual(plain)
  return lane
}

/**
 * Waits for an operation's status as stored: a poll would count toward the account's per-minute
 * limit as many times as the wait took, and the twins' rate-limit headers would then differ.
 */
const waitUntil = (id: string, wanted = "completed") =>
  waitFor(async () => {
    const [row] = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ status: string }>`select status from operations where id = ${id}`))
    return row?.status === wanted ? true : undefined
  }, `operation ${id} to be ${wanted}`, 15_000)

/** Whether the lane passed the request on, for requests sent after `mark`. */
const passedSince = (mark: number) => passedOn.slice(mark)

const usageOf = async (accounts: Twins, environment: Environment) => {
  const read = async (account: TestAccount) =>
    (await (await fetch(`${urls.plain[environment]}/v2/usage`, { headers: { "x-api-key": account[environment].key } })).json()) as {
      data: Record<string, unknown>
    }
  return { lane: (await read(accounts.lane)).data, plain: (await read(accounts.plain)).data }
}

const expectSameUsage = async (accounts: Twins, environment: Environment) => {
  const { lane, plain } = await usageOf(accounts, environment)
  // the per-minute count includes the usage reads themselves, one each
  expect(lane).toEqual(plain)
}

describe("the lean lane answers as the HttpApi path does", () => {
  it("production: every flag, found and not found, v2 and v1, byte for byte; the lane answers them itself", async () => {
    const accounts = await twins()
    await both(accounts, "production", "/v2/vehicles/AC123BD") // the first request of a key goes through HttpApi
    const mark = passedOn.length
    const paths = [
      "/v2/vehicles/AC123BD",
      "/v2/vehicles/ac123bd",
      "/v2/vehicles/KLM456?classification=true",
      "/v2/vehicles/KLM456?codia=true&sheet=true&tires=true&classification=true",
      "/v2/vehicles/DEF789?codia=false&sheet=false&tires=false&classification=false",
      "/v2/vehicles/DEF789?debug=true&codia=true",
      "/v2/vehicles/ZZ999ZZ",
      "/v2/vehicles/ZZ999ZZ?debug=true",
      "/v2/vehicles/AC123BD?unknown=1",
      "/v1/vehicles/basic?plate=KLM456",
      "/v1/vehicles/basic?plate=klm456",
      "/v1/vehicles/basic?plate=ZZZ999"
    ]
    for (const path of paths) {
      const answer = await both(accounts, "production", path)
      expect(answer.status, path).toBe(200)
    }
    expect(passedSince(mark)).toEqual([])
    await expectSameUsage(accounts, "production")
  })

  it("an answer given again is the stored vehicle's latest: a registry import shows at once", async () => {
    const accounts = await twins()
    await both(accounts, "production", "/v2/vehicles/GHI321")
    const before = await both(accounts, "production", "/v2/vehicles/GHI321")
    expect(JSON.parse(before.body)).toMatchObject({ found: false, data: null })
    await app.run(Effect.flatMap(VehicleStore, (store) => store.importRegistry([registryVehicle("GHI321", { model: "AMAROK V6" })], new Date())))
    for (let i = 0; i < 2; i++) {
      const after = await both(accounts, "production", "/v2/vehicles/GHI321")
      expect(JSON.parse(after.body)).toMatchObject({ found: true, data: { plate: "GHI321", model: "AMAROK V6" } })
    }
    await app.run(Effect.flatMap(VehicleStore, (store) => store.importRegistry([registryVehicle("GHI321", { model: "AMAROK V8" })], new Date())))
    const changed = await both(accounts, "production", "/v2/vehicles/GHI321")
    expect(JSON.parse(changed.body)).toMatchObject({ data: { model: "AMAROK V8" } })
    await expectSameUsage(accounts, "production")
  })

  it("refusals are passed on and answered alike: bad plates, flags, keys, plans, odd characters", async () => {
    const accounts = await twins()
    await both(accounts, "production", "/v2/vehicles/AC123BD")
    const free = await twins(async (account) => app.run(Effect.flatMap(Accounts, (a) => a.setPlan(account.id, "free"))))
    await both(free, "production", "/v2/vehicles/AC123BD")
    const mark = passedOn.length
    const cases: Array<readonly [Twins, string, number]> = [
      [accounts, "/v2/vehicles/AB12", 400],
      [accounts, "/v2/vehicles/AC123BD?codia=yes", 400],
      [accounts, "/v2/vehicles/AC123BD?debug=true&debug=false", 400],
      [accounts, "/v2/vehicles/AC123BD?sandbox_scenario=debt", 400],
      [accounts, "/v2/vehicles/AC123BD?sandbox_seed=x", 400],
      [accounts, "/v2/vehicles/%C4%B1AB123", 400],
      [accounts, "/v2/vehicles/AC%00123BD", 400],
      [accounts, "/v2/vehicles/AC123BD?onMiss=never", 400],
      [accounts, "/v2/vehicles/AC123BD/", 404],
      [accounts, "/v1/vehicles/basic", 400],
      [accounts, "/v1/vehicles/basic?plate=ab1", 400],
      [free, "/v2/vehicles/AC123BD?codia=true", 403],
      [free, "/v2/vehicles/AC123BD?onMiss=search", 403]
    ]
    for (const [twinsOf, path, status] of cases) {
      const answer = await both(twinsOf, "production", path)
      expect(answer.status, path).toBe(status)
    }
    for (const headers of [
      () => ({}),
      () => ({ "x-api-key": "vda_live_00000000000000000000000000000000" }),
      (account: TestAccount) => ({ "x-api-key": account.sandbox.key })
    ]) {
      expect((await both(accounts, "production", "/v2/vehicles/AC123BD", headers)).status).toBe(401)
    }
    // every one of them went on to HttpApi (the v1 error envelope included)
    expect(passedSince(mark).length).toBe(cases.length + 3)
    await expectSameUsage(accounts, "production")
    await expectSameUsage(free, "production")
  })

  it("sandbox: scenarios, seeds, not found, the unavailable source and searches", async () => {
    const accounts = await twins()
    await both(accounts, "sandbox", "/v2/vehicles/AB123CD")
    const mark = passedOn.length
    for (const path of [
      "/v2/vehicles/AB123CD",
      "/v2/vehicles/AB000CD",
      "/v2/vehicles/AB111CD?classification=true",
      "/v2/vehicles/AB404CD",
      "/v2/vehicles/AB444CD?debug=true",
      "/v2/vehicles/AB123CD?sandbox_scenario=debt&sandbox_seed=seed-1.2_x",
      "/v2/vehicles/AB123CD?sandbox_seed=&debug=true",
      "/v2/vehicles/AB202CD",
      "/v1/vehicles/basic?plate=AB123CD"
    ]) {
      expect((await both(accounts, "sandbox", path)).status, path).toBe(200)
    }
    expect(passedSince(mark)).toEqual([])
    const unavailable = await both(accounts, "sandbox", "/v2/vehicles/AB333CD")
    expect(unavailable.status).toBe(503)
    expect((await both(accounts, "sandbox", "/v2/vehicles/AB123CD?sandbox_scenario=unavailable")).status).toBe(503)
    expect(passedSince(mark).length).toBe(2)
    await expectSameUsage(accounts, "sandbox")
  })

  it("429s: the allowance used up (answered by the lane), then the per-minute limit", async () => {
    const accounts = await twins((account) => setCustom(account, { plateQueriesMonthly: 3, requestsPerMinute: 6 }))
    await both(accounts, "production", "/v2/vehicles/AC123BD")
    const mark = passedOn.length
    const statuses: Array<number> = []
    for (let i = 0; i < 7; i++) statuses.push((await both(accounts, "production", "/v2/vehicles/KLM456")).status)
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429])
    const last = await both(accounts, "production", "/v1/vehicles/basic?plate=KLM456")
    expect(last.status).toBe(429)
    expect(JSON.parse(last.body)).toMatchObject({ success: false, error: { code: "rate_limit_exceeded" } })
    expect(passedSince(mark)).toEqual([])
    clock.advance("1 minute")
    const quota = await both(accounts, "production", "/v1/vehicles/basic?plate=KLM456")
    expect(JSON.parse(quota.body)).toMatchObject({ success: false, error: { code: "quota_exceeded" } })
    await expectSameUsage(accounts, "production")
  })

  it("operation polls: its own operation (answered by the lane), another's, an unknown or odd id (passed on, admitted)", async () => {
    const accounts = await twins()
    const create = async (account: TestAccount) => {
      const res = await fetch(`${urls.plain.sandbox}/v2/vehicles/AB123CD/modules`, {
        method: "POST",
        headers: { "x-api-key": account.sandbox.key, "content-type": "application/json" },
        body: JSON.stringify({ modules: ["fines", "vtv"] })
      })
      return ((await res.json()) as { id: string }).id
    }
    const ids = { lane: await create(accounts.lane), plain: await create(accounts.plain) }
    const own = (side: "lane" | "plain") => [ids[side]]
    // both final, so that the twins' answers can be the same
    for (const side of ["lane", "plain"] as const) {
      await waitUntil(ids[side])
    }
    clock.advance("1 minute") // a fresh per-minute window for both, whatever the requests before took
    const mark = passedOn.length
    for (let i = 0; i < 3; i++) {
      const answer = await both(accounts, "sandbox", (side) => `/v2/operations/${ids[side]}`, undefined, own)
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toMatchObject({ id: "<own>", status: "completed" })
    }
    expect(passedSince(mark)).toEqual([])
    const others = await twins()
    expect((await both(others, "sandbox", (side) => `/v2/operations/${ids[side]}`, undefined, own)).status).toBe(404)
    expect((await both(accounts, "sandbox", "/v2/operations/op_01M7ZZZZZZZZZZZZZZZZZZZZZZ")).status).toBe(404)
    expect((await both(accounts, "sandbox", "/v2/operations/op-1%20x")).status).toBe(404)
    expect((await both(accounts, "sandbox", (side) => `/v2/operations/${ids[side]}?x=1`, undefined, own)).status).toBe(200)
    expect((await both(accounts, "production", (side) => `/v2/operations/${ids[side]}`, undefined, own)).status).toBe(404)
    expect(passedSince(mark)).toHaveLength(5)
    await expectSameUsage(accounts, "sandbox")
    await expectSameUsage(accounts, "production")
  })

  it("the liveness probe: answered by the lane, its request id given or made; anything else at /healthz passed on", async () => {
    const accounts = await twins()
    const mark = passedOn.length
    for (const environment of ["production", "sandbox"] as const) {
      const answer = await both(accounts, environment, "/healthz", () => ({}))
      expect(answer.status).toBe(200)
      expect(answer.body).toBe("{\"status\":\"ok\"}")
    }
    expect(passedSince(mark)).toEqual([])
    expect((await both(accounts, "production", "/healthz?verbose=1", () => ({}))).status).toBe(200)
    expect((await both(accounts, "production", "/healthz", () => ({ "content-type": "text/plain" }), undefined, "up?")).status).toBe(415)
    const own = await fetch(`${urls.lane.production}/healthz`)
    expect(own.headers.get("x-request-id")).toMatch(/^req_[0-9A-Z]{26}$/)
    expect(passedSince(mark)).toEqual(["production /healthz?verbose=1", "production /healthz"])
  })

  it("a poll of a running operation: answered by the lane, with its Retry-After", async () => {
    const accounts = await twins()
    const ids = {} as Record<"lane" | "plain", string>
    for (const side of ["lane", "plain"] as const) {
      const res = await fetch(`${urls.plain.production}/v2/vehicles/AC123BD/modules`, {
        method: "POST",
        headers: { "x-api-key": accounts[side].production.key, "content-type": "application/json" },
        body: JSON.stringify({ modules: ["gnc"] })
      })
      ids[side] = ((await res.json()) as { id: string }).id
      await waitUntil(ids[side], "processing")
    }
    const mark = passedOn.length
    const answer = await both(accounts, "production", (side) => `/v2/operations/${ids[side]}`, undefined, (side) => [ids[side]])
    expect(answer.status).toBe(200)
    expect(Object.fromEntries(answer.headers)).toMatchObject({ "retry-after": expect.stringMatching(/^[1-9][0-9]*$/) })
    expect(JSON.parse(answer.body)).toMatchObject({ id: "<own>", status: "processing" })
    expect(passedSince(mark)).toEqual([])
    await expectSameUsage(accounts, "production")
  })

  it("an account changed since the lane saw it is charged by its new terms, once; a revoked key is refused", async () => {
    const accounts = await twins((account) => setCustom(account, { plateQueriesMonthly: 100 }))
    expect((await both(accounts, "production", "/v2/vehicles/AC123BD")).status).toBe(200)
    await setCustom(accounts.lane, { plateQueriesMonthly: 1 })
    await setCustom(accounts.plain, { plateQueriesMonthly: 1 })
    const mark = passedOn.length
    const refused = await both(accounts, "production", "/v2/vehicles/AC123BD")
    expect(refused.status).toBe(429)
    // handed over admitted: HttpApi answered it without counting it again
    expect(passedSince(mark)).toHaveLength(1)
    await setCustom(accounts.lane, { plateQueriesMonthly: 10 })
    await setCustom(accounts.plain, { plateQueriesMonthly: 10 })
    expect((await both(accounts, "production", "/v2/vehicles/KLM456")).status).toBe(200)
    await expectSameUsage(accounts, "production")

    for (const account of [accounts.lane, accounts.plain]) {
      await app.run(Effect.flatMap(Accounts, (a) => a.revokeKey(account.production.id)))
    }
    expect((await both(accounts, "production", "/v2/vehicles/AC123BD")).status).toBe(401)
  })

  it("the account's status: answered by the lane, with the usage and keys as they stand", async () => {
    const accounts = await twins()
    for (const environment of ["production", "sandbox"] as const) {
      await both(accounts, environment, "/v2/vehicles/AB123CD")
      // the twins' own ids and key characters; when a key was last used is noted in the background
      const own = (side: "lane" | "plain") => [
        accounts[side].id,
        accounts[side][environment].id,
        `"prefix":"${accounts[side][environment].prefix}"`,
        `"last4":"${accounts[side][environment].last4}"`,
        `"lastUsedAt":"${new Date(clock.unsafeCurrentTimeMillis()).toISOString()}"`,
        `"lastUsedAt":null`
      ]
      const mark = passedOn.length
      const readsAfter = vi.spyOn(statusService, "offerRead")
      for (let i = 0; i < 2; i++) {
        const answer = await both(accounts, environment, "/v2/status", undefined, own)
        expect(answer.status).toBe(200)
        // (masked, the body is no longer JSON)
        expect(answer.body).toMatch(new RegExp(`^\\{"success":true,.*"usage":\\{"environment":"${environment}",.*"requests":\\{"limit":120,"used":${2 + i},`))
      }
      // read in the admission's own round trip, which counted the request
      expect(readsAfter).not.toHaveBeenCalled()
      readsAfter.mockRestore()
      expect(passedSince(mark)).toEqual([])
      expect((await both(accounts, environment, "/v2/status?verbose=1", undefined, own)).status).toBe(200)
      expect(passedSince(mark)).toHaveLength(1)
    }
    await expectSameUsage(accounts, "production")
  })

  it("the account's status after its account changed: a new plan shows at once; a new timezone's periods are read after the admission", async () => {
    const accounts = await twins()
    const own = (side: "lane" | "plain") => [
      accounts[side].id,
      accounts[side].production.id,
      `"prefix":"${accounts[side].production.prefix}"`,
      `"last4":"${accounts[side].production.last4}"`,
      `"lastUsedAt":"${new Date(clock.unsafeCurrentTimeMillis()).toISOString()}"`
    ]
    await both(accounts, "production", "/v2/vehicles/AB123CD")
    // when a key was last used is noted in the background: both noted, the bodies are the same length
    await waitFor(async () => {
      const [row] = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`select count(*)::int as n from api_keys where id in (${accounts.lane.production.id}, ${accounts.plain.production.id}) and last_used_at is not null`))
      return row?.n === 2 ? true : undefined
    }, "the keys' last use to be noted", 5_000)
    for (const account of [accounts.lane, accounts.plain]) await setCustom(account, { requestsPerMinute: 50 })
    const readsAfter = vi.spyOn(statusService, "offerRead")
    expect((await both(accounts, "production", "/v2/status", undefined, own)).body).toContain(`"requests":{"limit":50,"used":2,`)
    expect((await both(accounts, "production", "/v2/status", undefined, own)).body).toContain(`"requests":{"limit":50,"used":3,`)
    expect(readsAfter).not.toHaveBeenCalled()

    // the key's account as this process knew it read the periods of its old timezone: read again after
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`update accounts set timezone = 'Asia/Kathmandu' where id in (${accounts.lane.id}, ${accounts.plain.id})`))
    const moved = await both(accounts, "production", "/v2/status", undefined, own)
    expect(moved.body).toContain(`"timezone":"Asia/Kathmandu"`)
    expect(moved.body).toContain(`"requests":{"limit":50,"used":4,`)
    expect(readsAfter).toHaveBeenCalledTimes(1)
    readsAfter.mockRestore()
  })

  it("module queries: a reuse of the active operation answered by the lane; creations and refusals passed on", async () => {
    const accounts = await twins((account) => setCustom(account, { requestsPerMinute: 12 }))
    const gnc = JSON.stringify({ modules: ["gnc"] })
    const ids = {} as Record<"lane" | "plain", string>
    for (const side of ["lane", "plain"] as const) {
      const res = await fetch(`${urls[side].production}/v2/vehicles/AC123BD/modules`, {
        method: "POST",
        headers: { "x-api-key": accounts[side].production.key, "content-type": "application/json" },
        body: gnc
      })
      expect(res.status).toBe(202)
      ids[side] = ((await res.json()) as { id: string }).id
    }
    for (const side of ["lane", "plain"] as const) await waitUntil(ids[side], "processing")
    clock.advance("1 minute") // a fresh per-minute window for both, whatever the requests before took
    const own = (side: "lane" | "plain") => [ids[side]]
    const post = (path: string, body: string, headers?: (account: TestAccount) => Record<string, string>) =>
      both(accounts, "production", path, headers, own, body)

    const mark = passedOn.length
    for (const [path, body] of [
      ["/v2/vehicles/AC123BD/modules", gnc],
      ["/v2/vehicles/ac123bd/modules", "{ \"modules\" : [ \"gnc\" ] }\n"],
      ["/v2/vehicles/AC123BD/modules", "{\"modules\":[\"g\\u006ec\"]}"]
    ] as const) {
      const answer = await post(path, body)
      expect(answer.status, body).toBe(200)
      expect(JSON.parse(answer.body)).toMatchObject({ id: "<own>", status: "processing", modules: { gnc: { status: "processing" } } })
    }
    expect(passedSince(mark)).toEqual([])

    const refusals: Array<readonly [string, string, number]> = [
      ["/v2/vehicles/AC123BD/modules", JSON.stringify({ modules: ["gnc", "gnc"] }), 400],
      ["/v2/vehicles/AC123BD/modules", JSON.stringify({ modules: ["gnc", "radar"] }), 400],
      ["/v2/vehicles/AC123BD/modules", JSON.stringify({ modules: [] }), 400],
      ["/v2/vehicles/AC123BD/modules", JSON.stringify({ modules: ["gnc"], also: 1 }), 400],
      ["/v2/vehicles/AC123BD/modules", "{\"modules\":[\"gnc\"]", 400],
      ["/v2/vehicles/AC123BD/modules", "{\"modules\":[\"gnc\u0000\"]}", 400],
      ["/v2/vehicles/AB12/modules", gnc, 400]
    ]
    for (const [path, body, status] of refusals) {
      expect((await post(path, body)).status, body).toBe(status)
    }
    expect((await post("/v2/vehicles/AC123BD/modules", gnc, (account) => ({ "x-api-key": account.production.key, "content-type": "text/plain" }))).status)
      .toBe(415)
    expect((await post("/v2/vehicles/AC123BD/modules", gnc, (account) => ({ "x-api-key": account.sandbox.key }))).status).toBe(401)
    // every one of them went on to HttpApi, with its body
    expect(passedSince(mark)).toHaveLength(refusals.length + 2)

    // the per-minute limit (12): 3 reuses and 8 refusals counted so far; the 12th is the last admitted
    expect((await post("/v2/vehicles/AC123BD/modules", gnc)).status).toBe(200)
    const limited = await post("/v2/vehicles/AC123BD/modules", gnc)
    expect(limited.status).toBe(429)
    expect(JSON.parse(limited.body)).toMatchObject({ error: { code: "rate_limit_exceeded" } })
    expect(passedSince(mark)).toHaveLength(refusals.length + 2)
    await expectSameUsage(accounts, "production")
  })

  it("a module query's body in pieces is read whole; one whose client leaves mid-body is dropped, counted nowhere", async () => {
    const { lane: account } = await twins()
    const gnc = JSON.stringify({ modules: ["gnc"] })
    const created = await fetch(`${urls.lane.production}/v2/vehicles/AC123BD/modules`, {
      method: "POST",
      headers: { "x-api-key": account.production.key, "content-type": "application/json" },
      body: gnc
    })
    expect(created.status).toBe(202)
    await waitUntil(((await created.json()) as { id: string }).id, "processing")

    const { hostname, port } = new URL(urls.lane.production)
    const head = `POST /v2/vehicles/AC123BD/modules HTTP/1.1\r\nHost: vda.test\r\nX-Api-Key: ${account.production.key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${gnc.length}\r\nConnection: close\r\n\r\n`
    /** What the server sent back on a connection of our own, until it closed. */
    const raw = (send: (socket: Net.Socket) => void) =>
      new Promise<string>((resolve, reject) => {
        const socket = Net.connect(Number(port), hostname, () => send(socket.setNoDelay(true)))
        let received = ""
        socket.on("data", (chunk) => (received += chunk))
        socket.on("close", () => resolve(received))
        socket.on("error", reject)
      })
    const requestsUsed = async () =>
      ((await (await fetch(`${urls.plain.production}/v2/usage`, { headers: { "x-api-key": account.production.key } })).json()) as {
        data: { requests: { used: number } }
      }).data.requests.used

    const mark = passedOn.length
    const pieces = await raw((socket) => socket.write(head + gnc.slice(0, 5), () => socket.write(gnc.slice(5))))
    expect(pieces).toMatch(/^HTTP\/1\.1 200 /)
    expect(passedSince(mark)).toEqual([])

    const before = await requestsUsed()
    // Node's own parser answers a body cut short (a bare 400) to a client that has left
    expect(await raw((socket) => socket.end(head + gnc.slice(0, 5)))).toMatch(/^(HTTP\/1\.1 400 Bad Request\r\n[^]*)?$/)
    // the next read of usage is the only request counted since
    expect(await requestsUsed()).toBe(before + 1)
    expect(passedSince(mark)).toEqual([])
  })
})
