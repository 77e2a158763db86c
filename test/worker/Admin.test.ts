/**
 * The worker's health endpoint: alive while the process runs; ready only while every task
 * queue's worker polls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWorkerAdmin } from "../../worker/Admin.js"

let states: Record<string, string> = {}
let admin: Awaited<ReturnType<typeof startWorkerAdmin>>
beforeAll(async () => {
  admin = await startWorkerAdmin({ host: "127.0.0.1", port: 0, states: () => states })
})
afterAll(() => admin?.close())

const get = async (path: string, method = "GET") => {
  const res = await fetch(`http://127.0.0.1:${admin.port}${path}`, { method })
  return { status: res.status, body: await res.json() }
}

describe("the worker's health endpoint", () => {
  it("is alive whatever the workers do", async () => {
    states = {}
    expect(await get("/healthz")).toEqual({ status: 200, body: { status: "ok" } })
  })

  it("is ready only when every worker runs", async () => {
    states = {}
    expect((await get("/readyz")).status).toBe(503)
    states = { "q-operations": "RUNNING", "q-deliveries": "INITIALIZED" }
    expect(await get("/readyz")).toEqual({ status: 503, body: { status: "not ready", workers: states } })
    states = { "q-operations": "RUNNING", "q-deliveries": "RUNNING" }
    expect(await get("/readyz")).toEqual({ status: 200, body: { status: "ready", workers: states } })
    states = { "q-operations": "DRAINING", "q-deliveries": "RUNNING" }
    expect((await get("/readyz")).status).toBe(503)
  })

  it("knows nothing else", async () => {
    expect((await get("/metrics")).status).toBe(404)
    expect((await get("/readyz", "POST")).status).toBe(405)
  })
})
