/**
 * The worker processes' Temporal side: one connection, and one Temporal worker per task queue
 * (operations, deliveries), each running every workflow and activity of this project so either
 * queue can be scaled on its own. Used by `worker/main.ts` and by the live tests.
 */
import * as Path from "node:path"
import { bundleWorkflowCode, NativeConnection, Worker } from "@temporalio/worker"
import type { ManagedRuntime } from "effect"
import type { OperationActivities } from "../src/operations/Activities.js"
import type { AppConfig } from "../src/platform/Config.js"
import { projectRoot } from "../src/platform/Paths.js"
import { connectionOptionsOf, dataConverterOf } from "../src/platform/Temporal.js"
import { createActivities } from "./Activities.js"
import { registerSearchAttributes } from "./SearchAttributes.js"

export interface Workers {
  /** Resolves once every worker has stopped (after `shutdown`, or a shutdown signal). */
  readonly run: () => Promise<void>
  readonly shutdown: () => Promise<void>
  /** Each task queue's worker state. */
  readonly states: () => Record<string, string>
  /** Search attributes that could not be registered (empty when all are there). */
  readonly unregistered: ReadonlyArray<string>
}

/** The workflow code: a prebuilt bundle's path, or bundled now (once, for both workers). */
export const workflowCode = async (bundlePath: string | undefined) =>
  bundlePath !== undefined
    ? { codePath: bundlePath }
    : await bundleWorkflowCode({ workflowsPath: Path.join(projectRoot(), "workflows", "index.ts") })

export const createWorkers = async (options: {
  readonly config: AppConfig
  readonly runtime: ManagedRuntime.ManagedRuntime<OperationActivities, any>
  readonly workflowBundle: { readonly codePath: string } | { readonly code: string }
}): Promise<Workers> => {
  const { config, runtime } = options
  const temporal = config.temporal
  const connection = await NativeConnection.connect(connectionOptionsOf(temporal)).catch((error: Error) => {
    throw new Error(`could not connect to Temporal at ${temporal.address}: ${error.message}`)
  })
  try {
    const unregistered = temporal.worker.registerSearchAttributes ? await registerSearchAttributes(connection, temporal.namespace) : []
    const common = {
      connection,
      namespace: temporal.namespace,
      workflowBundle: options.workflowBundle,
      activities: createActivities(runtime),
      dataConverter: dataConverterOf(temporal),
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
