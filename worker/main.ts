/**
 * The Temporal worker (`npm run worker`): runs the workflows of `workflows/` and the activities
 * of `src/operations/Activities.ts` on the configured task queue. Activities run on one
 * ManagedRuntime (database pool, HTTP client, configuration), disposed after the worker stops.
 * SIGINT/SIGTERM drain the worker (in-flight activities get 30 s) before it exits.
 */
import * as Path from "node:path"
import { NativeConnection, Worker } from "@temporalio/worker"
import { Effect, Layer, ManagedRuntime } from "effect"
import { ActivitiesLive } from "../src/Http.js"
import { AppConfig } from "../src/platform/Config.js"
import { makeDatabaseLive } from "../src/platform/Database.js"
import { projectRoot } from "../src/platform/Paths.js"
import { createActivities } from "./Activities.js"

const WorkerServicesLive = ActivitiesLive.pipe(
  Layer.provide(makeDatabaseLive("cli")),
  Layer.provideMerge(AppConfig.Default)
)

const main = async () => {
  const runtime = ManagedRuntime.make(WorkerServicesLive)
  try {
    const config = await runtime.runPromise(AppConfig)
    const connection = await NativeConnection.connect({ address: config.temporal.address })
    try {
      const worker = await Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        workflowsPath: Path.join(projectRoot(), "workflows", "index.ts"),
        activities: createActivities(runtime),
        shutdownGraceTime: "30 seconds"
      })
      await runtime.runPromise(Effect.logInfo(
        `worker polling task queue ${config.temporal.taskQueue} on ${config.temporal.address} (${config.temporal.namespace})`
      ))
      await worker.run()
    } finally {
      await connection.close()
    }
  } finally {
    await runtime.dispose()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
