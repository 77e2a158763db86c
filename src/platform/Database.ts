/**
 * PostgreSQL: the given server (`DATABASE_URL`) or an embedded one under `DATA_DIR`, with the
 * migrations applied before anything else is built.
 */
import { NodeContext } from "@effect/platform-node"
import * as Statement from "@effect/sql/Statement"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Context, Effect, Layer, Metric, Option, Redacted, Runtime, String as Str } from "effect"
import Pg from "pg"
import { AppConfig } from "./Config.js"
import { maskUrl } from "./ConfigBanner.js"
import { otherSessions, startCluster, stopCluster } from "./EmbeddedPostgres.js"
import { describeCause, type StartupError, startupError } from "./Startup.js"
import { labelSets, onScrape } from "./Telemetry.js"
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
  "0018_account_status_read": migration0018
}

/** Where the database is, and whether it is the embedded one this process manages. */
export class DatabaseLocation extends Context.Tag("vda/DatabaseLocation")<DatabaseLocation, {
  readonly url: Redacted.Redacted<string>
  readonly embedded: boolean
}>() {}

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

/** pg's codes for a server that refuses this user or has no such database. */
const isRefusedLogin = (error: SqlError) => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && (code.startsWith("28") || code === "3D000")
}

/**
 * `server`: the API owns the embedded PostgreSQL and stops it on shutdown, even one it adopted from
 * a killed predecessor. `cli`: a command stops only a server it started itself, and only when
 * nobody else (a running API) is connected to it.
 */
export type EmbeddedRole = "server" | "cli"

export const makeDatabaseLocation = (role: EmbeddedRole) =>
  Layer.scoped(
    DatabaseLocation,
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (Option.isSome(config.databaseUrl)) return { url: yield* checkedUrl(config.databaseUrl.value), embedded: false }
      const runtime = yield* Effect.runtime<never>()
      const log = (message: string) => Runtime.runSync(runtime)(Effect.logInfo(message))
      const cluster = yield* Effect.acquireRelease(
        Effect.tryPromise(() => startCluster({ dataDir: config.dataDir, log })).pipe(Effect.orDie),
        (cluster) =>
          Effect.gen(function*() {
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

const poolConnections = Metric.gauge("vda_db_pool_connections", { description: "The database pool's connections, in use or idle" })
const poolWaiting = Metric.gauge("vda_db_pool_waiting", { description: "Queries waiting for a free database connection" })
const poolState = labelSets("state")

/** The pool's gauges, read at each scrape until the returned function is called. */
const watchPool = (pool: Pg.Pool) =>
  onScrape(() => {
    poolConnections.unsafeUpdate(pool.totalCount - pool.idleCount, poolState("in_use"))
    poolConnections.unsafeUpdate(pool.idleCount, poolState("idle"))
    poolWaiting.unsafeUpdate(pool.waitingCount, [])
  })

/** Result names as our SQL client gives them (snake_case columns to camelCase fields). */
const RESULT_NAMES = Str.snakeToCamel
/** JSON columns hold API shapes (snake_case module names, sandbox_seed…): their names are kept verbatim. */
const TRANSFORM_JSON = false
const rowsWithResultNames = Statement.defaultTransforms(RESULT_NAMES, TRANSFORM_JSON).array

/**
 * Named statements on the SQL client's own pool. The client sends every statement unnamed, so
 * PostgreSQL parses and plans it on each run; a named one is parsed once per connection, and then
 * only bound. For the statements every admission batch runs.
 */
export class PreparedStatements extends Context.Tag("vda/PreparedStatements")<PreparedStatements, {
  /** Runs `text`, named after it; rows with the SQL client's result names. */
  readonly execute: <A extends object>(text: string, values: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, SqlError>
}>() {}

const preparedOn = (pool: Pg.Pool): PreparedStatements["Type"] => {
  // a name per text: a connection holds each name for one text only
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) names.set(text, name = `vda_${names.size + 1}`)
    return name
  }
  return {
    execute: <A extends object>(text: string, values: ReadonlyArray<unknown>) =>
      Effect.async<ReadonlyArray<A>, SqlError>((resume) => {
        pool.query({ name: nameOf(text), text, values: values as Array<unknown> }, (cause, result) =>
          resume(cause ? Effect.fail(new SqlError({ cause, message: "Failed to execute statement" })) : Effect.succeed(rowsWithResultNames(result.rows) as ReadonlyArray<A>)))
      })
  }
}

/**
 * A pool on the given URL with our naming conventions (snake_case columns, camelCase fields):
 * the SQL client, and the pool's prepared statements.
 */
export const pgClientLayer = (
  url: Redacted.Redacted<string>,
  maxConnections: number,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS
) =>
  Layer.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          connectionString: Redacted.value(url),
          max: maxConnections,
          idleTimeoutMillis: 30_000,
          // also how long a request waits for a free connection
          connectionTimeoutMillis: timeouts.acquireMs,
          statement_timeout: timeouts.statementMs,
          lock_timeout: timeouts.lockMs,
          application_name: "vehicle-data-api"
        })
        pool.on("error", () => {}) // an idle client's error: the next query reports it
        return { pool, unwatch: watchPool(pool) }
      }),
      ({ pool, unwatch }) => Effect.zipRight(Effect.sync(unwatch), Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1_000)))
    ),
    ({ pool }) =>
      Layer.merge(
        PgClient.layerFromPool({
          acquire: Effect.succeed(pool),
          transformQueryNames: Str.camelToSnake,
          transformResultNames: RESULT_NAMES,
          transformJson: TRANSFORM_JSON
        }),
        Layer.succeed(PreparedStatements, preparedOn(pool))
      )
  ))

export const MigratorLive = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer)
)

const PgLive = Layer.unwrapEffect(
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
const asStartupError = <E>(error: E) =>
  Effect.gen(function*() {
    if (!(error instanceof SqlError) || !(isUnavailable(error) || isRefusedLogin(error))) return error as E | StartupError
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

const MigratedLive = MigratorLive.pipe(
  Layer.catchAll((error) => Layer.unwrapEffect(Effect.map(asStartupError(error), Layer.fail)))
)

/** SqlClient on a migrated database; also exposes where it is. */
export const makeDatabaseLive = (role: EmbeddedRole) =>
  MigratedLive.pipe(
    Layer.provideMerge(PgLive),
    Layer.provideMerge(makeDatabaseLocation(role))
  )

const UNAVAILABLE_NODE_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"
])

/**
 * Whether a database failure means "the database is unreachable right now" (503, retryable)
 * rather than a bug (500): connection failures, terminated sessions, a server starting or
 * shutting down, too many connections.
 */
export const isUnavailable = (error: SqlError): boolean => {
  if (/connection/i.test(error.message)) return true
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  if (cause === undefined || cause === null) return false
  const code = typeof cause.code === "string" ? cause.code : ""
  const message = typeof cause.message === "string" ? cause.message : ""
  return UNAVAILABLE_NODE_CODES.has(code) ||
    code.startsWith("08") || // connection exception class
    code === "57P01" || code === "57P02" || code === "57P03" || // admin/crash shutdown, cannot connect now
    code === "53300" || // too many connections
    code === "57014" || // statement timeout
    code === "55P03" || // lock timeout
    /terminated|timeout|not queryable|connection/i.test(message)
}
