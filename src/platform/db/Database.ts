/**
 * PostgreSQL: the given server (`DATABASE_URL`) or an embedded one under `DATA_DIR`, with the
 * migrations applied and the functions installed (DatabaseFunctions.ts) before anything else is
 * built.
 */
import { NodeServices } from "@effect/platform-node"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Context, Effect, Layer, Metric, Option, Redacted, Schema, String as Str } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { AppConfig } from "../config/Config.js"
import { maskUrl } from "../config/ConfigBanner.js"
import { type DatabaseFunction, installFunctions } from "./DatabaseFunctions.js"
import { otherSessions, startCluster, stopCluster } from "./EmbeddedPostgres.js"
import { NonNegativeInt } from "../contract/Schemas.js"
import * as SqlRows from "./SqlRows.js"
import { describeCause, type StartupError, startupError } from "../process/Startup.js"
import { labelSets, onScrape, updateUnsafe } from "../observability/Telemetry.js"
import migration0001 from "./migrations/0001_foundation.js"
import migration0002 from "./migrations/0002_vehicles_catalog.js"
import migration0003 from "./migrations/0003_metering_functions.js"
import migration0004 from "./migrations/0004_operations.js"
import migration0005 from "./migrations/0005_webhooks.js"
import migration0006 from "./migrations/0006_leases.js"
import migration0007 from "./migrations/0007_claims.js"
import migration0008 from "./migrations/0008_api_versions.js"
import migration0009 from "./migrations/0009_deliveries_when_disabled.js"
import migration0010 from "./migrations/0010_reports.js"
import migration0011 from "./migrations/0011_admit_and_consume.js"
import migration0012 from "./migrations/0012_delivery_trace_parent.js"
import migration0013 from "./migrations/0013_delivery_series.js"
import migration0014 from "./migrations/0014_console.js"
import migration0015 from "./migrations/0015_admission_by_counter.js"
import migration0016 from "./migrations/0016_operation_reads.js"
import migration0017 from "./migrations/0017_admission_by_batch_totals.js"
import migration0018 from "./migrations/0018_account_status_read.js"
import migration0019 from "./migrations/0019_database_functions.js"
import migration0020 from "./migrations/0020_admission_without_subtransactions.js"

export const migrations = {
  "0001_foundation": migration0001,
  "0002_vehicles_catalog": migration0002,
  "0003_metering_functions": migration0003,
  "0004_operations": migration0004,
  "0005_webhooks": migration0005,
  "0006_leases": migration0006,
  "0007_claims": migration0007,
  "0008_api_versions": migration0008,
  "0009_deliveries_when_disabled": migration0009,
  "0010_reports": migration0010,
  "0011_admit_and_consume": migration0011,
  "0012_delivery_trace_parent": migration0012,
  "0013_delivery_series": migration0013,
  "0014_console": migration0014,
  "0015_admission_by_counter": migration0015,
  "0016_operation_reads": migration0016,
  "0017_admission_by_batch_totals": migration0017,
  "0018_account_status_read": migration0018,
  "0019_database_functions": migration0019,
  "0020_admission_without_subtransactions": migration0020
}

/** Where the database is, and whether it is the embedded one this process manages. */
export class DatabaseLocation extends Context.Service<DatabaseLocation, {
  readonly url: Redacted.Redacted<string>
  readonly embedded: boolean
}>()("vda/DatabaseLocation") {}

const URL_FORM = "use postgres://USER:PASSWORD@HOST:5432/DATABASE"

/** DATABASE_URL as the operator can read it: its password masked. */
const shownUrl = (url: Redacted.Redacted<string>) => maskUrl(Redacted.value(url))

const checkedUrl = (url: Redacted.Redacted<string>) => {
  let parsed: URL | undefined
  try {
    parsed = new URL(Redacted.value(url))
  } catch {
    return Effect.fail(startupError("DATABASE_URL", "<not a URL>", "not a PostgreSQL URL", URL_FORM))
  }
  return parsed.protocol === "postgres:" || parsed.protocol === "postgresql:"
    ? Effect.succeed(url)
    : Effect.fail(startupError("DATABASE_URL", shownUrl(url), `${parsed.protocol} is not a PostgreSQL URL`, URL_FORM))
}

/** The server refused this user or has no such database. */
const isRefusedLogin = (error: SqlError.SqlError) =>
  error.reason._tag === "AuthenticationError" || sqlStateOf(error) === "3D000"

/** The PostgreSQL error code (SQLSTATE) behind a failure, when the server gave one. */
const sqlStateOf = (error: SqlError.SqlError): string | undefined => {
  const code = (error.reason.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/**
 * `server`: the API owns the embedded PostgreSQL and stops it on shutdown, even one it adopted from
 * a killed predecessor. `cli`: a command stops only a server it started itself, and only when
 * nobody else (a running API) is connected to it.
 */
export type EmbeddedRole = "server" | "cli"

export const makeDatabaseLocation = (role: EmbeddedRole) =>
  Layer.effect(
    DatabaseLocation,
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (Option.isSome(config.databaseUrl)) return { url: yield* checkedUrl(config.databaseUrl.value), embedded: false }
      const services = yield* Effect.context<never>()
      const log = (message: string) => Effect.runSyncWith(services)(Effect.logInfo(message))
      const cluster = yield* Effect.acquireRelease(
        Effect.tryPromise(() => startCluster({ dataDir: config.dataDir, log })).pipe(Effect.orDie),
        Effect.fnUntraced(function*(cluster) {
          if (role === "cli") {
            if (!cluster.startedHere) return
            const others = yield* Effect.promise(() => otherSessions(cluster).catch(() => 0))
            if (others > 0) return
          }
          yield* Effect.promise(() => stopCluster(cluster))
          yield* Effect.logInfo("embedded PostgreSQL stopped")
        })
      )
      return { url: Redacted.make(cluster.url("postgres")), embedded: true }
    })
  )

/**
 * How long PostgreSQL may keep a request waiting (DESIGN §12): a statement, a lock, and a
 * connection from the pool. Past them the request gets 503 with Retry-After, never a hang.
 */
export interface DatabaseTimeouts {
  readonly statementMs: number
  readonly lockMs: number
  readonly acquireMs: number
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = { statementMs: 5_000, lockMs: 2_000, acquireMs: 2_000 }

const poolConnections = Metric.gauge("vda_db_pool_connections", { description: "This process's database connections, in use or idle" })
const poolState = labelSets("state")

/** This process's connections' name on the server: how the pool's gauges find them. */
const applicationNameOf = () => `vehicle-data-api/${process.pid}`

const PoolCounts = SqlRows.single("pool connections", Schema.Struct({ inUse: NonNegativeInt, idle: NonNegativeInt }))

/**
 * The pool's gauges, read at each scrape from the server's own view of this process's
 * connections (the driver keeps no counts of its own). Unregistered when the scope closes.
 */
const watchPool = Effect.fnUntraced(function*(sql: SqlClient.SqlClient) {
  const services = yield* Effect.context<never>()
  const read = PoolCounts(sql`
    select count(*) filter (where state <> 'idle')::int as in_use, count(*) filter (where state = 'idle')::int as idle
    from pg_stat_activity where application_name = ${applicationNameOf()} and pid <> pg_backend_pid()`)
  const unwatch = onScrape(() =>
    Effect.runPromiseWith(services)(read).then((counts) => {
      // the scrape's own statement holds one connection: it is not the application's
      updateUnsafe(poolConnections, counts.inUse, poolState("in_use"))
      updateUnsafe(poolConnections, counts.idle + 1, poolState("idle"))
    }))
  yield* Effect.addFinalizer(() => Effect.sync(unwatch))
})

/** Result names as our SQL client gives them (snake_case columns to camelCase fields). */
const RESULT_NAMES = Str.snakeToCamel
/** JSON columns hold API shapes (snake_case module names, sandbox_seed…): their names are kept verbatim. */
const TRANSFORM_JSON = false

/**
 * A pool on the given URL with our naming conventions (snake_case columns, camelCase fields) and
 * the timeouts every connection applies: a statement, a lock, and the connection's opening. The
 * driver prepares and caches every statement, so the hot batch statements are parsed once per
 * connection.
 */
export const pgClientLayer = (
  url: Redacted.Redacted<string>,
  maxConnections: number,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS
) =>
  Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, watchPool)).pipe(
    Layer.provideMerge(PgClient.layer({
      url,
      maxConnections,
      idleTimeout: "30 seconds",
      connectTimeout: `${timeouts.acquireMs} millis`,
      applicationName: applicationNameOf(),
      startupParameters: { statement_timeout: String(timeouts.statementMs), lock_timeout: String(timeouts.lockMs) },
      transformQueryNames: Str.camelToSnake,
      transformResultNames: RESULT_NAMES,
      transformJson: TRANSFORM_JSON
    }))
  )

/** The migrations, then the functions (each feature's, from the composition root) installed from their sources. */
export const makeMigratorLive = (functions: ReadonlyArray<DatabaseFunction>) =>
  Layer.effectDiscard(
    PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) }).pipe(Effect.andThen(installFunctions(functions)))
  ).pipe(Layer.provide(NodeServices.layer))

const PgLive = Layer.unwrap(
  Effect.gen(function*() {
    const location = yield* DatabaseLocation
    const config = yield* AppConfig
    return pgClientLayer(location.url, config.dbPoolMax, config.databaseTimeouts)
  })
)

/**
 * The first connection fails at the migrations: a database that cannot be reached or refuses us
 * stops the process with the one line of its setting.
 */
const asStartupError = Effect.fnUntraced(function*<E>(error: E) {
    if (!SqlError.isSqlError(error) || !(isUnavailable(error) || isRefusedLogin(error))) return error as E | StartupError
    const location = yield* DatabaseLocation
    const remedy = location.embedded
      ? "the embedded PostgreSQL did not answer; see its server.log under DATA_DIR"
      : "check that PostgreSQL runs there and takes this user, password and database"
    return startupError(
      location.embedded ? "DATA_DIR" : "DATABASE_URL",
      location.embedded ? (yield* AppConfig).dataDir : shownUrl(location.url),
      `cannot connect to the database (${describeCause(error)})`,
      remedy
    )
  })

const makeMigratedLive = (functions: ReadonlyArray<DatabaseFunction>) =>
  Layer.catch(
    makeMigratorLive(functions),
    (error) => Layer.effectDiscard(Effect.flatMap(asStartupError(error), (failure) => Effect.fail(failure)))
  )

/** SqlClient on a migrated database with `functions` installed; also exposes where it is. */
export const makeDatabaseLive = (role: EmbeddedRole, functions: ReadonlyArray<DatabaseFunction>) =>
  makeMigratedLive(functions).pipe(
    Layer.provideMerge(PgLive),
    Layer.provideMerge(makeDatabaseLocation(role))
  )

const UNAVAILABLE_NODE_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"
])

/** Whether a statement gave up waiting for a lock (`lock_timeout`, as the driver classifies it). */
export const isLockTimeout = (error: unknown): boolean =>
  SqlError.isSqlError(error) && error.reason._tag === "LockTimeoutError"

/**
 * Whether a database failure means "the database is unreachable right now" (503, retryable)
 * rather than a bug (500): connection failures, terminated sessions, a server starting or
 * shutting down, too many connections, a statement or lock that timed out.
 */
export const isUnavailable = (error: SqlError.SqlError): boolean => {
  const reason = error.reason
  if (reason._tag === "ConnectionError" || reason._tag === "LockTimeoutError" || reason._tag === "StatementTimeoutError") return true
  const code = sqlStateOf(error) ?? ""
  const message = typeof (reason.cause as { message?: unknown } | undefined)?.message === "string"
    ? (reason.cause as { message: string }).message
    : reason.message
  return UNAVAILABLE_NODE_CODES.has(code) ||
    code.startsWith("08") || // connection exception class
    code === "57P01" || code === "57P02" || code === "57P03" || // admin/crash shutdown, cannot connect now
    code === "53300" || // too many connections
    /terminated|timeout|not queryable|connection/i.test(message)
}

