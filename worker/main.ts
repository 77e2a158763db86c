/**
 * The Temporal worker (`npm run worker`): runs the workflows of `workflows/` and the activities
 * of `src/operations/Activities.ts` on the operations and deliveries task queues. Activities run
 * on one ManagedRuntime (database pool, HTTP client, configuration), disposed after the workers
 * stop. SIGINT/SIGTERM drain the workers (in-flight activities get TEMPORAL_WORKER_SHUTDOWN_GRACE_MS)
 * before it exits. Optionally serves its health and metrics (WORKER_ADMIN_PORT), the Temporal
 * SDK's own metrics (WORKER_SDK_METRICS_PORT) and the codec endpoint the Temporal UI uses to show
 * encrypted payloads to operators (CODEC_SERVER_PORT). Traces, when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set, continue the API's: workflow start → workflow → each activity → the activity's own spans.
 */
import { makeTelemetryFilterString, Runtime } from "@temporalio/worker"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { ActivitiesLive } from "../src/ActivitiesLive.js"
import { AppConfig } from "../src/platform/config/Config.js"
import { startCodecServer } from "../src/platform/temporal/CodecServer.js"
import { startupBanner } from "../src/platform/config/ConfigBanner.js"
import { DatabaseLive } from "../src/DatabaseLive.js"
import { LoggingLive } from "../src/platform/observability/Logging.js"
import { causeOfRejection, listening, reportFailure } from "../src/platform/process/Startup.js"
import { MetricsReader, RequestTracer, TelemetryLive } from "../src/platform/observability/Telemetry.js"
import { announceTemporalSecrets, TemporalSecrets, temporalSecretsLayer } from "../src/platform/temporal/TemporalSecrets.js"
import { startWorkerAdmin } from "./Admin.js"
import { sdkLogger } from "./SdkLogger.js"
import { createWorkers, sdkRuntimeOptions, type Workers, workflowCode } from "./Workers.js"

const WorkerServicesLive = ActivitiesLive.pipe(
  Layer.provide(DatabaseLive("cli")),
  Layer.provideMerge(Layer.mergeAll(TelemetryLive({ serviceName: "vehicle-data-worker" }), LoggingLive)),
  // before the database: a missing secret stops the worker before anything else starts
  Layer.provideMerge(temporalSecretsLayer("worker")),
  Layer.provideMerge(AppConfig.layer)
)

const shown = (host: string, port: Option.Option<number>) =>
  Option.match(port, { onNone: () => "off", onSome: (p) => `${host}:${p}` })

const main = async () => {
  const runtime = ManagedRuntime.make(WorkerServicesLive)
  const log = (effect: Effect.Effect<void, never, TemporalSecrets>) => runtime.runPromise(effect)
  const closers: Array<() => Promise<void>> = []
  try {
    const config = await runtime.runPromise(AppConfig)
    const secrets = await runtime.runPromise(TemporalSecrets)
    const temporal = config.temporal
    await log(Effect.annotateLogs(Effect.logInfo("configuration"), startupBanner(config)))
    await log(announceTemporalSecrets)
    // every listener is bound before the worker says it runs, and before the Temporal runtime (which
    // keeps the process alive) is made: a port in use stops it first
    let workers: Workers | undefined
    let adminPort = Option.none<number>()
    const wantedAdminPort = temporal.worker.adminPort
    if (Option.isSome(wantedAdminPort)) {
      const { adminHost } = temporal.worker
      const reader = await runtime.runPromise(MetricsReader)
      const admin = await listening("WORKER_ADMIN_PORT", adminHost, wantedAdminPort.value, () =>
        startWorkerAdmin({ host: adminHost, port: wantedAdminPort.value, states: () => workers?.states() ?? {}, reader }))
      closers.push(admin.close)
      adminPort = Option.some(admin.port)
    }
    let codecPort = Option.none<number>()
    const { codec, codecServerToken } = secrets
    if (Option.isSome(codec) && Option.isSome(codecServerToken)) {
      const { corsOrigins, host, port } = temporal.codecServer
      const server = await listening("CODEC_SERVER_PORT", host, port, () =>
        startCodecServer({ codec: codec.value, host, port, corsOrigins, token: Redacted.value(codecServerToken.value) }))
      closers.push(server.close)
      codecPort = Option.some(server.port)
    }

    // before any connection: the runtime is made with the first one
    const sdk = sdkRuntimeOptions(temporal.worker)
    Runtime.install({
      ...sdk,
      logger: sdkLogger(config.logFormat, config.logLevel),
      // the native core's own lines too, from warnings up, through the same logger
      telemetryOptions: { ...sdk.telemetryOptions, logging: { forward: {}, filter: makeTelemetryFilterString({ core: "WARN" }) } }
    })
    const tracer = await runtime.runPromise(RequestTracer)

    workers = await createWorkers({
      config,
      secrets,
      runtime,
      workflowBundle: await workflowCode(process.env.VDA_WORKFLOW_BUNDLE)
    })
    if (workers.unregistered.length > 0) {
      await log(Effect.logWarning(`search attributes not registered (register them as an operator): ${workers.unregistered.join("; ")}`))
    }
    await log(Effect.logInfo([
      `worker polling ${temporal.taskQueues.operations} and ${temporal.taskQueues.deliveries} on ${temporal.address} (namespace ${temporal.namespace})`,
      `payloads ${secrets.payloads}`,
      `TLS ${temporal.connection.tls || Option.isSome(temporal.connection.apiKey) ? "on" : "off"}`,
      `health and metrics ${shown(temporal.worker.adminHost, adminPort)}`,
      `SDK metrics ${shown(temporal.worker.adminHost, temporal.worker.sdkMetricsPort)}`,
      `tracing ${Option.isSome(tracer) ? "on" : "off"}`,
      `codec endpoint ${Option.match(codecPort, { onNone: () => "off", onSome: (port) => `http://${temporal.codecServer.host}:${port} (token required)` })}`
    ].join(", ")))
    await workers.run()
  } finally {
    for (const close of closers) await close()
    await runtime.dispose()
  }
}

// the Temporal runtime's native threads may keep the process alive: exit explicitly (the log is flushed on exit)
main().catch((error) => {
  reportFailure(causeOfRejection(error))
  process.exit(1)
})
