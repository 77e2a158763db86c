/**
 * The vehicle store keeps the rows it read in memory, and hears every write of the table: a
 * registry import or an upstream answer stored by another process (here, a second store on the
 * same database, with its own memory) reaches this one as soon as it commits, long before its rows
 * would expire; and when the connection it listens on is lost, it listens again. A store listens
 * from its first read on.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { VEHICLE_CHANGES, VehicleStore } from "../../src/vehicles/Store.js"
import { freshDatabaseLayer } from "../support/Postgres.js"
import { eventually } from "../support/Processes.js"
import { registryVehicle } from "../support/VehicleFixtures.js"

const PLATE = "AB123CD"
const UPSTREAM_PLATE = "AC456EF"
/** Well within the 30 seconds a row is kept while a store does not listen: only a change heard explains a fresh read. */
const HEARD_WITHIN_MS = 5_000

/** A store of its own (its own memory and listener), as another process would have. */
const anotherStore = Effect.gen(function*() {
  const context = yield* Layer.buildWithMemoMap(VehicleStore.layer, yield* Layer.makeMemoMap, yield* Effect.scope)
  return Context.get(context, VehicleStore)
})

/** The backends listening for the table's changes. */
const listeners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ pid: number }>`
    select pid from pg_stat_activity where query ilike ${`listen%${VEHICLE_CHANGES}%`} and state = 'idle'`
  return rows.map((row) => row.pid)
})

/** `read` again until `done` holds of its answer, failing after HEARD_WITHIN_MS. */
const eventuallyHolds = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, what: string) =>
  eventually(Effect.map(read, (answer) => (done(answer) ? answer : undefined)), what, HEARD_WITHIN_MS)

const makeOf = (read: Effect.Effect<{ readonly facts: { readonly make: string } | null } | undefined>) =>
  Effect.map(read, (row) => row?.facts?.make)

layer(freshDatabaseLayer(6), { excludeTestServices: true, timeout: "60 seconds" })("the vehicle store", (it) => {
  it.effect("hears another process's imports and upstream answers at once, and listens again when its connection is lost", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const here = yield* anotherStore
      const there = yield* anotherStore
      // a store listens from its first read on: one that only writes holds no connection for it
      expect(yield* listeners).toEqual([])
      yield* here.find(PLATE)
      yield* there.find(PLATE)
      yield* eventuallyHolds(listeners, (pids) => pids.length === 2, "both stores listening")

      // a registry row read here, then imported again there
      yield* there.importRegistry([registryVehicle(PLATE, { make: "FIAT" })], new Date())
      expect(yield* makeOf(here.find(PLATE))).toBe("FIAT")
      yield* there.importRegistry([registryVehicle(PLATE, { make: "RENAULT" })], new Date())
      expect(yield* eventuallyHolds(makeOf(here.find(PLATE)), (make) => make === "RENAULT", "the second import heard")).toBe("RENAULT")

      // an upstream answer read here, then stored again there
      const facts = (make: string) => {
        const { kind: _kind, plate: _plate, ...rest } = registryVehicle(UPSTREAM_PLATE, { make })
        return rest
      }
      yield* there.cacheUpstream(UPSTREAM_PLATE, facts("PEUGEOT"), new Date())
      expect(yield* makeOf(here.find(UPSTREAM_PLATE))).toBe("PEUGEOT")
      yield* there.cacheUpstream(UPSTREAM_PLATE, facts("CITROEN"), new Date())
      expect(yield* eventuallyHolds(makeOf(here.find(UPSTREAM_PLATE)), (make) => make === "CITROEN", "the second answer heard"))
        .toBe("CITROEN")

      // the listening connections lost: both listen again, and hear the next import
      const lost = yield* listeners
      yield* sql`select pg_terminate_backend(pid) from unnest(${lost}::int[]) as pid`
      yield* eventuallyHolds(listeners, (pids) => pids.length === 2 && pids.every((pid) => !lost.includes(pid)), "both stores listening again")
      expect(yield* makeOf(here.find(PLATE))).toBe("RENAULT")
      yield* there.importRegistry([registryVehicle(PLATE, { make: "TOYOTA" })], new Date())
      expect(yield* eventuallyHolds(makeOf(here.find(PLATE)), (make) => make === "TOYOTA", "the import after the reconnection heard")).toBe("TOYOTA")
    }).pipe(Effect.scoped))
})
