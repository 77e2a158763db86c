/**
 * Database outage: requests get 503 temporarily_unavailable (retryable, Retry-After), the process
 * stays up, and it recovers by itself when the database is back. Runs on a PostgreSQL of its own,
 * stopped and restarted on the same port.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Cluster, startCluster, stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { adminQuery, migrate } from "../support/Admin.js"
import { ErrorResponse, expectShape } from "../support/SpecShapes.js"
import { json, makeTestApp, type TestAccount, type TestApp, withKey } from "../support/TestApp.js"

let dataDir: string
let cluster: Cluster
let app: TestApp
let account: TestAccount

beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-outage-"))
  await Fs.chmod(dataDir, 0o755)
  cluster = await startCluster({ dataDir, ephemeral: true })
  await adminQuery(cluster.url("postgres"), "create database vda")
  await migrate(cluster.url("vda"))
  app = await makeTestApp({ databaseUrl: cluster.url("vda") })
  account = await app.createAccount()
})

afterAll(async () => {
  await app?.dispose()
  if (cluster) await stopCluster(cluster)
  await Fs.rm(dataDir, { recursive: true, force: true })
})

const eventually = async <A>(attempt: () => Promise<A>, accept: (a: A) => boolean, deadlineMs = 20_000): Promise<A> => {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const result = await attempt()
    if (accept(result) || Date.now() > deadline) return result
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("database outage", () => {
  it("answers 503 while the database is down and recovers when it returns", async () => {
    expect((await app.production("/v2/status", withKey(account.production.key))).status).toBe(200)

    await stopCluster(cluster)
    const down = await app.production("/v2/status", withKey(account.production.key))
    expect(down.status).toBe(503)
    expect(down.headers.get("retry-after")).toBe("5")
    const body = await json(down)
    expectShape(body, ErrorResponse("temporarily_unavailable"))
    expect(body.error.retryable).toBe(true)
    const notReady = await app.production("/readyz")
    expect(notReady.status).toBe(503)
    expect(notReady.headers.get("retry-after")).toBe("5")
    // which dependency is down, and only that one
    expect(await json(notReady)).toEqual({
      status: "not_ready",
      checks: { database: { status: "down" }, workflowEngine: { status: "up", engine: "inline" } }
    })
    expect((await app.production("/healthz")).status).toBe(200)

    cluster = await startCluster({ dataDir, port: cluster.port, ephemeral: true })
    const back = await eventually(
      () => app.production("/v2/status", withKey(account.production.key)),
      (res) => res.status === 200
    )
    expect(back.status).toBe(200)
    const ready = await app.production("/readyz")
    expect(ready.status).toBe(200)
    expect(await json(ready)).toMatchObject({ status: "ready", checks: { database: { status: "up" } } })
  })
})
