/**
 * The worker's entry point builds and loads exactly as `npm run worker` and the Docker image run
 * it (`node worker/start.js`: the esbuild bundle of worker/main.ts with the Temporal SDK kept
 * external, plus the prebuilt workflow bundle). Without a Temporal server it must get as far as
 * connecting, and fail there with a clear message (and exit code 1), not while loading.
 */
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import { describe, expect, it } from "vitest"
import { EXTERNAL_PACKAGES, ensureBundle, ensureWorkflowBundle } from "../../src/platform/process/bundled.js"
import { freshDatabase } from "../support/Postgres.js"
import { startWorker } from "../support/Processes.js"
import { LIVE_CODEC_KEYS } from "../support/LiveCodec.js"

/** A port nothing listens on: taken from the OS, then released. */
const closedPort = async () => {
  const server = Net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe("the worker entry point", () => {
  it("keeps the Temporal SDK and its native code out of the bundle", async () => {
    expect(EXTERNAL_PACKAGES).toEqual(expect.arrayContaining(["@temporalio/*", "@swc/*"]))
    const bundle = await Fs.readFile(await ensureBundle("worker/main.ts", ["src", "worker", "workflows"]), "utf8")
    expect(bundle).toMatch(/from "@temporalio\/worker"/)
    expect(bundle).not.toContain("temporalio_sdk_core") // the native bridge is loaded from node_modules, not inlined
  })

  it("prebuilds the workflows for Temporal's sandbox, with every workflow type", async () => {
    const code = await Fs.readFile(await ensureWorkflowBundle(), "utf8")
    for (const workflow of ["modulesOperation", "vehicleSearch", "webhookDelivery"]) expect(code).toContain(workflow)
  }, 60_000)

  it("starts, loads everything and stops at the connection when Temporal is not there", async () => {
    const address = `127.0.0.1:${await closedPort()}`
    const start = startWorker({
      DATABASE_URL: await freshDatabase(),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_CODEC_KEYS: LIVE_CODEC_KEYS,
      PLATE_HASH_SALT: "entry-test-salt",
      CODEC_SERVER_TOKEN: "entry-test-token",
      CODEC_SERVER_PORT: "0"
    })
    const failure = await start.then(() => "it polled a server that does not exist", (error: Error) => error.message)
    expect(failure).toMatch(/worker\/start.js exited \(1\)/)
    expect(failure).toContain(`TEMPORAL_ADDRESS=${address}: cannot connect to Temporal`)
    expect(failure).not.toMatch(/Could not resolve|No loader is configured|ERR_MODULE_NOT_FOUND/)
  }, 90_000)
})
