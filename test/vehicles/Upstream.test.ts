/**
 * The upstream vehicle source through the real query: a stub upstream on a local port.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ErrorResponse, expectShape, VehicleResponse } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

interface Stub {
  status: number
  body: unknown
  calls: Array<string>
}

const stub: Stub = { status: 200, body: {}, calls: [] }
let server: Server
let app: TestApp
let account: TestAccount

const vehicle = {
  make: "TOYOTA",
  model: "HILUX 2.8 TDI SRV 4X4 AT",
  year: 2021,
  firstRegistered: "2021-06-01",
  totalOwners: 1,
  currentOwners: 1,
  currentLocation: { city: "Neuquén", province: "Neuquén" },
  locations: ["Neuquén, Neuquén"],
  sourceDate: "2026-11-01",
  modelImage: "https://images.example/hilux.jpg"
}

beforeAll(async () => {
  server = createServer((req, res) => {
    stub.calls.push(req.url ?? "")
    res.writeHead(stub.status, { "content-type": "application/json" })
    res.end(JSON.stringify(stub.body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address ? address.port : 0
  app = await makeTestApp({ config: { VEHICLE_UPSTREAM_URL: `http://127.0.0.1:${port}/` } })
  account = await app.createAccount()
})

afterAll(async () => {
  await app.dispose()
  await new Promise((resolve) => server.close(resolve))
})

const plateQueriesUsed = async () =>
  (await json(await app.production("/v2/usage", withKey(account.production.key)))).data.plateQueries.used as number

const query = (plate: string) => app.production(`/v2/vehicles/${plate}?debug=true`, withKey(account.production.key))

describe("upstream source", () => {
  it("a miss asks the upstream, caches the answer, and the next query is a cache hit", async () => {
    Object.assign(stub, { status: 200, body: { found: true, vehicle }, calls: [] })
    const first = await json(await query("AE123FG"))
    expectShape(first, VehicleResponse)
    expect(first.data).toMatchObject({ plate: "AE123FG", make: "TOYOTA", modelImage: vehicle.modelImage })
    expect(first.data.debug).toMatchObject({ cache: "miss", source: "upstream" })
    expect(JSON.stringify(first.data.debug)).not.toContain("127.0.0.1")
    expect(stub.calls).toEqual(["/vehicles/AE123FG"])
    const second = await json(await query("ae123fg"))
    expect(second.data.debug).toMatchObject({ cache: "hit", source: "upstream" })
    expect(stub.calls).toHaveLength(1)
  })

  it("an upstream 404 is found:false, charged, and cached", async () => {
    Object.assign(stub, { status: 404, body: { error: "none" }, calls: [] })
    const before = await plateQueriesUsed()
    const body = await json(await query("AE124FG"))
    expect(body).toEqual({ success: true, found: false, data: null })
    await query("AE124FG")
    expect(stub.calls).toHaveLength(1)
    expect(await plateQueriesUsed()).toBe(before + 2)
  })

  it("a failing upstream is 503 and consumes nothing; the breaker then fails fast", async () => {
    Object.assign(stub, { status: 500, body: {}, calls: [] })
    const before = await plateQueriesUsed()
    const res = await query("AE125FG")
    expect(res.status).toBe(503)
    const body = await json(res)
    expectShape(body, ErrorResponse("temporarily_unavailable"))
    expect(body.error.retryable).toBe(true)
    expect(res.headers.get("retry-after")).not.toBeNull()
    expect(stub.calls).toHaveLength(3) // first attempt and two retries
    expect(await plateQueriesUsed()).toBe(before)

    for (let i = 0; i < 4; i++) await query(`AE12${6 + i}FG`)
    const callsBeforeOpen = stub.calls.length
    expect((await query("AE130FG")).status).toBe(503)
    expect(stub.calls.length).toBe(callsBeforeOpen) // circuit open: upstream not called
    expect(await plateQueriesUsed()).toBe(before)
  })

  it("an unexpected answer is treated as unavailable, not as data", async () => {
    const address = server.address()
    const port = typeof address === "object" && address ? address.port : 0
    const fresh = await makeTestApp({ config: { VEHICLE_UPSTREAM_URL: `http://127.0.0.1:${port}` } })
    try {
      const other = await fresh.createAccount()
      Object.assign(stub, { status: 200, body: { found: true, vehicle: { make: "X" } }, calls: [] })
      const res = await fresh.production("/v2/vehicles/AE131FG", withKey(other.production.key))
      expect(res.status).toBe(503)
      expect(stub.calls).toHaveLength(1) // a malformed answer is not retried
    } finally {
      await fresh.dispose()
    }
  })
})
