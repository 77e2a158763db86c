/**
 * One run of a row: `bench/load.mjs` in a process of its own, with the machine's idle and steal
 * read from /proc/stat over it (reported, never used to drop or redo a run).
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { settings } from "./config.js"
import { type Histogram, percentile } from "./histogram.js"
import { type CpuShares, waitIdle, watchCpu } from "./machine.js"
import { baseEnv, runToEnd } from "./processes.js"
import type { Target } from "./targets.js"

export interface LoadRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

export type Draw =
  | { readonly kind: "key-and-plate"; readonly keysFile: string; readonly platesFile: string; readonly pathTemplate: string; readonly seed: number }
  | { readonly kind: "new-plate"; readonly pathTemplate: string; readonly seed: number }

export interface LoadSpec {
  readonly url: string
  readonly request: LoadRequest
  readonly draw?: Draw
  readonly expectFound?: boolean
  readonly countErrorCodes?: boolean
}

interface LoadOutput {
  readonly sent: number
  readonly responses: number
  readonly statuses: Record<string, number>
  readonly errors: number
  readonly timeouts: number
  readonly durationMs: number
  readonly histogram: Histogram
  readonly found?: number
  readonly errorCodes?: Record<string, number>
}

export interface Run extends CpuShares {
  readonly requestsPerSecond: number
  readonly p50Ms: number | null
  readonly p99Ms: number | null
  /** Responses by status. */
  readonly statuses: Record<string, number>
  readonly ok: number
  /** Responses of any status but 2xx, by status. */
  readonly otherStatuses: Record<string, number>
  readonly other: number
  /** Connection errors and timeouts (requests without a response). */
  readonly errors: number
  readonly sent: number
  readonly responses: number
  readonly durationS: number
  /** 200 vehicle answers with `"found":true`, where the row checks it. */
  readonly found?: number
  readonly errorCodes?: Record<string, number>
  readonly histogram: Histogram
}

let specCount = 0

export const runLoad = async (
  scratch: string,
  spec: LoadSpec,
  size: { readonly durationS: number } | { readonly amount: number },
  targetPids: ReadonlyArray<number>
): Promise<Run> => {
  const file = Path.join(scratch, `load-${++specCount}.json`)
  await Fs.writeFile(file, JSON.stringify({ ...spec, ...size, connections: settings.connections }))
  const stopWatching = await watchCpu(targetPids)
  let stdout: string
  try {
    stdout = await runToEnd("load", [Path.join("bench", "load.mjs"), file], { env: baseEnv() })
  } finally {
    await Fs.rm(file, { force: true })
  }
  const cpu = await stopWatching()
  const out = JSON.parse(stdout) as LoadOutput
  const ok = Object.entries(out.statuses).reduce((n, [status, count]) => n + (status.startsWith("2") ? count : 0), 0)
  const otherStatuses = Object.fromEntries(Object.entries(out.statuses).filter(([status]) => !status.startsWith("2")))
  return {
    requestsPerSecond: out.durationMs > 0 ? (out.responses * 1000) / out.durationMs : 0,
    p50Ms: percentile(out.histogram, 0.5),
    p99Ms: percentile(out.histogram, 0.99),
    statuses: out.statuses,
    ok,
    otherStatuses,
    other: out.responses - ok,
    errors: out.errors,
    sent: out.sent,
    responses: out.responses,
    durationS: out.durationMs / 1000,
    ...(out.found === undefined ? {} : { found: out.found }),
    ...(out.errorCodes === undefined ? {} : { errorCodes: out.errorCodes }),
    histogram: out.histogram,
    ...cpu
  }
}

/** The targets' processes and their PostgreSQL postmasters. */
const pidsOf = async (targets: ReadonlyArray<Target>) => {
  const pids: Array<number> = []
  for (const target of targets) {
    pids.push(target.child.pid)
    const postmaster = await target.database?.postmaster() ?? null
    if (postmaster !== null) pids.push(postmaster)
  }
  return pids
}

/** A run, once every target and its PostgreSQL are idle (a module-creation run leaves operations to finish). */
export const runWhenIdle = async (
  scratch: string,
  targets: ReadonlyArray<Target>,
  spec: LoadSpec,
  size: { readonly durationS: number } | { readonly amount: number },
  beforeRun: () => Promise<void> = async () => {}
) => {
  const pids = await pidsOf(targets)
  const idle = await waitIdle(pids)
  await beforeRun()
  const run = await runLoad(scratch, spec, size, pids)
  return { run, waitedForIdleMs: idle.waitedMs, targetsIdle: idle.idle }
}
