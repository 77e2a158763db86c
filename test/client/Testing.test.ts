/**
 * The test support for integrators: `layerTest` (and its Promise twin) answers from the sandbox's
 * own generators in process, without a network: the vehicles, scenarios and magic plates of the
 * sandbox, its module records with every operation final at once, polls, and the contract's
 * errors. `layerLocalSandbox` takes only a sandbox key. (Against a real sandbox listener:
 * test/e2e/Server.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { afterEach, beforeEach, vi } from "vitest"
import { VehicleDataClient } from "../../src/client/index.js"
import { layerLocalSandbox, layerTest, makeTestPromiseClient } from "../../src/client/testing.js"
import { generateVehicle } from "../../src/sandbox/Generator.js"
import { fieldsOf } from "../support/ClientErrors.js"

// nothing here may reach a network
beforeEach(() => {
  vi.stubGlobal("fetch", () => Promise.reject(new Error("the test support reached for the network")))
})
afterEach(() => {
  vi.unstubAllGlobals()
})

const withTestClient = <A, E>(use: (client: VehicleDataClient["Service"]) => Effect.Effect<A, E>) =>
  Effect.provide(Effect.flatMap(Effect.service(VehicleDataClient), use), layerTest())

describe("layerTest", () => {
  it.effect("answers the vehicle query with the sandbox's vehicle for the plate, seed and scenario", () =>
    withTestClient((client) =>
      Effect.gen(function*() {
        const answer = yield* client.vehicles.getVehicle({ params: { plate: "ab123cd" }, query: { sandbox_seed: "demo" } })
        const synthetic = generateVehicle("AB123CD", "demo", "default")
        expect(answer).toEqual({
          success: true,
          found: true,
          data: { plate: "AB123CD", ...synthetic.facts, vehicleType: synthetic.vehicleType, sandbox: true, scenario: "default" }
        })
        const debt = yield* client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { sandbox_scenario: "debt" } })
        expect(debt).toMatchObject({ found: true })
        expect((debt as { data: unknown }).data).toMatchObject({ ...generateVehicle("AB123CD", "", "debt").facts, scenario: "debt" })
        expect(yield* client.vehicles.getVehicle({ params: { plate: "AB404CD" } })).toEqual({ success: true, found: false, data: null })
        expect(yield* client.vehicles.getVehicle({ params: { plate: "AB000CD" } })).toMatchObject({ data: { scenario: "clean" } })
      })))

  it.effect("refuses as the API does: an invalid plate, an unavailable source (503, Retry-After), a bad parameter", () =>
    withTestClient((client) =>
      Effect.gen(function*() {
        const invalid = yield* Effect.flip(client.vehicles.getVehicle({ params: { plate: "NOT-A-PLATE" } }))
        expect(fieldsOf(invalid)).toMatchObject({ code: "invalid_plate", status: 400, retryable: false })
        const down = yield* Effect.flip(client.vehicles.getVehicle({ params: { plate: "AB333CD" } }))
        expect(fieldsOf(down)).toMatchObject({ code: "temporarily_unavailable", status: 503, retryable: true, retryAfter: 5 })
        const failed = yield* client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { sandbox_scenario: "failed" } })
        expect(failed).toEqual({ success: true, found: false, data: null })
        const seed = yield* Effect.flip(client.vehicles.getVehicle({ params: { plate: "AB123CD" }, query: { sandbox_seed: "s".repeat(129) } }))
        expect(fieldsOf(seed)).toMatchObject({ code: "invalid_request", retryable: false })
      })))

  it.effect("a module query is an operation final at once, as the sandbox's scenario makes it; polled and waited for", () =>
    withTestClient((client) =>
      Effect.gen(function*() {
        const created = yield* client.operations.createModulesOperation({ params: { plate: "AB222CD" }, payload: { modules: ["vtv", "fines"] } })
        expect(created).toMatchObject({ kind: "modules", status: "partial", plate: "AB222CD" })
        // `partial`: the first requested module (in the spec's order) fails, the next has reduced coverage
        expect(created.modules.fines).toEqual({
          status: "failed",
          data: null,
          error: { code: "module_unavailable", message: "fines source unavailable", retryable: true }
        })
        expect(created.modules.vtv).toMatchObject({ status: "partial", error: null, warnings: [{ code: "reduced_coverage" }] })
        const polled = yield* client.operations.getOperation({ params: { id: created.id } })
        expect({ ...polled }).toEqual({ ...created })
        expect(yield* client.waitForOperation(created.id)).toEqual(polled)

        const clean = yield* client.operations.createModulesOperation({ params: { plate: "AB000CD" }, payload: { modules: ["fines", "gnc"] } })
        expect(clean).toMatchObject({ status: "completed", modules: { fines: { status: "completed", data: { total: 0 } }, gnc: { status: "completed" } } })
        expect(clean.id).not.toBe(created.id)
        const failed = yield* client.operations.createModulesOperation({ params: { plate: "AB444CD" }, payload: { modules: ["tax_debt"] } })
        expect(failed).toMatchObject({ status: "failed", modules: { tax_debt: { error: { code: "module_unavailable", retryable: false } } } })
      })))

  it.effect("module refusals by their codes; an unknown operation; an onMiss=search miss accepted as a final search", () =>
    withTestClient((client) =>
      Effect.gen(function*() {
        const refused = (modules: ReadonlyArray<string>) =>
          Effect.map(Effect.flip(client.operations.createModulesOperation({ params: { plate: "AB123CD" }, payload: { modules } })), fieldsOf)
        expect(yield* refused(["fines", "speeding"])).toMatchObject({ code: "unsupported_module", status: 400, message: expect.stringContaining("speeding") })
        expect(yield* refused(["vtv", "vtv"])).toMatchObject({ code: "duplicate_module", status: 400 })
        expect(fieldsOf(yield* Effect.flip(client.operations.getOperation({ params: { id: "op_nope" } })))).toMatchObject({
          code: "operation_not_found",
          status: 404
        })
        const search = yield* client.vehicles.getVehicle({ params: { plate: "AB202CD" }, query: { onMiss: "search" } })
        expect(search).toMatchObject({ kind: "vehicle", status: "completed", result: { success: true, found: true, data: { plate: "AB202CD" } } })
        expect(yield* client.vehicles.getVehicle({ params: { plate: "AB202CD" } })).toMatchObject({ found: true })
      })))

  it.effect("other endpoints are not answered in process: 404", () =>
    withTestClient((client) =>
      Effect.gen(function*() {
        expect(fieldsOf(yield* Effect.flip(client.metering.getUsage()))).toMatchObject({ code: "invalid_request", status: 404 })
      })))

  it.effect("each layer is a fresh sandbox", () =>
    Effect.gen(function*() {
      const create = Effect.flatMap(Effect.service(VehicleDataClient), (client) =>
        client.operations.createModulesOperation({ params: { plate: "AB123CD" }, payload: { modules: ["fines"] } }))
      const first = yield* Effect.provide(create, layerTest())
      const other = yield* Effect.provide(
        Effect.flatMap(Effect.service(VehicleDataClient), (client) => Effect.flip(client.operations.getOperation({ params: { id: first.id } }))),
        layerTest()
      )
      expect(fieldsOf(other).code).toBe("operation_not_found")
    }))
})

describe("makeTestPromiseClient", () => {
  it("the same answers as Promises", async () => {
    const client = makeTestPromiseClient()
    expect(await client.vehicles.getVehicle({ params: { plate: "AB123CD" } })).toMatchObject({ data: { sandbox: true } })
    const created = await client.operations.createModulesOperation({ params: { plate: "AB111CD" }, payload: { modules: ["fines", "tax_debt"] } })
    expect(created).toMatchObject({ status: "completed" })
    expect((await client.waitForOperation(created.id)).status).toBe("completed")
    expect(fieldsOf(await client.accounts.getStatus().catch((error: unknown) => error)).code).toBe("invalid_request")
  })
})

describe("layerLocalSandbox", () => {
  it.effect("takes a sandbox key only", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(layerLocalSandbox({ apiKey: "vda_live_0123456789abcdefghijklmnopqrstuv" })))
      expect(exit._tag).toBe("Failure")
      expect(String(exit._tag === "Failure" ? exit.cause : "")).toMatch(/sandbox key \(vda_test_…\)/)
      const built = yield* Effect.exit(Layer.build(layerLocalSandbox({ apiKey: "vda_test_0123456789abcdefghijklmnopqrstuv" })))
      expect(built._tag).toBe("Success")
    }))
})
