/**
 * The data sources behind their ports: the application's (production's registry and the
 * sandbox's generators, each reached by its environment), canned ones (`Test` layers) in their
 * place, and each environment's source built once with the service, not per query.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Fiber, Layer, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { SourcesLive } from "../../src/ActivitiesLive.js"
import { Metering } from "../../src/metering/Metering.js"
import { ModuleRegistry } from "../../src/modules/Registry.js"
import { ModuleSource, ModuleSources, ModuleUnavailable } from "../../src/modules/Sources.js"
import { generateVehicle } from "../../src/sandbox/Generator.js"
import { syntheticModule } from "../../src/sandbox/Modules.js"
import { found, type Local, VehicleSource, VehicleSources } from "../../src/vehicles/Sources.js"
import * as Charges from "../../src/metering/Charges.js"
import type { VehicleQueryParams } from "../../src/vehicles/Api.js"
import { VehicleStore } from "../../src/vehicles/Store.js"
import { SourceUnavailable } from "../../src/vehicles/Upstream.js"
import { VehicleQuery } from "../../src/vehicles/VehicleQuery.js"
import type { Principal } from "../../src/principal/Domain.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { testConfig } from "../support/TestApp.js"
import { eventually } from "../support/Processes.js"
import { registryVehicle } from "../support/VehicleFixtures.js"

const PLATE = "AB123CD"

/** The vehicle query and the module sources on `sources`, over a fresh database. */
const servicesOn = <E, R>(sources: Layer.Layer<VehicleSources | ModuleSources, E, R>) =>
  Layer.mergeAll(VehicleQuery.layer, ModuleRegistry.layer, VehicleStore.layer).pipe(
    Layer.provideMerge(sources),
    Layer.provideMerge(Metering.layer),
    Layer.provide(FetchHttpClient.layer),
    Layer.provideMerge(freshDatabaseLayer(2)),
    Layer.provideMerge(testConfig())
  )

/** A production caller on a paid plan, as its key shows it to the query. */
const productionPrincipal = (accountId: string): Principal => ({
  accountId, owner: "Sources test", keyId: `key_${accountId}`, environment: "production", timezone: "UTC", modulePricing: null,
  entitlements: {
    plan: "growth", plateQueriesMonthly: 100, moduleQueriesMonthly: 100, uniquePlatesDaily: 100, requestsPerMinute: 60,
    enabledModules: [], timezone: "UTC"
  }
})

const search = (environment: "production" | "sandbox", plate: string) =>
  Effect.flatMap(VehicleQuery, (query) => query.search(environment, plate, {}, "req_sources"))

layer(servicesOn(SourcesLive), { excludeTestServices: true })("the application's sources", (it) => {
  it.effect("production finds the registry's vehicle, the sandbox its synthetic one, for the same plate", () =>
    Effect.gen(function*() {
      const registered = registryVehicle(PLATE, { make: "FIAT", model: "CRONOS DRIVE 1.3 GSE 4P" })
      yield* (yield* VehicleStore).importRegistry([registered], new Date())

      const production = yield* search("production", PLATE)
      expect(production.data).toMatchObject({ plate: PLATE, make: "FIAT", model: "CRONOS DRIVE 1.3 GSE 4P" })
      expect(production.data).not.toHaveProperty("sandbox")

      const sandbox = yield* search("sandbox", PLATE)
      const synthetic = generateVehicle(PLATE, "", "default")
      expect(sandbox.data).toMatchObject({ plate: PLATE, ...synthetic.facts, sandbox: true, scenario: "default" })
    }))

  it.effect("production answers a plate it does not hold as not found; the sandbox still makes one up", () =>
    Effect.gen(function*() {
      expect(yield* search("production", "AC999DE")).toEqual({ success: true, found: false, data: null })
      expect((yield* search("sandbox", "AC999DE")).found).toBe(true)
    }))

  it.effect("what production's source holds in memory is found at once, as a read finds it; the sandbox's, never", () =>
    Effect.gen(function*() {
      const sources = yield* VehicleSources
      const store = yield* VehicleStore
      const now = Date.now()
      const held = "AC111DE"
      const notHeld = "AC222DE"
      yield* store.importRegistry([registryVehicle(held, { make: "FORD" })], new Date())
      // nothing read yet: nothing known at once
      expect(sources.production.findAtOnce(held, {}, now)).toBeUndefined()
      expect(sources.production.findAtOnce(notHeld, {}, now)).toBeUndefined()

      // once read, a vehicle and a plate found nowhere are both known at once, as the read found
      // them (a read that overlaps a change heard is not kept, and the store's first read starts its
      // listening, which forgets all: read until one is kept; compared in the same step)
      const readUntilHeld = (plate: string) =>
        eventually(
          Effect.map(sources.production.findLocally(plate, {}, now), (read) => {
            const atOnce = sources.production.findAtOnce(plate, {}, now)
            return atOnce === undefined ? undefined : { read, atOnce }
          }),
          `${plate} held in memory`,
          5_000
        )
      const withoutTiming = (local: Local) => local._tag === "Found" ? { ...local, lookup: { ...local.lookup, lookupMs: 0 } } : local
      const vehicle = yield* readUntilHeld(held)
      expect(vehicle.atOnce).toEqual(withoutTiming(vehicle.read))
      expect(vehicle.atOnce).toMatchObject({ _tag: "Found", lookup: { facts: { _tag: "Some", value: { make: "FORD" } }, source: "registry" } })
      const nowhere = yield* readUntilHeld(notHeld)
      expect(nowhere.atOnce).toEqual(withoutTiming(nowhere.read))
      expect(nowhere.atOnce).toMatchObject({ _tag: "Found", lookup: { facts: { _tag: "None" }, source: "none" } })

      // a write of the table forgets what was held at once: read again before it is known at once
      yield* store.importRegistry([registryVehicle(held, { make: "FIAT" })], new Date())
      expect(sources.production.findAtOnce(held, {}, now)).toBeUndefined()
      expect((yield* readUntilHeld(held)).atOnce).toMatchObject({ lookup: { facts: { value: { make: "FIAT" } } } })

      // every sandbox answer is made for its request
      yield* sources.sandbox.findLocally(held, {}, now)
      expect(sources.sandbox.findAtOnce(held, {}, now)).toBeUndefined()
    }))

  it.effect("a query is prepared alike whether its vehicle is read for it or held in memory", () =>
    Effect.gen(function*() {
      const query = yield* VehicleQuery
      const sources = yield* VehicleSources
      const plate = "AC333DE"
      const principal = productionPrincipal("acc_prepare")
      const at = new Date("2026-03-10T12:00:00Z").getTime()
      const prepareAt = Effect.gen(function*() {
        yield* TestClock.setTime(at)
        return yield* query.prepare(principal, plate.toLowerCase(), {})
      }).pipe(Effect.provide(TestClock.layer()))

      // a write forgets what the store held: this query reads the plate
      yield* (yield* VehicleStore).importRegistry([registryVehicle(plate, { make: "TOYOTA" })], new Date())
      expect(sources.production.findAtOnce(plate, {}, at)).toBeUndefined()
      const read = yield* prepareAt
      // then until the store holds it; this query finds it in memory
      yield* eventually(
        Effect.map(sources.production.findLocally(plate, {}, at), () => sources.production.findAtOnce(plate, {}, at)),
        `${plate} held in memory`,
        5_000
      )
      const held = yield* prepareAt
      expect(read).toBeDefined()
      expect(held).toEqual(read)
      expect(held!.response).toMatchObject({ success: true, found: true, data: { plate, make: "TOYOTA" } })
      expect(held!.consumption).toMatchObject({ accountId: "acc_prepare", environment: "production" })
      expect(held!.consumption.charges.length).toBeGreaterThan(0)
      for (const charge of held!.consumption.charges) {
        expect(charge.period.start.getTime()).toBeLessThanOrEqual(at)
        expect(charge.period.end.getTime()).toBeGreaterThan(at)
      }

      // a plain answer only: with debug, it is made in full
      const debug = yield* query.prepare(principal, plate, { debug: true })
      expect(debug?.response.data).toHaveProperty("debug")
    }))

  it.effect("module records: production's registry (none held: total 0), the sandbox's by the plate's scenario", () =>
    Effect.gen(function*() {
      const sources = yield* ModuleSources
      const lookup = { plate: "AB111CD", module: "fines", requested: ["fines"] } as const
      expect(yield* sources.production.fetch(lookup)).toMatchObject({ status: "completed", data: { total: 0, items: [] } })

      // the sandbox waits its simulated latency (SANDBOX_MODULE_LATENCY_MS, 50 in tests) on the test clock
      const fetching = yield* Effect.forkChild(sources.sandbox.fetch(lookup))
      yield* TestClock.adjust("50 millis")
      const answer = yield* Fiber.join(fetching)
      const expected = syntheticModule("AB111CD", "debt", "fines", ["fines"], 50)
      expect(expected).toMatchObject({ _tag: "Data", reducedCoverage: false })
      expect(answer).toEqual({ status: "completed", data: (expected as { data: unknown }).data, error: null, warnings: [] })
      expect((answer.data as { total: number }).total).toBeGreaterThanOrEqual(3) // the debt plate has 3 to 6 fines
    }).pipe(Effect.provide(TestClock.layer())))
})

const cannedVehicle = generateVehicle(PLATE, "canned", "clean").facts

/** Canned sources, each environment's layer counting its builds. */
const builds = { production: 0, sandbox: 0 }
const counted = <A, E, R>(environment: keyof typeof builds, source: Layer.Layer<A, E, R>) =>
  Layer.effectDiscard(Effect.sync(() => void (builds[environment] += 1))).pipe(Layer.provideMerge(source))

const CannedSources = Layer.mergeAll(
  VehicleSources.layer({
    production: counted("production", VehicleSource.Test({ [PLATE]: cannedVehicle, AB333CD: new SourceUnavailable({ reason: "down" }) })),
    sandbox: counted("sandbox", VehicleSource.Test({}))
  }),
  ModuleSources.layer({
    production: ModuleSource.Test({ fines: { total: 0, amountTotal: 0, currency: "ARS", items: [] } }),
    sandbox: ModuleSource.Test({ vtv: new ModuleUnavailable({ message: "down", retryable: true }) })
  })
)

layer(servicesOn(CannedSources), { excludeTestServices: true })("canned sources in the application's place", (it) => {
  it.effect("each environment gets its own source's answer", () =>
    Effect.gen(function*() {
      const production = yield* search("production", PLATE)
      expect(production.data).toEqual({ plate: PLATE, ...cannedVehicle })
      expect(yield* search("sandbox", PLATE)).toEqual({ success: true, found: false, data: null })
    }))

  it.effect("a source down is SourceUnavailable, as the query reports it", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(search("production", "AB333CD"))
      expect(failure).toBeInstanceOf(SourceUnavailable)
    }))

  it.effect("module sources answer canned data or fail as told", () =>
    Effect.gen(function*() {
      const sources = yield* ModuleSources
      expect(yield* sources.production.fetch({ plate: PLATE, module: "fines", requested: ["fines"] })).toMatchObject({
        status: "completed",
        data: { total: 0 }
      })
      const failure = yield* Effect.flip(sources.sandbox.fetch({ plate: PLATE, module: "vtv", requested: ["vtv"] }))
      expect(failure).toMatchObject({ _tag: "ModuleUnavailable", retryable: true })
    }))

  it.effect("each environment's source was built once, with the service, however many queries ran", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 5; i++) yield* search("production", PLATE)
      for (let i = 0; i < 5; i++) yield* search("sandbox", PLATE)
      expect(builds).toEqual({ production: 1, sandbox: 1 })
    }))
})

/** Production knows its one vehicle at once and dies when asked to look further: only the fast path can answer. */
const AT_ONCE_PLATE = "AB444CD"
const atOnceFacts = generateVehicle(AT_ONCE_PLATE, "at-once", "clean").facts
const AtOnceSources = Layer.mergeAll(
  VehicleSources.layer({
    production: Layer.succeed(VehicleSource, {
      findLocally: () => Effect.die(new Error("looked further")),
      findAtOnce: (plate) =>
        plate === AT_ONCE_PLATE
          ? found({ facts: Option.some(atOnceFacts), source: "registry", cache: "hit", lookupMs: 0 })
          : { _tag: "AskSource", ask: () => Effect.die(new Error("asked the source")) },
      search: () => Effect.die(new Error("searched"))
    }),
    sandbox: VehicleSource.Test({})
  }),
  ModuleSources.layer({ production: ModuleSource.Test({}), sandbox: ModuleSource.Test({}) })
)

layer(servicesOn(AtOnceSources), { excludeTestServices: true })("a source that knows its vehicle at once", (it) => {
  const principal = productionPrincipal("acc_at_once")
  const at = new Date("2026-03-10T12:00:00Z").getTime()
  const prepareAt = (plate: string, params: VehicleQueryParams = {}) =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at)
      return yield* (yield* VehicleQuery).prepare(principal, plate, params)
    }).pipe(Effect.provide(TestClock.layer()))

  it.effect("a plain query is answered and charged from it, at the query's instant, without looking further", () =>
    Effect.gen(function*() {
      const prepared = yield* prepareAt(AT_ONCE_PLATE.toLowerCase())
      expect(prepared).toEqual({
        response: { success: true, found: true, data: { plate: AT_ONCE_PLATE, ...atOnceFacts } },
        consumption: Charges.plateQuery(principal, AT_ONCE_PLATE, at)
      })
    }))

  it.effect("a plate the source must be asked for is not prepared, and nothing asks it", () =>
    Effect.gen(function*() {
      expect(yield* prepareAt("AC555DE")).toBeUndefined()
    }))

  it.effect("a query with debug or an enrichment looks further, whatever is known at once", () =>
    Effect.gen(function*() {
      for (const params of [{ debug: true }, { codia: true }] satisfies Array<VehicleQueryParams>) {
        const exit = yield* Effect.exit(prepareAt(AT_ONCE_PLATE, params))
        expect(exit._tag === "Failure" && Cause.pretty(exit.cause)).toContain("looked further")
      }
    }))
})
