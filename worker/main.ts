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
import { ActivitiesLive } from "../src/Http.js"
import { AppConfig, DEVELOPMENT_PLATE_HASH_SALT } from "../src/platform/Config.js"
import { startCodecServer } from "../src/platform/CodecServer.js"
import { describeConfig } from "../src/platform/ConfigBanner.js"
import { makeDatabaseLive } from "../src/platform/Database.js"
import { LoggingLive } from "../src/platform/Logging.js"
import { payloadCodecOf } from "../src/platform/Temporal.js"
import { MetricsReader, RequestTracer, TelemetryLive } from "../src/platform/Telemetry.js"
import { startWorkerAdmin } from "./Admin.js"
import { sdkLogger } from "./SdkLogger.js"
import { createWorkers, sdkRuntimeOptions, workflowCode } from "./Workers.js"

const WorkerServicesLive = ActivitiesLive.pipe(
  Layer.provide(makeDatabaseLive("cli")),
  Layer.provideMerge(Layer.mergeAll(TelemetryLive({ serviceName: "vehicle-data-worker" }), LoggingLive)),
  Layer.provideMerge(AppConfig.Default)
)

const listening = (host: string, port: Option.Option<number>) =>
  Option.match(port, { onNone: () => "off", onSome: (p) => `${host}:${p}` })

const main = async () => {
  const runtime = ManagedRuntime.make(WorkerServicesLive)
  const log = (effect: Effect.Effect<void>) => runtime.runPromise(effect)
  const closers: Array<() => Promise<void>> = []
  try {
    const config = await runtime.runPromise(AppConfig)
    const temporal = config.temporal
    await log(Effect.annotateLogs(Effect.logInfo("configuration"), describeConfig(config)))
    // before any connection: the runtime is made with the first one
    const sdk = sdkRuntimeOptions(temporal.worker)
    Runtime.install({
      ...sdk,
      logger: sdkLogger(config.logFormat, config.logLevel),
      // the native core's own lines too, from warnings up, through the same logger
      telemetryOptions: { ...sdk.telemetryOptions, logging: { forward: {}, filter: makeTelemetryFilterString({ core: "WARN" }) } }
    })
    const tracer = await runtime.runPromise(RequestTracer)
    const workers = await createWorkers({
      config,
      runtime,
      workflowBundle: await workflowCode(process.env.VDA_WORKFLOW_BUNDLE)
    })
    if (workers.unregistered.length > 0) {
      await log(Effect.logWarning(`search attributes not registered (register them as an operator): ${workers.unregistered.join("; ")}`))
    }
    if (Option.isSome(temporal.worker.adminPort)) {
      const admin = await startWorkerAdmin({
        host: temporal.worker.adminHost,
        port: temporal.worker.adminPort.value,
        states: workers.states,
        reader: await runtime.runPromise(MetricsReader)
      })
      closers.push(admin.close)
    }
    const codec = payloadCodecOf(temporal)
    if (Option.isSome(temporal.codecServer.port) && Option.isSome(codec)) {
      const server = await startCodecServer({
        codec: codec.value,
        host: temporal.codecServer.host,
        port: temporal.codecServer.port.value,
        corsOrigins: temporal.codecServer.corsOrigins,
        token: Option.getOrUndefined(Option.map(temporal.codecServer.token, Redacted.value))
      })
      closers.push(server.close)
    }
    await log(Effect.logInfo([
      `worker polling ${temporal.taskQueues.operations} and ${temporal.taskQueues.deliveries} on ${temporal.address} (namespace ${temporal.namespace})`,
      `payload encryption ${Option.isSome(codec) ? "on" : "off"}`,
      `TLS ${temporal.connection.tls || Option.isSome(temporal.connection.apiKey) ? "on" : "off"}`,
      `health and metrics ${listening(temporal.worker.adminHost, temporal.worker.adminPort)}`,
      `SDK metrics ${listening(temporal.worker.adminHost, temporal.worker.sdkMetricsPort)}`,
      `tracing ${Option.isSome(tracer) ? "on" : "off"}`,
      `codec endpoint ${Option.isSome(codec) ? listening(temporal.codecServer.host, temporal.codecServer.port) : "off"}`
    ].join(", ")))
    if (Redacted.value(config.plateHashSalt) === DEVELOPMENT_PLATE_HASH_SALT) {
      await log(Effect.logWarning("PLATE_HASH_SALT is not set: plate hashes use the development salt"))
    }
    await workers.run()
  } finally {
    for (const close of closers) await close()
    await runtime.dispose()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
