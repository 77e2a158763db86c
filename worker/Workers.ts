/**
 * The worker processes' Temporal side: one connection, and one Temporal worker per task queue
 * (operations, deliveries), each running every workflow and activity of this project so either
 * queue can be scaled on its own. Used by `worker/main.ts` and by the live tests.
 */
import { bundleWorkflowCode, NativeConnection, type RuntimeOptions, Worker } from "@temporalio/worker"
import { Effect, type ManagedRuntime, Option } from "effect"
import type { OperationActivities } from "../src/operations/Activities.js"
import type { AppConfigShape } from "../src/platform/config/Config.js"
import { projectRoot } from "../src/platform/process/Paths.js"
import { workflowSources as sourcesOf } from "../src/platform/process/workflowSources.js"
import { describeCause, startupError } from "../src/platform/process/Startup.js"
import { RequestTracer, SpanPipeline } from "../src/platform/observability/Telemetry.js"
import { connectionOptionsOf, dataConverterOf } from "../src/platform/temporal/Temporal.js"
import type { TemporalSecretsShape } from "../src/platform/temporal/TemporalSecrets.js"
import { createActivities } from "./Activities.js"
import { registerSearchAttributes } from "../src/operations/SearchAttributes.js"
import { activityInterceptors, workflowSpanSinks } from "./Tracing.js"

export interface Workers {
  /** Resolves once every worker has stopped (after `shutdown`, or a shutdown signal). */
  readonly run: () => Promise<void>
  readonly shutdown: () => Promise<void>
  /** Each task queue's worker state. */
  readonly states: () => Record<string, string>
  /** Search attributes that could not be registered (empty when all are there). */
  readonly unregistered: ReadonlyArray<string>
}

export const workflowSources = () => sourcesOf(projectRoot())

/** The workflow code: a prebuilt bundle's path, or bundled now (once, for both workers). */
export const workflowCode = async (bundlePath: string | undefined) =>
  bundlePath !== undefined ? { codePath: bundlePath } : await bundleWorkflowCode(workflowSources())

/** `host:port`, bracketing an IPv6 host. */
const hostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`)

/**
 * The Temporal runtime's options: the SDK's own metrics (workers, polls, task latencies) served
 * for Prometheus on WORKER_ADMIN_HOST:WORKER_SDK_METRICS_PORT when that port is set. They take
 * effect only if installed before the first connection.
 */
export const sdkRuntimeOptions = (worker: {
  readonly adminHost: string
  readonly sdkMetricsPort: Option.Option<number>
}): RuntimeOptions =>
  Option.match(worker.sdkMetricsPort, {
    onNone: () => ({}),
    onSome: (port) => ({ telemetryOptions: { metrics: { prometheus: { bindAddress: hostPort(worker.adminHost, port) } } } })
  })

export const createWorkers = async (options: {
  readonly config: AppConfigShape
  readonly secrets: TemporalSecretsShape
  readonly runtime: ManagedRuntime.ManagedRuntime<OperationActivities, any>
  readonly workflowBundle: { readonly codePath: string } | { readonly code: string }
}): Promise<Workers> => {
  const { config, runtime } = options
  // the process's tracer and where its spans go (Telemetry.ts); none when tracing is off
  const [tracer, pipeline] = await runtime.runPromise(Effect.all([RequestTracer, SpanPipeline]))
  const temporal = config.temporal
  const connection = await NativeConnection.connect(connectionOptionsOf(temporal)).catch((error: Error) => {
    throw startupError("TEMPORAL_ADDRESS", temporal.address, `cannot connect to Temporal (${describeCause(error)})`, "check that Temporal runs there, and the TEMPORAL_TLS settings")
  })
  try {
    const unregistered = temporal.worker.registerSearchAttributes ? await registerSearchAttributes(connection, temporal.namespace) : []
    const common = {
      connection,
      namespace: temporal.namespace,
      workflowBundle: options.workflowBundle,
      activities: createActivities(runtime),
      // even without tracing: the bundled workflows always call it (an unregistered sink is an error)
      sinks: workflowSpanSinks(pipeline),
      ...Option.match(tracer, { onNone: () => ({}), onSome: (t) => ({ interceptors: activityInterceptors(t) }) }),
      dataConverter: dataConverterOf(options.secrets),
      maxConcurrentActivityTaskExecutions: temporal.worker.maxConcurrentActivities,
      maxConcurrentWorkflowTaskExecutions: temporal.worker.maxConcurrentWorkflowTasks,
      shutdownGraceTime: temporal.worker.shutdownGraceMs
    }
    const workers = [
      await Worker.create({ ...common, taskQueue: temporal.taskQueues.operations }),
      await Worker.create({ ...common, taskQueue: temporal.taskQueues.deliveries })
    ]
    return {
      run: () => Promise.all(workers.map((w) => w.run())).then(() => undefined).finally(() => connection.close()),
      shutdown: async () => {
        for (const worker of workers) if (worker.getState() === "RUNNING") worker.shutdown()
      },
      states: () => Object.fromEntries(workers.map((w) => [w.options.taskQueue, w.getState()])),
      unregistered
    }
  } catch (error) {
    await connection.close()
    throw error
  }
}
