/**
 * Against a real Temporal server, only when one is given (`TEMPORAL_ADDRESS`, e.g. the
 * docker-compose stack): the API with the Temporal engine and an in-process worker run a module
 * operation to the end. Without a server this file does nothing (a server cannot be obtained in CI).
 */
import * as Path from "node:path"
import { NativeConnection, Worker } from "@temporalio/worker"
import { Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ActivitiesLive } from "../../src/Http.js"
import { pgClientLayer } from "../../src/platform/Database.js"
import { createActivities } from "../../worker/Activities.js"
import { freshDatabase } from "../support/Postgres.js"
import { ROOT, waitFor } from "../support/Processes.js"
import { json, makeTestApp, type TestApp, testConfig, withKey } from "../support/TestApp.js"

const address = process.env.TEMPORAL_ADDRESS

describe.skipIf(address === undefined)("with a live Temporal server", () => {
  const taskQueue = `vda-live-test-${Date.now()}`
  const config = { WORKFLOW_ENGINE: "temporal", TEMPORAL_ADDRESS: address ?? "", TEMPORAL_TASK_QUEUE: taskQueue, SANDBOX_MODULE_LATENCY_MS: "100" }
  let app: TestApp
  let worker: Worker
  let running: Promise<void>
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let connection: NativeConnection

  beforeAll(async () => {
    const databaseUrl = await freshDatabase()
    app = await makeTestApp({ databaseUrl, config })
    runtime = ManagedRuntime.make(ActivitiesLive.pipe(
      Layer.provide(pgClientLayer(Redacted.make(databaseUrl), 4)),
      Layer.provide(testConfig(config))
    ))
    connection = await NativeConnection.connect({ address: address! })
    worker = await Worker.create({
      connection,
      taskQueue,
      workflowsPath: Path.join(ROOT, "workflows", "index.ts"),
      activities: createActivities(runtime)
    })
    running = worker.run()
  }, 120_000)

  afterAll(async () => {
    worker?.shutdown()
    await running
    await connection?.close()
    await runtime?.dispose()
    await app?.dispose()
  })

  it("runs a modules operation on the worker", async () => {
    const account = await app.createAccount()
    const created = await app.sandbox("/v2/vehicles/AB222CD/modules", withKey(account.sandbox.key, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ modules: ["fines", "vtv"] })
    }))
    expect(created.status).toBe(202)
    const { id } = await json(created)
    const done = await waitFor(async () => {
      const body = await json(await app.sandbox(`/v2/operations/${id}`, withKey(account.sandbox.key)))
      return ["completed", "partial", "failed"].includes(body.status) ? body : undefined
    }, "the workflow", 60_000)
    expect(done.status).toBe("partial")
  }, 90_000)
})
