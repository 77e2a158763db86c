/**
 * The Temporal server of the live tests, once per run: the one `TEMPORAL_ADDRESS` names, or else
 * the Java test server beside the checkout, started here on a free port and stopped at the end.
 * Without either, the live tests skip and this prints how to run them.
 *
 * Test files get it through `inject("temporal")`: the address, and the start script for tests
 * that need a server of their own (to stop it and start it again).
 */
import type { TestProject } from "vitest/node"
import { findRunScript, HOW_TO_RUN_LIVE, startTemporalServer } from "./TemporalServer.js"

export interface TemporalSetup {
  /** A running server for the live tests; absent when none could be had. */
  readonly address?: string
  /** The test server's `run.sh`, for a server of a test's own; absent outside CI-like checkouts. */
  readonly runScript?: string
}

declare module "vitest" {
  export interface ProvidedContext {
    readonly temporal: TemporalSetup
  }
}

export default async function setup(project: TestProject) {
  const runScript = findRunScript()
  const given = process.env.TEMPORAL_ADDRESS
  if (given !== undefined && given !== "") {
    project.provide("temporal", { address: given, ...(runScript ? { runScript } : {}) })
    return
  }
  if (runScript === undefined) {
    console.log(HOW_TO_RUN_LIVE)
    project.provide("temporal", {})
    return
  }
  const server = await startTemporalServer(runScript)
  console.log(`Temporal test server for the live tests on ${server.address}`)
  project.provide("temporal", { address: server.address, runScript })
  return () => server.stop()
}
