/**
 * `/readyz` names each dependency: with Temporal as the engine and no Temporal answering, the
 * API is not ready (503, Retry-After) because of the engine alone, and says so within about a
 * second; the database stays up.
 */
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, makeTestApp, type TestApp } from "../support/TestApp.js"

let app: TestApp
let silent: Net.Server

beforeAll(async () => {
  // accepts connections and never answers: Temporal's client waits for the deadline
  silent = Net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
  const address = `127.0.0.1:${(silent.address() as Net.AddressInfo).port}`
  app = await makeTestApp({ config: { WORKFLOW_ENGINE: "temporal", TEMPORAL_ADDRESS: address, TEMPORAL_RECONCILE_INTERVAL_MS: "600000" } })
})

afterAll(async () => {
  await app?.dispose()
  silent?.close()
})

describe("/readyz with Temporal as the engine", () => {
  it("is 503 naming the engine when Temporal does not answer, within about a second", async () => {
    const started = Date.now()
    const answer = await app.production("/readyz")
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(answer.status).toBe(503)
    expect(answer.headers.get("retry-after")).toBe("5")
    expect(await json(answer)).toEqual({
      status: "not_ready",
      checks: {
        database: { status: "up", latencyMs: expect.any(Number) },
        // never where Temporal lives: the probe is public
        workflowEngine: { status: "down", engine: "temporal", detail: "the workflow engine does not answer" }
      }
    })
    // liveness is another matter
    expect((await app.production("/healthz")).status).toBe(200)
  })
})
