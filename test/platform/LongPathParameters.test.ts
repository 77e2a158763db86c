/**
 * A path parameter of any length reaches its endpoint, which answers it as it answers a shorter
 * one: a long plate is 400 invalid_plate, a long operation id 404 operation_not_found (v1 in its
 * envelope), never the router's "No route". The router's own limit (100 characters by default)
 * is lifted (src/Http.ts, ROUTER_CONFIG).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let app: TestApp
let account: TestAccount

beforeAll(async () => {
  app = await makeTestApp()
  account = await app.createAccount()
})
afterAll(() => app?.dispose())

/** Lengths around the router's default limit, and far past it. */
const LENGTHS = [99, 100, 101, 1_000, 8_000]

describe("long path parameters", () => {
  it("a plate of any length that is no plate: 400 invalid_plate, on the query and on module requests", async () => {
    const short = await json(await app.sandbox("/v2/vehicles/ABC1234567", withKey(account.sandbox.key)))
    expectShape(short, ErrorResponse("invalid_plate"))
    for (const length of LENGTHS) {
      const plate = "A".repeat(length)
      const query = await app.sandbox(`/v2/vehicles/${plate}`, withKey(account.sandbox.key))
      expect(query.status, `GET, ${length} characters`).toBe(400)
      const body = await json(query)
      expectShape(body, ErrorResponse("invalid_plate"))
      expect(body.error.message).toBe(short.error.message)

      const payload = JSON.stringify({ modules: ["fines"] })
      const modules = await app.sandbox(`/v2/vehicles/${plate}/modules`, withKey(account.sandbox.key, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
        body: payload
      }))
      expect(modules.status, `POST, ${length} characters`).toBe(400)
      expectShape(await json(modules), ErrorResponse("invalid_plate"))
    }
    // nothing was consumed by any of them
    const usage = (await json(await app.sandbox("/v2/usage", withKey(account.sandbox.key)))).data
    expect([usage.plateQueries.used, usage.moduleQueries.used]).toEqual([0, 0])
  })

  it("an operation id of any length that names no operation: 404 operation_not_found (v1: in its envelope)", async () => {
    for (const length of [10, ...LENGTHS]) {
      const id = `op_${"x".repeat(length)}`
      const v2 = await app.production(`/v2/operations/${id}`, withKey(account.production.key))
      expect(v2.status, `v2, ${length} characters`).toBe(404)
      const body = await json(v2)
      expectShape(body, ErrorResponse("operation_not_found"))
      expect(body.error.message).toBe(`No operation ${id}`)

      const v1 = await app.production(`/v1/vehicles/modules/${id}`, withKey(account.production.key))
      expect(v1.status, `v1, ${length} characters`).toBe(404)
      expect(await json(v1)).toMatchObject({ success: false, error: { code: "operation_not_found" } })
    }
  })
})
