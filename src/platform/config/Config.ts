/**
 * Every setting the service reads, in one place. Documented in the configuration reference in
 * docs/operations.md.
 */
import { Config, ConfigProvider, Context, Effect, Layer, type LogLevel, Option, Redacted } from "effect"
import { DEFAULT_BODY_LIMITS } from "../http/RequestInput.js"
import { ACTIVITY_TIMEOUTS } from "../sandboxSafe/ActivityTimeouts.js"
import { DELIVERY_RETRY, type RetryPolicy, SOURCE_RETRY } from "../sandboxSafe/RetryPolicy.js"
import { DEFAULT_TASK_QUEUE, taskQueuesOf } from "../sandboxSafe/TaskQueues.js"

/** `config`, refused with `message` when `valid` does not hold for its value. */
const validated = <A>(message: string, valid: (value: A) => boolean) => (config: Config.Config<A>) =>
  Config.mapEffect(config, (value) =>
    valid(value) ? Effect.succeed(value) : Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message }))))

const PORT_MESSAGE = "expected a port number between 0 and 65535"
const isPort = (n: number) => Number.isInteger(n) && n >= 0 && n <= 65535

const port = (name: string, fallback: number) =>
  Config.Int(name).pipe(Config.withDefault(fallback), validated(`${name}: ${PORT_MESSAGE}`, isPort))

const optionalPort = (name: string) =>
  Config.option(Config.Int(name).pipe(validated(`${name}: ${PORT_MESSAGE}`, isPort)))

/** What an activity's timeout keeps for the bookkeeping around its call. */
const ACTIVITY_ROOM_MS = 5_000

const positiveInt = (name: string, fallback: number) =>
  Config.Int(name).pipe(Config.withDefault(fallback), validated(`${name}: expected a positive integer`, (n) => n > 0))

const milliseconds = (name: string, fallback: number) =>
  Config.Int(name).pipe(Config.withDefault(fallback), validated(`${name}: expected milliseconds >= 0`, (n) => n >= 0))

const optionalUrl = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Config.map(Option.filter((url) => url.length > 0)),
    validated(`${name}: expected an http(s) URL`, Option.match({ onNone: () => true, onSome: (url) => /^https?:\/\/\S+$/.test(url) }))
  )

const optionalString = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map(Option.filter((value) => value.length > 0)))

const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((value) => Redacted.value(value).length > 0)))

const temporal = Effect.gen(function*() {
  const taskQueue = yield* Config.String("TEMPORAL_TASK_QUEUE").pipe(Config.withDefault(DEFAULT_TASK_QUEUE))
  const derived = taskQueuesOf(taskQueue)
  return {
    address: yield* Config.String("TEMPORAL_ADDRESS").pipe(Config.withDefault("localhost:7233")),
    namespace: yield* Config.String("TEMPORAL_NAMESPACE").pipe(Config.withDefault("default")),
    taskQueues: {
      operations: yield* Config.String("TEMPORAL_OPERATIONS_TASK_QUEUE").pipe(Config.withDefault(derived.operations)),
      deliveries: yield* Config.String("TEMPORAL_DELIVERIES_TASK_QUEUE").pipe(Config.withDefault(derived.deliveries))
    },
    /** How long a request may wait on a workflow start before leaving it to the reconciler. */
    startTimeoutMs: yield* positiveInt("TEMPORAL_START_TIMEOUT_MS", 2_000),
    reconcileIntervalMs: yield* positiveInt("TEMPORAL_RECONCILE_INTERVAL_MS", 5_000),
    /** A workflow whose operation or delivery has not moved for this long is checked on the server. */
    staleAfterMs: yield* positiveInt("TEMPORAL_STALE_AFTER_MS", 30_000),
    connection: {
      tls: yield* Config.Boolean("TEMPORAL_TLS").pipe(Config.withDefault(false)),
      serverName: yield* optionalString("TEMPORAL_TLS_SERVER_NAME"),
      caFile: yield* optionalString("TEMPORAL_TLS_CA_FILE"),
      certFile: yield* optionalString("TEMPORAL_TLS_CERT_FILE"),
      keyFile: yield* optionalString("TEMPORAL_TLS_KEY_FILE"),
      apiKey: yield* optionalSecret("TEMPORAL_API_KEY")
    },
    /** `encrypted` (always, unless set to `clear` on purpose). */
    payloads: yield* Config.Literals(["encrypted", "clear"], "TEMPORAL_PAYLOADS").pipe(Config.withDefault("encrypted" as const)),
    /** `keyId:base64key,…`: payloads are encrypted with the first key; every key decrypts (resolved in TemporalSecrets). */
    codecKeys: yield* optionalSecret("TEMPORAL_CODEC_KEYS"),
    worker: {
      maxConcurrentActivities: yield* positiveInt("TEMPORAL_WORKER_MAX_CONCURRENT_ACTIVITIES", 100),
      maxConcurrentWorkflowTasks: yield* positiveInt("TEMPORAL_WORKER_MAX_CONCURRENT_WORKFLOW_TASKS", 40),
      shutdownGraceMs: yield* milliseconds("TEMPORAL_WORKER_SHUTDOWN_GRACE_MS", 30_000),
      registerSearchAttributes: yield* Config.Boolean("TEMPORAL_REGISTER_SEARCH_ATTRIBUTES").pipe(Config.withDefault(true)),
      adminHost: yield* Config.String("WORKER_ADMIN_HOST").pipe(Config.withDefault("127.0.0.1")),
      adminPort: yield* optionalPort("WORKER_ADMIN_PORT"),
      /** The Temporal SDK's own metrics (Prometheus), on WORKER_ADMIN_HOST. */
      sdkMetricsPort: yield* optionalPort("WORKER_SDK_METRICS_PORT")
    },
    codecServer: {
      host: yield* Config.String("CODEC_SERVER_HOST").pipe(Config.withDefault("127.0.0.1")),
      port: yield* port("CODEC_SERVER_PORT", 8888),
      corsOrigins: yield* Config.String("CODEC_SERVER_CORS_ORIGINS").pipe(
        Config.withDefault("http://localhost:8233"),
        Config.map((list) => list.split(",").map((o) => o.trim()).filter((o) => o.length > 0))
      ),
      token: yield* optionalSecret("CODEC_SERVER_TOKEN")
    }
  }
})

/** `json` (one JSON object per line) or `pretty`; by default pretty on a terminal, JSON otherwise. */
export const logFormat = Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(
  Config.withDefault(process.stdout.isTTY ? "pretty" as const : "json" as const)
)

/** Traces, metrics and the admin listener: what the people who run the service watch it with. */
const telemetry = Config.all({
    /** OTLP/HTTP base address (traces go to `<endpoint>/v1/traces`); unset: no tracing at all. */
    otlpEndpoint: optionalUrl("OTEL_EXPORTER_OTLP_ENDPOINT"),
    /** Unset: each process names itself (`vehicle-data-api`, `vehicle-data-worker`). */
    serviceName: optionalString("OTEL_SERVICE_NAME"),
    /** The admin listener (`/metrics`): never one of the public ports, loopback by default. */
    adminHost: Config.String("ADMIN_HOST").pipe(Config.withDefault("127.0.0.1")),
    adminPort: port("ADMIN_PORT", 9464)
  })

export type TelemetryConfig = Effect.Success<typeof telemetry>

const LOG_LEVELS: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["error", "Error"], ["warn", "Warn"], ["warning", "Warn"], ["info", "Info"], ["debug", "Debug"], ["trace", "Trace"],
  ["fatal", "Fatal"], ["all", "All"], ["none", "None"]
]

const logLevel = Config.String("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapEffect((raw) => {
    const level = LOG_LEVELS.find(([name]) => name === raw.toLowerCase())?.[1]
    return level !== undefined
      ? Effect.succeed(level)
      : Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: `LOG_LEVEL: unknown log level "${raw}" (use error, warn, info or debug)` })))
  })
)

/** The account console: where its sign-in links point, and how long links and sessions last. */
const consoleConfig = Config.all({
  /** The base address clients reach each listener at (for sign-in links); local ports by default. */
  publicUrl: optionalUrl("PUBLIC_URL"),
  sandboxPublicUrl: optionalUrl("SANDBOX_PUBLIC_URL"),
  linkTtlMs: milliseconds("CONSOLE_LINK_TTL_MS", 15 * 60_000),
  sessionIdleMs: milliseconds("CONSOLE_SESSION_IDLE_MS", 30 * 60_000),
  sessionMaxMs: milliseconds("CONSOLE_SESSION_MAX_MS", 12 * 3600_000),
  /** Failed sign-in attempts (bad links opened or submitted) per client address and minute. */
  signInFailuresPerMinute: positiveInt("CONSOLE_SIGN_IN_FAILURES_PER_MINUTE", 10)
})

/** Reads every setting from the environment (the current ConfigProvider). */
const make = Effect.gen(function*() {
  return {
    host: yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
    port: yield* port("PORT", 8080),
    sandboxPort: yield* port("SANDBOX_PORT", 8081),
    http: yield* Config.all({
      headersTimeoutMs: positiveInt("HTTP_HEADERS_TIMEOUT_MS", 10_000),
      requestTimeoutMs: positiveInt("HTTP_REQUEST_TIMEOUT_MS", 30_000),
      keepAliveTimeoutMs: positiveInt("HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000),
      maxHeaderBytes: positiveInt("HTTP_MAX_HEADER_BYTES", 16 * 1024)
    }).pipe(validated(
      "HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)",
      (http) => http.headersTimeoutMs <= http.requestTimeoutMs
    )),
    requestBody: {
      maxBytes: yield* positiveInt("REQUEST_BODY_MAX_BYTES", DEFAULT_BODY_LIMITS.maxBytes),
      maxDepth: yield* positiveInt("REQUEST_JSON_MAX_DEPTH", DEFAULT_BODY_LIMITS.maxDepth)
    },
    databaseUrl: yield* Config.option(Config.Redacted("DATABASE_URL")).pipe(
      Config.map(Option.filter((url) => Redacted.value(url).length > 0))
    ),
    dataDir: yield* Config.String("DATA_DIR").pipe(Config.withDefault(".data")),
    dbPoolMax: yield* positiveInt("DB_POOL_MAX", 10),
    /** API processes sharing the listeners (node:cluster); 1 runs the API in this process. */
    apiProcesses: yield* positiveInt("API_PROCESSES", 1),
    databaseTimeouts: {
      statementMs: yield* positiveInt("DB_STATEMENT_TIMEOUT_MS", 5_000),
      lockMs: yield* positiveInt("DB_LOCK_TIMEOUT_MS", 2_000),
      acquireMs: yield* positiveInt("DB_ACQUIRE_TIMEOUT_MS", 2_000)
    },
    logLevel: yield* logLevel,
    logFormat: yield* logFormat,
    /** One line per request at info; off where a proxy in front already keeps access logs. */
    accessLog: yield* Config.Boolean("ACCESS_LOG").pipe(Config.withDefault(true)),
    telemetry: yield* telemetry,
    vehicleUpstreamUrl: yield* optionalUrl("VEHICLE_UPSTREAM_URL"),
    moduleUpstreamUrls: {
      fines: yield* optionalUrl("FINES_UPSTREAM_URL"),
      vtv: yield* optionalUrl("VTV_UPSTREAM_URL"),
      tax_debt: yield* optionalUrl("TAX_DEBT_UPSTREAM_URL"),
      gnc: yield* optionalUrl("GNC_UPSTREAM_URL")
    },
    /** Calls to upstream sources: each call's total deadline and body cap, and their circuit breakers. */
    upstream: yield* Config.all({
      vehicleTimeoutMs: positiveInt("VEHICLE_UPSTREAM_TIMEOUT_MS", 3_000),
      moduleTimeoutMs: positiveInt("MODULE_UPSTREAM_TIMEOUT_MS", 8_000),
      maxBodyBytes: positiveInt("UPSTREAM_MAX_BODY_BYTES", 1024 * 1024),
      breakerFailures: positiveInt("UPSTREAM_BREAKER_FAILURES", 5),
      breakerCooldownMs: positiveInt("UPSTREAM_BREAKER_COOLDOWN_MS", 30_000)
    }).pipe(validated(
      `VEHICLE_UPSTREAM_TIMEOUT_MS and MODULE_UPSTREAM_TIMEOUT_MS must be at most ${
        (ACTIVITY_TIMEOUTS.sourceMs - ACTIVITY_ROOM_MS) / 1000
      } s (a source activity has ${ACTIVITY_TIMEOUTS.sourceMs / 1000} s, bookkeeping included)`,
      (u) => Math.max(u.vehicleTimeoutMs, u.moduleTimeoutMs) <= ACTIVITY_TIMEOUTS.sourceMs - ACTIVITY_ROOM_MS
    )),
    workflowEngine: yield* Config.Literals(["inline", "temporal"], "WORKFLOW_ENGINE").pipe(Config.withDefault("inline" as const)),
    /** Inline engine: how long a process's claim on its running work outlives its last renewal. */
    inlineClaimTtlMs: yield* positiveInt("INLINE_CLAIM_TTL_MS", 30_000),
    temporal: yield* temporal,
    /** Keys the plate's hash in workflow ids and search attributes (resolved in TemporalSecrets). */
    plateHashSalt: yield* optionalSecret("PLATE_HASH_SALT"),
    /** Module and vehicle-source lookups: 3 attempts, backing off from this first delay. */
    sourceRetry: {
      ...SOURCE_RETRY,
      initialIntervalMs: yield* milliseconds("SOURCE_RETRY_INITIAL_MS", SOURCE_RETRY.initialIntervalMs)
    } satisfies RetryPolicy,
    /** Development and tests only: lifts the public-address check of webhook URLs (not HTTPS). */
    webhookAllowPrivateNetworks: yield* Config.Boolean("WEBHOOK_ALLOW_PRIVATE_NETWORKS").pipe(Config.withDefault(false)),
    /** Webhook deliveries: always 5 attempts; the delays are configurable for tests. */
    webhookRetry: {
      maximumAttempts: DELIVERY_RETRY.maximumAttempts,
      initialIntervalMs: yield* milliseconds("WEBHOOK_RETRY_INITIAL_MS", DELIVERY_RETRY.initialIntervalMs),
      backoffCoefficient: yield* Config.Number("WEBHOOK_RETRY_COEFFICIENT").pipe(
        Config.withDefault(DELIVERY_RETRY.backoffCoefficient),
        validated("WEBHOOK_RETRY_COEFFICIENT: expected a number >= 1", (n) => n >= 1)
      ),
      maximumIntervalMs: yield* milliseconds("WEBHOOK_RETRY_MAX_MS", DELIVERY_RETRY.maximumIntervalMs)
    } satisfies RetryPolicy,
    /** One webhook attempt: its total deadline and how much of the answer is read. */
    webhookAttempt: yield* Config.all({
      timeoutMs: positiveInt("WEBHOOK_TIMEOUT_MS", 10_000),
      responseMaxBytes: positiveInt("WEBHOOK_RESPONSE_MAX_BYTES", 64 * 1024)
    }).pipe(validated(
      `WEBHOOK_TIMEOUT_MS must be at most ${(ACTIVITY_TIMEOUTS.deliveryMs - ACTIVITY_ROOM_MS) / 1000} s (a delivery activity has ${
        ACTIVITY_TIMEOUTS.deliveryMs / 1000
      } s, bookkeeping included)`,
      (w) => w.timeoutMs <= ACTIVITY_TIMEOUTS.deliveryMs - ACTIVITY_ROOM_MS
    )),
    /** Reverse proxies in front of the listeners whose X-Forwarded-For and -Proto are believed. */
    trustedProxyHops: yield* Config.Int("TRUSTED_PROXY_HOPS").pipe(
      Config.withDefault(0),
      validated("TRUSTED_PROXY_HOPS: expected a number of proxies between 0 and 10", (n) => n >= 0 && n <= 10)
    ),
    /** After SIGTERM: how long in-flight requests may take before their connections are cut. */
    shutdownDrainMs: yield* positiveInt("SHUTDOWN_DRAIN_MS", 10_000),
    sandboxLatencyMs: yield* milliseconds("SANDBOX_MODULE_LATENCY_MS", 1500),
    webhookDeliveryRetentionDays: yield* positiveInt("WEBHOOK_DELIVERY_RETENTION_DAYS", 30),
    console: yield* consoleConfig
  }
})

/** The settings as a value (what `yield* AppConfig` gives). */
export type AppConfigShape = Effect.Success<typeof make>

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("vda/AppConfig", { make }) {
  static readonly layer = Layer.effect(AppConfig, make)
}
