/**
 * SQL for operations and their module results.
 */
import { Context, Effect, Layer, Option, Result, Schema, Struct } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import {
  FINAL_STATUSES,
  type FinalStatus,
  type ModuleName,
  type ModuleOutcome,
  type VehicleSearchResult
} from "../../workflows/shared.js"
import { Module } from "../modules/Names.js"
import { PRESENCE_PREFIX } from "../platform/db/Presence.js"
import { Environment } from "../platform/http/RequestContext.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { OperationStatus } from "../contract/Operation.js"
import { VehicleSearchError } from "../vehicles/SearchOperation.js"
import { ModuleErrorJson, ModuleWarningJson } from "./Api.js"
import { countFinished } from "./Metrics.js"
import { ACTIVE_SQL, moduleOrder } from "./sql/operationRow.js"

const OperationKind = Schema.Literals(["modules", "vehicle", "report"])

/** What the workflow needs to run the operation again (after a restart, say). */
export const OperationInput = Schema.Union([
  Schema.Struct({ kind: Schema.Literals(["modules", "report"]), modules: Schema.Array(Module) }),
  Schema.Struct({ kind: Schema.Literal("vehicle"), params: Schema.Record(Schema.String, Schema.Unknown), requestId: Schema.String })
])
export type OperationInput = typeof OperationInput.Type

const VehicleSearchResult = Schema.Union([
  Schema.Struct({ ok: Schema.Literal(true), response: Schema.Unknown }),
  Schema.Struct({ ok: Schema.Literal(false), ...VehicleSearchError.fields })
])

export const OperationRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  kind: OperationKind,
  /** The API the operation was created through: its reuse key and its events' shape. */
  apiVersion: Schema.Literals(["v1", "v2"]),
  plate: Schema.String,
  modulesKey: Schema.NullOr(Schema.String),
  status: OperationStatus,
  input: OperationInput,
  result: Schema.NullOr(VehicleSearchResult),
  startedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type OperationRow = typeof OperationRow.Type

const moduleFields = {
  module: Module,
  status: OperationStatus,
  data: Schema.Unknown,
  error: Schema.NullOr(ModuleErrorJson),
  warnings: Schema.Array(ModuleWarningJson)
}

export const ModuleRow = Schema.Struct({ operationId: Schema.String, ...moduleFields, updatedAt: Schema.Date })
export type ModuleRow = typeof ModuleRow.Type

/** An operation with its module rows (none for a vehicle search). */
export interface OperationWithModules {
  readonly row: OperationRow
  readonly modules: ReadonlyArray<ModuleRow>
}

/** A module row as the operation reads give it (src/operations/sql/operationRow.ts): JSON, names as they are. */
const ModuleJson = Schema.Struct({ operation_id: Schema.String, ...moduleFields, updated_at: Schema.DateFromString })

/** A row of the operation reads (src/operations/sql/): the operation, its module rows as JSON. */
const OperationWithModulesRow = OperationRow.mapFields((fields) => ({ ...fields, modules: Schema.Array(ModuleJson) }))

const withModules = ({ modules, ...row }: typeof OperationWithModulesRow.Type): OperationWithModules => ({
  row,
  modules: modules.map(({ operation_id, updated_at, ...module }) => ({ operationId: operation_id, ...module, updatedAt: updated_at }))
})

/** What identical requests that may share an operation queue on: its reuse key (a report's names no modules). */
export type ReuseLock = Omit<ReuseKey, "modulesKey"> & { readonly modulesKey: string | null }

/** A reuse key as one string: what identical requests share. */
export const reuseKeyText = (key: ReuseLock) => `${key.accountId}/${key.environment}/${key.apiVersion}/${key.plate}/${key.modulesKey}`

/** An operation as a list shows it. */
export const OperationSummaryRow = OperationRow.mapFields(Struct.pick(["id", "kind", "apiVersion", "plate", "status", "createdAt", "updatedAt"]))
export type OperationSummaryRow = typeof OperationSummaryRow.Type

/** What recording a module's outcome did. */
export interface ModuleRecorded {
  /** False when the module already had its outcome: nothing changed. */
  readonly recorded: boolean
  /** The operation's account, when the operation is still active. */
  readonly accountId: string | undefined
}

/** An operation just moved to its final state. */
export interface Finalized {
  readonly kind: OperationRow["kind"]
  readonly accountId: string
  readonly status: FinalStatus
  readonly createdAt: Date
  /** When it was finalised. */
  readonly at: Date
}

export type NewOperation = Omit<OperationRow, "result" | "startedAt" | "updatedAt" | "status">

/** Identical requests (same account, environment, API version, plate and module set) share one active operation. */
export type ReuseKey = Pick<OperationRow, "accountId" | "environment" | "apiVersion" | "plate"> & { readonly modulesKey: string }


const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** Free, ours, lapsed, or held by a process whose presence session is gone (it died). */
  const claimOpenTo = (holder: string) =>
    sql`(claimed_by is null or claimed_by = ${holder} or claimed_until < now()
      or not exists (select 1 from pg_stat_activity where application_name = ${PRESENCE_PREFIX} || claimed_by))`

  const columns = sql.literal(
    "id, account_id, environment, kind, api_version, plate, modules_key, status, input, result, started_at, created_at, updated_at"
  )
  const summaries = SqlRows.findAll("recent operations", OperationSummaryRow)
  const operation = SqlRows.findOneOption("operation", OperationRow)
  const operations = SqlRows.findAll("operations", OperationRow)
  const withTheirModules = SqlRows.findAll("operations with their modules", OperationWithModulesRow)
  const eachWithTheirModules = SqlRows.findEach("operations with their modules", OperationWithModulesRow, (row) => row.id)
  const moduleRows = SqlRows.findAll("operation modules", ModuleRow)
  const moduleRecorded = SqlRows.single("module recorded", Schema.Struct({ recorded: Schema.Boolean, accountId: Schema.NullOr(Schema.String) }))
  const finalized = SqlRows.findOneOption("operation finalized", OperationRow.mapFields(Struct.pick(["kind", "accountId", "createdAt"])))

  return {
    /** The account's operations in `environment`, newest first, optionally of one status and before one. */
    recent: (
      accountId: string,
      environment: Environment,
      status: typeof OperationStatus.Type | undefined,
      limit: number,
      before: Option.Option<string>
    ) =>
      summaries(sql`
        select id, kind, api_version, plate, status, created_at, updated_at from operations
        where account_id = ${accountId} and environment = ${environment}
          ${status === undefined ? sql`` : sql`and status = ${status}`}
          ${
          Option.isSome(before)
            ? sql`and (created_at, id) < (select created_at, id from operations
                where id = ${before.value} and account_id = ${accountId} and environment = ${environment})`
            : sql``
        }
        order by created_at desc, id desc limit ${limit}`).pipe(Effect.orDie),

    /**
     * Creates `operation` in one statement (`vda_create_operation`): unless an identical one is
     * active (with `reuse`, the lock identical requests queue on), its consumption charged with
     * `charge` (Metering's `chargedWithin`) and the operation inserted if the charge fits. The
     * active operation's id, or the charge's rows.
     */
    create: (operation: NewOperation, reuse: ReuseLock | null, charge: Statement.Fragment) =>
      sql<{ readonly activeId: string | null }>`
        select * from vda_create_operation(
          ${reuse === null ? null : reuseKeyText(reuse)}, ${operation.id}, ${operation.accountId}, ${operation.environment},
          ${operation.kind}, ${operation.apiVersion}, ${operation.plate}, ${operation.modulesKey}, ${JSON.stringify(operation.input)}::jsonb,
          ${operation.input.kind === "vehicle" ? null : [...operation.input.modules]}::text[], ${operation.createdAt}, ${charge})`.pipe(
        Effect.map((rows) => {
          const activeId = rows[0]?.activeId
          return typeof activeId === "string" ? { activeId } : { charged: rows as ReadonlyArray<unknown> }
        }),
        Effect.orDie
      ),

    /**
     * The active modules operations with any of these reuse keys, with their module rows, in one
     * statement (`vda_active_modules_operations`: one array per part of the key).
     */
    findActiveModulesMany: (keys: ReadonlyArray<ReuseKey>) =>
      withTheirModules(sql`
        select * from vda_active_modules_operations(
          ${keys.map((key) => key.accountId)}::text[], ${keys.map((key) => key.environment)}::text[],
          ${keys.map((key) => key.apiVersion)}::text[], ${keys.map((key) => key.plate)}::text[],
          ${keys.map((key) => key.modulesKey)}::text[])`).pipe(
        Effect.map((rows) => rows.map(withModules)),
        Effect.orDie
      ),

    findActiveReport: (key: Pick<OperationRow, "accountId" | "environment" | "plate">) =>
      operation(sql`
        select ${columns} from operations
        where account_id = ${key.accountId} and environment = ${key.environment} and plate = ${key.plate}
          and kind = 'report' and status in ${sql.literal(ACTIVE_SQL)}`).pipe(
        Effect.catchTag("MalformedRow", Effect.die)
      ),

    find: (id: string) => operation(sql`select ${columns} from operations where id = ${id}`).pipe(Effect.orDie),

    /** Operations by id with their module rows, in one statement for any number of ids (`vda_operations_by_id`). */
    findManyWithModules: (ids: ReadonlyArray<string>) =>
      withTheirModules(sql`select * from vda_operations_by_id(${ids}::text[])`).pipe(
        Effect.map((rows) => rows.map(withModules)),
        Effect.orDie
      ),

    /**
     * `findManyWithModules` for a batch of polls, by id: each row decoded on its own, so that a
     * malformed one fails only the polls of its operation.
     */
    findEachWithModules: (ids: ReadonlyArray<string>) =>
      eachWithTheirModules(sql`select * from vda_operations_by_id(${ids}::text[])`).pipe(
        Effect.map((rows) => new Map(rows.map(([id, row]) => [id as string, Result.map(row, withModules)] as const))),
        Effect.orDie
      ),

    modules: (id: string) =>
      moduleRows(sql`
        select operation_id, module, status, data, error, warnings, updated_at
        from operation_modules where operation_id = ${id}
        order by ${sql.literal(moduleOrder("module"))}`).pipe(Effect.orDie),

    markStarted: (id: string, at: Date) =>
      sql`update operations set started_at = coalesce(started_at, ${at}) where id = ${id}`.pipe(Effect.asVoid, Effect.orDie),

    // one statement, so one round trip: its two updates commit together
    markProcessing: (id: string, at: Date) =>
      sql`
        with operation as (
          update operations set status = 'processing', updated_at = ${at} where id = ${id} and status = 'queued'
        )
        update operation_modules set status = 'processing', updated_at = ${at}
        where operation_id = ${id} and status = 'queued'`.pipe(Effect.asVoid, Effect.orDie),

    /**
     * Records a module's outcome once: `recorded` is false when the module already had one (a
     * repeated activity changes nothing). `accountId` is the operation's, while it is active.
     */
    recordModule: (id: string, module: ModuleName, outcome: ModuleOutcome, at: Date) =>
      moduleRecorded(sql`
        with recorded as (
          update operation_modules set status = ${outcome.status},
            data = ${outcome.data === null ? null : JSON.stringify(outcome.data)},
            error = ${outcome.error === null ? null : JSON.stringify(outcome.error)},
            warnings = ${JSON.stringify(outcome.warnings)}, updated_at = ${at}
          where operation_id = ${id} and module = ${module} and status in ${sql.literal(ACTIVE_SQL)}
          returning module
        ), active as (
          update operations set updated_at = ${at} where id = ${id} and status in ${sql.literal(ACTIVE_SQL)}
          returning account_id
        )
        select exists (select 1 from recorded) as recorded, (select account_id from active) as account_id`).pipe(
        Effect.map(({ accountId, recorded }): ModuleRecorded => ({ recorded, accountId: accountId ?? undefined })),
        Effect.orDie
      ),

    /** Moves an operation to its final state once; None when it already was final. */
    finalize: (id: string, status: FinalStatus, at: Date, result?: VehicleSearchResult) =>
      finalized(sql`
        update operations set status = ${status}, updated_at = ${at},
          result = coalesce(${result === undefined ? null : JSON.stringify(result)}::jsonb, result)
        where id = ${id} and status not in ${sql.in(FINAL_STATUSES)}
        returning kind, account_id, created_at`).pipe(
        Effect.map(Option.map((row): Finalized => {
          countFinished(row.kind, status, row.createdAt, at)
          return { ...row, status, at }
        })),
        Effect.orDie
      ),

    /**
     * Claims an active operation for `holder` (the inline engine of one process), which starts it
     * (`started_at`, if it was not yet); false if another holds it.
     */
    claim: (id: string, holder: string, ttlMs: number, at: Date) =>
      sql`
        update operations set claimed_by = ${holder}, claimed_until = now() + ${ttlMs} * interval '1 millisecond',
          started_at = coalesce(started_at, ${at})
        where id = ${id} and status in ${sql.literal(ACTIVE_SQL)}
          and ${claimOpenTo(holder)}
        returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

    /** Active operations nobody holds a live claim on, oldest first. */
    claimable: (holder: string) =>
      operations(sql`
        select ${columns} from operations
        where status in ${sql.literal(ACTIVE_SQL)} and ${claimOpenTo(holder)}
        order by created_at`).pipe(Effect.orDie),

    renewClaims: (holder: string, ttlMs: number) =>
      sql`update operations set claimed_until = now() + ${ttlMs} * interval '1 millisecond'
          where claimed_by = ${holder} and status in ${sql.literal(ACTIVE_SQL)}`.pipe(Effect.asVoid, Effect.orDie),

    /** Lets another process take this holder's unfinished work at once (at shutdown). */
    releaseClaims: (holder: string) =>
      sql`update operations set claimed_until = now() where claimed_by = ${holder} and status in ${sql.literal(ACTIVE_SQL)}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    /** Started operations not final yet that have not moved since `before` (oldest first). */
    stale: (before: Date, limit: number) =>
      operations(sql`
        select ${columns} from operations
        where status in ${sql.literal(ACTIVE_SQL)} and started_at is not null and updated_at < ${before}
        order by updated_at limit ${limit}`).pipe(Effect.orDie),

    /** Operations not final yet, oldest first (`unstartedFor`: only those never handed to an engine). */
    unfinished: (options: { readonly unstartedBefore?: Date } = {}) =>
      operations(sql`
        select ${columns} from operations
        where status in ${sql.literal(ACTIVE_SQL)}
          ${options.unstartedBefore ? sql`and started_at is null and created_at < ${options.unstartedBefore}` : sql``}
        order by created_at`).pipe(Effect.orDie)
  }
})

export class OperationsRepo extends Context.Service<OperationsRepo, Effect.Success<typeof make>>()("vda/OperationsRepo", { make }) {
  static readonly layer = Layer.effect(OperationsRepo, make)
}
