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
import { Clock, Context, Data, Effect, Layer, Option, Result } from "effect"
import { isFinal, MODULES, type ModuleName, modulesKey } from "../../workflows/shared.js"
import { type DuplicateModule, requestedModules, type UnsupportedModule } from "../modules/Names.js"
import type { Principal } from "../principal/Domain.js"
import * as Charges from "../metering/Charges.js"
import { type Consumption, Metering } from "../metering/Metering.js"
import { countCommitted, countReused } from "../metering/Outcomes.js"
import type { ApiVersion } from "../metering/Meters.js"
import * as Batcher from "../platform/batching/Batcher.js"
import { ulid } from "../platform/ids/Ids.js"
import { RequestId } from "../platform/http/RequestContext.js"
import type { VehicleQueryParams } from "../vehicles/Api.js"
import { normalizePlate } from "../vehicles/Plates.js"
import type { VehicleOperation } from "../vehicles/SearchOperation.js"
import { moduleResultOf, type ModuleResults, type ModulesOperation, type Operation } from "./Api.js"
import {
  type ModuleRow,
  type NewOperation,
  type OperationRow,
  OperationsRepo,
  type OperationWithModules,
  type ReuseKey,
  type ReuseLock,
  reuseKeyText
} from "./Repo.js"
import { perObject } from "../platform/caching/PerObject.js"
import { setBounded } from "../platform/caching/Bounded.js"
import { WorkflowEngine } from "./WorkflowEngine.js"

/** A modules request as checked for a principal: its plate, its modules in canonical order, its reuse key. */
interface ModulesRequestChecked {
  readonly plate: string
  readonly modules: ReadonlyArray<ModuleName>
  readonly key: ReuseKey
}

/**
 * How many settled operations a process keeps to answer their polls without a read, oldest out
 * first (a report with its four modules' results is a few KB).
 */
const FINALS_MAX = 1024

export class InvalidModulesPlate extends Data.TaggedError("InvalidModulesPlate")<{ readonly raw: string }> {}
export class ModuleNotEnabled extends Data.TaggedError("ModuleNotEnabled")<{ readonly modules: ReadonlyArray<string> }> {}
export class OperationNotFound extends Data.TaggedError("OperationNotFound")<{ readonly id: string }> {}

export interface Created<A> {
  readonly operation: A
  /** False when an active identical operation was reused (nothing charged). */
  readonly created: boolean
}

/** The Operation resource as the spec shapes it. */
export const toOperation = (row: OperationRow, modules: ReadonlyArray<ModuleRow>): Operation => {
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
    results[module] = moduleResultOf(m)
  }
  return { ...common, kind: "modules", modules: results as ModuleResults } satisfies ModulesOperation
}

/** An operation read with its module rows, as the spec shapes it. */
const operationOf = ({ modules, row }: OperationWithModules): Operation => toOperation(row, row.kind === "modules" ? modules : [])

/**
 * A just-committed operation as it stands (queued, every module queued), built from what was
 * committed rather than read back: once charged, the client gets its answer even if the database
 * has just gone away.
 */
const justCommitted = (row: NewOperation): { row: OperationRow; modules: Array<ModuleRow> } => ({
  row: { ...row, status: "queued", result: null, startedAt: null, updatedAt: row.createdAt },
  modules: row.input.kind === "vehicle"
    ? []
    : row.input.modules.map((module) => ({
      operationId: row.id,
      module,
      status: "queued",
      data: null,
      error: null,
      warnings: [],
      updatedAt: row.createdAt
    }))
})

const POLL_LANES = 4

/**
 * The first line of an operation's log, once it is committed (never for a reuse): its kind, id,
 * account and modules. No plate: the operation id is what ties its lines together.
 */
const logCreated = (row: NewOperation) =>
  Effect.logInfo("operation created").pipe(Effect.annotateLogs({
    operationId: row.id,
    accountId: row.accountId,
    environment: row.environment,
    kind: row.kind,
    apiVersion: row.apiVersion,
    ...(row.input.kind === "vehicle" ? {} : { modules: row.input.modules.join(",") })
  }))

/** Why a modules request is refused before anything is read or charged. */
type ModulesRefusal = InvalidModulesPlate | UnsupportedModule | DuplicateModule | ModuleNotEnabled

const make = Effect.gen(function*() {
  const repo = yield* OperationsRepo
  const metering = yield* Metering
  const engine = yield* WorkflowEngine

  const requireWithModules = (id: string) =>
    Effect.flatMap(repo.findManyWithModules([id]), ([found]) =>
      found === undefined ? Effect.die(new Error(`operation ${id} vanished`)) : Effect.succeed(found))
  const requireOperation = (id: string) => Effect.map(requireWithModules(id), operationOf)

  const validateModules = (
    principal: Principal,
    requested: ReadonlyArray<string>
  ): Result.Result<ReadonlyArray<ModuleName>, Exclude<ModulesRefusal, InvalidModulesPlate>> =>
    Result.flatMap(requestedModules(requested), (modules) => {
      const disabled = modules.filter((m) => !principal.entitlements.enabledModules.includes(m))
      return disabled.length > 0 ? Result.fail(new ModuleNotEnabled({ modules: disabled })) : Result.succeed(modules)
    })

  /**
   * `row` created, in one statement, unless an identical operation is active (with `reuse`): the
   * active one's id, or undefined once `row` is inserted and charged. A refused charge fails with
   * `LimitReached`, nothing created.
   */
  const create = Effect.fnUntraced(function*(row: NewOperation, reuse: ReuseLock | null, consumption: Consumption) {
    const charge = metering.chargedWithin([consumption])
    const created = yield* repo.create(row, reuse, charge.arguments)
    if ("activeId" in created) return created.activeId
    const [decision] = yield* charge.decisions(created.charged)
    if (decision && Result.isFailure(decision)) return yield* Effect.fail(decision.failure)
    return undefined
  })

  /** A modules request checked for `principal`: its plate, its modules in canonical order, its reuse key. */
  const modulesRequestOf = (
    principal: Principal,
    rawPlate: string,
    requested: ReadonlyArray<string>,
    apiVersion: ApiVersion
  ): Result.Result<ModulesRequestChecked, ModulesRefusal> => {
    const plate = normalizePlate(rawPlate)
    if (plate === undefined) return Result.fail(new InvalidModulesPlate({ raw: rawPlate }))
    return Result.map(validateModules(principal, requested), (modules) => {
      const key: ReuseKey = { accountId: principal.accountId, environment: principal.environment, apiVersion, plate, modulesKey: modulesKey(modules) }
      return { plate, modules, key }
    })
  }

  /** An operation as the spec shapes it, once per batched read (each batch reads new objects). */
  const shapedOf = perObject(operationOf)

  // Reads of the active operation an identical request reuses (the common case when clients
  // retry or poll by POSTing) are batched per account, as polls are: one read for many requests.
  const reuseReads = yield* Batcher.make({
    key: (key: ReuseKey) => key.accountId,
    process: (_lane, keys) =>
      Effect.map(repo.findActiveModulesMany([...new Map(keys.map((key) => [reuseKeyText(key), key])).values()]), (found) => {
        const byKey = new Map(found.map((active) => [reuseKeyText(active.row), shapedOf(active) as ModulesOperation]))
        return keys.map((key) => Result.succeed(Option.fromNullishOr(byKey.get(reuseKeyText(key)))))
      })
  })

  /** Counts a reuse of the active identical operation, if there is one. */
  const countedReuse = (key: ReuseKey) => (running: Option.Option<ModulesOperation>) => {
    if (Option.isSome(running)) countReused(key.environment)
    return running
  }

  /** The active identical operation, reused (nothing charged), if there is one. */
  const runningTwin = (key: ReuseKey) => Effect.map(reuseReads.submit(key), countedReuse(key))

  const createModules = Effect.fnUntraced(function*(principal: Principal, rawPlate: string, requested: ReadonlyArray<string>, apiVersion: ApiVersion = "v2") {
    const { key, modules, plate } = yield* Effect.fromResult(modulesRequestOf(principal, rawPlate, requested, apiVersion))
    // reused from a plain read, without queueing on the lock below
    const running = yield* runningTwin(key)
    if (Option.isSome(running)) return { operation: running.value, created: false }
    const at = yield* Clock.currentTimeMillis
    const id = `op_${yield* ulid}`
    const row: NewOperation = { id, ...key, kind: "modules", input: { kind: "modules", modules }, createdAt: new Date(at) }
    // once committed the operation is durable: if the client leaves before the engine has it,
    // the engine's sweep (inline) or reconciler (Temporal) starts it
    const reused = yield* countCommitted(key.environment)(
      create(row, key, Charges.moduleQueries(principal, modules, at, apiVersion)),
      (id) => id === undefined
    )
    if (reused !== undefined) {
      countReused(key.environment)
      return { operation: (yield* requireOperation(reused)) as ModulesOperation, created: false }
    }
    yield* logCreated(row)
    yield* engine.start({ kind: "modules", operationId: id, accountId: key.accountId, environment: key.environment, plate, modules })
    const committed = justCommitted(row)
    return { operation: toOperation(committed.row, committed.modules) as ModulesOperation, created: true } satisfies Created<ModulesOperation>
  })

  /**
   * A v1 report: the vehicle and every module enabled for the account. Reuses the active report
   * for the same plate (nothing charged), else charges everything at once and starts it.
   */
  const createReport = Effect.fnUntraced(function*(principal: Principal, rawPlate: string) {
    const plate = normalizePlate(rawPlate)
    if (plate === undefined) return yield* new InvalidModulesPlate({ raw: rawPlate })
    const modules = MODULES.filter((m) => principal.entitlements.enabledModules.includes(m))
    const key = { accountId: principal.accountId, environment: principal.environment, plate }
    // an active report for the plate: reused from a plain read, as modules operations are
    const running = yield* repo.findActiveReport(key).pipe(Effect.catchTag("SqlError", Effect.die))
    if (Option.isSome(running)) {
      countReused(key.environment)
      return { row: running.value, modules: yield* repo.modules(running.value.id), created: false }
    }
    const at = yield* Clock.currentTimeMillis
    const id = `rep_${yield* ulid}`
    const row: NewOperation = {
      id, ...key, kind: "report", apiVersion: "v1", modulesKey: null, input: { kind: "report", modules }, createdAt: new Date(at)
    }
    const reused = yield* countCommitted(key.environment)(
      create(row, { ...key, apiVersion: "v1", modulesKey: "report" }, Charges.report(principal, plate, modules, at)),
      (active) => active === undefined
    )
    if (reused !== undefined) {
      countReused(key.environment)
      return { ...(yield* requireWithModules(reused)), created: false }
    }
    yield* logCreated(row)
    yield* engine.start({ kind: "report", operationId: id, accountId: key.accountId, environment: key.environment, plate, modules })
    return { ...justCommitted(row), created: true }
  })

  /** The caller's own report, with its module rows. */
  const getReport = (principal: Principal, id: string) => pollOwn(principal, id, (r) => r.kind === "report")

  /** A vehicle search for `onMiss=search`: one plate query charged now, answered by the workflow. */
  const createVehicleSearch = Effect.fnUntraced(function*(principal: Principal, plate: string, params: VehicleQueryParams) {
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
    yield* countCommitted(principal.environment)(create(search, null, Charges.plateQuery(principal, plate, at)), () => true)
    yield* logCreated(search)
    yield* engine.start({ kind: "vehicle", operationId: id, accountId: principal.accountId, environment: principal.environment, plate })
    return toOperation(justCommitted(search).row, []) as VehicleOperation
  })

  // Polls, the most frequent reads, are batched: concurrent polls (of any operations) share one
  // read of the operations and one of their modules, and the polls of one operation its answer.
  const polls = yield* Batcher.make({
    key: Batcher.spreadOver(POLL_LANES),
    process: (_lane, ids) =>
      Effect.map(repo.findEachWithModules([...new Set(ids)]), (found) =>
        ids.map((id) => {
          const polled = found.get(id)
          return polled === undefined ? Result.succeed(Option.none()) : Result.map(polled, Option.some)
        }))
  })

  // A final operation (and its modules, final before it) never changes again: every later write
  // is for active ones (Repo), and operations are never deleted. So a poll of one this process
  // has read is answered without reading it again.
  const finals = new Map<string, OperationWithModules>()
  const isSettled = ({ modules, row }: OperationWithModules) => isFinal(row.status) && modules.every((m) => isFinal(m.status))

  /** An operation as a poll reads it: from `finals`, or in the next batched read. */
  const polled = (id: string) => {
    const final = finals.get(id)
    if (final !== undefined) return Effect.succeed(Option.some(final))
    return Effect.map(Effect.catchTag(polls.submit(id), "MalformedRow", Effect.die), (found) => {
      if (Option.isSome(found) && isSettled(found.value)) setBounded(finals, FINALS_MAX, id, found.value)
      return found
    })
  }

  /** Whether an operation is the caller's: its account and environment. */
  const isOwn = (principal: Principal, row: OperationRow) =>
    row.accountId === principal.accountId && row.environment === principal.environment

  /**
   * The caller's own operation (as polled) of the kind `accept` takes, with its module rows;
   * anything else is indistinguishable from a missing one.
   */
  const pollOwn = (principal: Principal, id: string, accept: (row: OperationRow) => boolean) =>
    Effect.flatMap(polled(id), (found) =>
      Option.isSome(found) && isOwn(principal, found.value.row) && accept(found.value.row)
        ? Effect.succeed(found.value)
        : Effect.fail(new OperationNotFound({ id })))

  // a report is v1's resource, polled at /v1/reports/:id
  const isOperation = (row: OperationRow) => row.kind !== "report"

  /** The caller's own operation. */
  const get = (principal: Principal, id: string) => Effect.map(pollOwn(principal, id, isOperation), shapedOf)

  /** The caller's own modules operation created through `apiVersion` (v1 polls only its own). */
  const getModules = (principal: Principal, id: string, apiVersion: ApiVersion) =>
    Effect.map(
      pollOwn(principal, id, (r) => r.kind === "modules" && r.apiVersion === apiVersion),
      (polled) => shapedOf(polled) as ModulesOperation
    )

  return {
    createModules,
    createVehicleSearch,
    createReport,
    get,
    getModules,
    getReport
  }
})

export class Operations extends Context.Service<Operations, Effect.Success<typeof make>>()("vda/Operations", { make }) {
  static readonly layer = Layer.effect(Operations, make).pipe(Layer.provide(OperationsRepo.layer))
}
