/**
 * Operations: created (or reused) atomically with their metering, handed to the workflow engine,
 * and read back for polling.
 *
 * Creating a modules operation is one transaction: reuse the active operation with the same
 * account, environment, plate and exact module set if there is one (nothing charged); otherwise
 * charge N module queries and insert the operation. Identical requests take a transaction lock on
 * their reuse key first, so they are decided one after the other: the later one reuses the earlier
 * one's operation, even at the quota's edge. The partial unique index on active operations stays
 * as the guarantee behind it.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Either, Option } from "effect"
import { MODULES, type ModuleName, modulesKey } from "../../workflows/shared.js"
import type { Principal } from "../accounts/Domain.js"
import * as Charges from "../metering/Charges.js"
import { type LimitReached, Metering } from "../metering/Metering.js"
import type { ApiVersion } from "../metering/Meters.js"
import { ulid } from "../platform/Ids.js"
import { RequestId } from "../platform/RequestContext.js"
import type { VehicleQueryParams } from "../vehicles/Api.js"
import { normalizePlate } from "../vehicles/Plates.js"
import type { ModuleResults, ModulesOperation, Operation, VehicleOperation } from "./Api.js"
import { type NewOperation, type OperationRow, OperationsRepo, type ReuseKey } from "./Repo.js"
import { WorkflowEngine } from "./WorkflowEngine.js"

export class InvalidModulesPlate extends Data.TaggedError("InvalidModulesPlate")<{ readonly raw: string }> {}
export class UnsupportedModule extends Data.TaggedError("UnsupportedModule")<{ readonly modules: ReadonlyArray<string> }> {}
export class DuplicateModule extends Data.TaggedError("DuplicateModule")<{ readonly modules: ReadonlyArray<string> }> {}
export class ModuleNotEnabled extends Data.TaggedError("ModuleNotEnabled")<{ readonly modules: ReadonlyArray<string> }> {}
export class OperationNotFound extends Data.TaggedError("OperationNotFound")<{ readonly id: string }> {}

/** An identical operation became active while ours was being created: use that one. */
class LostRace extends Data.TaggedError("LostRace") {}

export interface Created<A> {
  readonly operation: A
  /** False when an active identical operation was reused (nothing charged). */
  readonly created: boolean
}

const isModule = (name: string): name is ModuleName => (MODULES as ReadonlyArray<string>).includes(name)

/** The Operation resource as the spec shapes it. */
export const toOperation = (row: OperationRow, modules: ReadonlyArray<import("./Repo.js").ModuleRow>): Operation => {
  const common = {
    id: row.id,
    status: row.status,
    plate: row.plate,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  }
  if (row.kind === "vehicle") {
    const result = row.result === null
      ? null
      : row.result.ok
      ? (row.result.response as VehicleOperation["result"])
      : { error: row.result.error }
    return { ...common, kind: "vehicle", result } satisfies VehicleOperation
  }
  const results: Record<string, unknown> = {}
  for (const module of MODULES) {
    const m = modules.find((r) => r.module === module)
    if (m === undefined) continue
    results[module] = {
      status: m.status,
      data: m.data ?? null,
      error: m.error ?? null,
      ...(m.warnings.length > 0 ? { warnings: m.warnings } : {})
    }
  }
  return { ...common, kind: "modules", modules: results as ModuleResults } satisfies ModulesOperation
}

export class Operations extends Effect.Service<Operations>()("vda/Operations", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* OperationsRepo
    const metering = yield* Metering
    const engine = yield* WorkflowEngine

    const read = (id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        if (Option.isNone(row)) return Option.none<Operation>()
        return Option.some(toOperation(row.value, row.value.kind === "modules" ? yield* repo.modules(id) : []))
      })

    const requireOperation = (id: string) =>
      Effect.flatMap(read(id), Option.match({
        onNone: () => Effect.die(new Error(`operation ${id} vanished`)),
        onSome: Effect.succeed
      }))

    const validateModules = (principal: Principal, requested: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const unknown = requested.filter((m) => !isModule(m))
        if (unknown.length > 0) return yield* new UnsupportedModule({ modules: unknown })
        const repeated = requested.filter((m, i) => requested.indexOf(m) !== i)
        if (repeated.length > 0) return yield* new DuplicateModule({ modules: [...new Set(repeated)] })
        const modules = MODULES.filter((m) => requested.includes(m))
        const disabled = modules.filter((m) => !principal.entitlements.enabledModules.includes(m))
        if (disabled.length > 0) return yield* new ModuleNotEnabled({ modules: disabled })
        return modules
      })

    /** Charges and inserts in the current transaction; fails with LostRace on a concurrent twin. */
    const chargeAndInsert = (operation: NewOperation, consumption: Parameters<typeof metering.applyBatch>[0][number]) =>
      Effect.gen(function*() {
        const [decision] = yield* metering.applyBatch([consumption])
        if (decision && Either.isLeft(decision)) return yield* Effect.fail(decision.left)
        if (!(yield* repo.insert(operation))) return yield* new LostRace()
      })

    const createModules = (principal: Principal, rawPlate: string, requested: ReadonlyArray<string>, apiVersion: ApiVersion = "v2") =>
      Effect.gen(function*() {
        const plate = normalizePlate(rawPlate)
        if (plate === undefined) return yield* new InvalidModulesPlate({ raw: rawPlate })
        const modules = yield* validateModules(principal, requested)
        const key: ReuseKey = { accountId: principal.accountId, environment: principal.environment, apiVersion, plate, modulesKey: modulesKey(modules) }
        const at = yield* Clock.currentTimeMillis
        const id = `op_${yield* ulid}`
        const attempt: Effect.Effect<string | undefined, LimitReached | LostRace> = Effect.gen(function*() {
          // identical requests queue here, in every process: the second sees the first's operation
          // (reuse is decided before quota, and the unique index is never raced)
          yield* repo.lockReuseKey(key)
          const active = yield* repo.findActiveModules(key)
          if (Option.isSome(active)) return active.value.id
          yield* chargeAndInsert(
            { id, ...key, kind: "modules", input: { kind: "modules", modules }, createdAt: new Date(at) },
            Charges.moduleQueries(principal, modules, at, apiVersion)
          )
          return undefined
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        // once committed the operation is durable: if the client leaves before the engine has it,
        // the engine's sweep (inline) or reconciler (Temporal) starts it
        const reused = yield* attempt.pipe(Effect.catchTag("LostRace", Effect.die))
        if (reused !== undefined) {
          return { operation: (yield* requireOperation(reused)) as ModulesOperation, created: false }
        }
        yield* engine.start({ kind: "modules", operationId: id, accountId: key.accountId, environment: key.environment, plate, modules })
        // answered from what was committed, not read back: once charged, the client gets its 202
        // even if the database has just gone away
        const createdAt = new Date(at)
        const operation = toOperation(
          { id, ...key, kind: "modules", status: "queued", input: { kind: "modules", modules }, result: null, startedAt: null, createdAt, updatedAt: createdAt },
          modules.map((module) => ({ operationId: id, module, status: "queued", data: null, error: null, warnings: [], updatedAt: createdAt }))
        ) as ModulesOperation
        return { operation, created: true } satisfies Created<ModulesOperation>
      })

    /**
     * A v1 report: the vehicle and every module enabled for the account. Reuses the active report
     * for the same plate (nothing charged), else charges everything at once and starts it.
     */
    const createReport = (principal: Principal, rawPlate: string) =>
      Effect.gen(function*() {
        const plate = normalizePlate(rawPlate)
        if (plate === undefined) return yield* new InvalidModulesPlate({ raw: rawPlate })
        const modules = MODULES.filter((m) => principal.entitlements.enabledModules.includes(m))
        const key = { accountId: principal.accountId, environment: principal.environment, plate }
        const at = yield* Clock.currentTimeMillis
        const id = `rep_${yield* ulid}`
        const createdAt = new Date(at)
        const row: NewOperation = {
          id, ...key, kind: "report", apiVersion: "v1", modulesKey: null, input: { kind: "report", modules }, createdAt
        }
        const reused = yield* Effect.gen(function*() {
          yield* repo.lockReuseKey({ ...key, apiVersion: "v1", modulesKey: "report" })
          const active = yield* repo.findActiveReport(key)
          if (Option.isSome(active)) return active.value
          yield* chargeAndInsert(row, Charges.report(principal, plate, modules, at))
          return undefined
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("LostRace", Effect.die))
        if (reused !== undefined) return { row: reused, modules: yield* repo.modules(reused.id), created: false }
        yield* engine.start({ kind: "report", operationId: id, accountId: key.accountId, environment: key.environment, plate, modules })
        return {
          row: { ...row, status: "queued" as const, result: null, startedAt: null, updatedAt: createdAt },
          modules: modules.map((module) => ({ operationId: id, module, status: "queued" as const, data: null, error: null, warnings: [], updatedAt: createdAt })),
          created: true
        }
      })

    /** The caller's own report, with its module rows. */
    const getReport = (principal: Principal, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        if (Option.isNone(row) || row.value.accountId !== principal.accountId || row.value.environment !== principal.environment || row.value.kind !== "report") {
          return yield* new OperationNotFound({ id })
        }
        return { row: row.value, modules: yield* repo.modules(id) }
      })

    /** A vehicle search for `onMiss=search`: one plate query charged now, answered by the workflow. */
    const createVehicleSearch = (principal: Principal, plate: string, params: VehicleQueryParams) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const id = `op_${yield* ulid}`
        const requestId = yield* RequestId
        const search: NewOperation = {
          id,
          accountId: principal.accountId,
          environment: principal.environment,
          plate,
          modulesKey: null,
          kind: "vehicle",
          apiVersion: "v2",
          input: { kind: "vehicle", params: { ...params }, requestId },
          createdAt: new Date(at)
        }
        yield* chargeAndInsert(search, Charges.plateQuery(principal, plate, at)).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("LostRace", Effect.die))
        yield* engine.start({ kind: "vehicle", operationId: id, accountId: principal.accountId, environment: principal.environment, plate })
        return toOperation(
          { ...search, status: "queued", result: null, startedAt: null, updatedAt: search.createdAt },
          []
        ) as VehicleOperation
      })

    /** The caller's own operation; anything else is indistinguishable from a missing one. */
    const get = (principal: Principal, id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        if (
          Option.isNone(row) || row.value.accountId !== principal.accountId || row.value.environment !== principal.environment ||
          row.value.kind === "report" // v1's resource: polled at /v1/reports/:id
        ) {
          return yield* new OperationNotFound({ id })
        }
        return toOperation(row.value, row.value.kind === "modules" ? yield* repo.modules(id) : [])
      })

    /** The caller's own modules operation created through `apiVersion` (v1 polls only its own). */
    const getModules = (principal: Principal, id: string, apiVersion: ApiVersion) =>
      Effect.gen(function*() {
        const row = yield* repo.find(id)
        if (
          Option.isNone(row) || row.value.accountId !== principal.accountId || row.value.environment !== principal.environment ||
          row.value.kind !== "modules" || row.value.apiVersion !== apiVersion
        ) {
          return yield* new OperationNotFound({ id })
        }
        return toOperation(row.value, yield* repo.modules(id)) as ModulesOperation
      })

    return { createModules, createVehicleSearch, createReport, get, getModules, getReport }
  }),
  dependencies: [OperationsRepo.Default]
}) {}
