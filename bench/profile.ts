/**
 * `npm run bench:profile`: where one service row's time and memory go, as evidence.
 *
 * Starts the service as `npm run bench` does (bench/targets.ts), twice, one after the other: under
 * V8's CPU profiler (its samples kept for the measured requests only, bench/cpu-window.mjs), then under its sampling
 * allocation profiler (bench/allocation-sampler.mjs), which would about double the cost the CPU
 * profile shows if both ran in one process. Each drives BENCH_PROFILE_REQUESTS (default 20,000)
 * requests of one row with 50 connections after 5,000 of warm-up. It prints the service's and
 * PostgreSQL's CPU per request (/proc, in the CPU-profiled run), the bytes allocated per request
 * (exact, bench/allocation-counter.mjs) and the functions with the most CPU time and allocations.
 * The profiles are written to bench/results/ (`.cpuprofile`, `.heapprofile`: Chrome DevTools, speedscope).
 *
 * BENCH_PROFILE_ROW: `vehicle` (the default: the busy account's AB123CD, a registry hit), `status`,
 * `poll` (a final operation), or BENCH_PROFILE_PATH for any GET on the production listener.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { cleanUp, cleanUpOnSignals, wasInterrupted } from "./cleanup.js"
import { RESULTS_DIR, ROOT, settings } from "./config.js"
import { busyServiceAccount, finalOperation, importRegistry, ONE_VEHICLE } from "./fixtures.js"
import { treeTicks } from "./machine.js"
import { type LoadSpec, runLoad } from "./measure.js"
import { startService, temporaryRoot } from "./targets.js"

const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 20_000)
const WARMUP_REQUESTS = 5_000

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

interface AllocationNode extends ProfileNode {
  readonly children: ReadonlyArray<AllocationNode>
}

const frameName = ({ callFrame }: ProfileNode) =>
  `${callFrame.functionName || "(anonymous)"} ${callFrame.url.replace(/^.*node_modules\//, "").replace(`file://${ROOT}/`, "")}:${callFrame.lineNumber + 1}`

const add = (totals: Map<string, number>, name: string, value: number) => totals.set(name, (totals.get(name) ?? 0) + value)

const top = (totals: Map<string, number>, format: (value: number) => string) =>
  [...totals].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([name, value]) => `  ${format(value).padStart(10)}  ${name}`).join("\n")

/** The busy time of the samples inside `window` (the measured requests), by function. */
const cpuSummary = (
  profile: { startTime: number; nodes: ReadonlyArray<ProfileNode>; samples: ReadonlyArray<number>; timeDeltas: ReadonlyArray<number> },
  window: { readonly from: number; readonly to: number }
) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    const node = byId.get(id)!
    if (at < window.from || at > window.to || node.callFrame.functionName === "(idle)") return
    busy += profile.timeDeltas[i] ?? 0
    add(totals, frameName(node), profile.timeDeltas[i] ?? 0)
  })
  return top(totals, (us) => `${((100 * us) / busy).toFixed(1)}%`)
}

const allocationSummary = (profile: { head: AllocationNode; samples: ReadonlyArray<{ nodeId: number; size: number }> }) => {
  const byId = new Map<number, ProfileNode>()
  const walk = (node: AllocationNode) => {
    byId.set(node.id, node)
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  const totals = new Map<string, number>()
  for (const sample of profile.samples) {
    const node = byId.get(sample.nodeId)
    if (node !== undefined) add(totals, frameName(node), sample.size)
  }
  return top(totals, (bytes) => `${(bytes / REQUESTS / 1024).toFixed(2)} KB`)
}

const untilWritten = async (file: string) => {
  const deadline = Date.now() + 30_000
  while (!(await Fs.stat(file).then(() => true, () => false))) {
    if (Date.now() > deadline) throw new Error(`${file} was not written`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A service started for one profiler, warmed up, then measured under it: the run and the CPU it took. */
const profiled = async (root: string, profiler: { readonly nodeArgs: ReadonlyArray<string>; readonly env: Record<string, string> }) => {
  const service = await startService(root, profiler)
  await importRegistry(service, root, [ONE_VEHICLE])
  const busy = await busyServiceAccount(service)
  const row = process.env.BENCH_PROFILE_ROW ?? "vehicle"
  const get = (url: string, path: string, key: string): LoadSpec => ({ url, request: { method: "GET", path, headers: { "x-api-key": key } } })
  const spec = process.env.BENCH_PROFILE_PATH
    ? get(service.productionUrl, process.env.BENCH_PROFILE_PATH, busy.production)
    : row === "vehicle"
    ? get(service.productionUrl, `/v2/vehicles/${settings.onePlate}`, busy.production)
    : row === "status"
    ? get(service.productionUrl, "/v2/status", busy.production)
    : row === "poll"
    ? get(service.sandboxUrl, await finalOperation(service, busy.sandbox!), busy.sandbox!)
    : null
  if (spec === null) throw new Error(`BENCH_PROFILE_ROW is vehicle, status or poll, not ${row}`)

  const postmaster = (await service.database.postmaster())!
  await runLoad(root, spec, { amount: WARMUP_REQUESTS }, [])
  // one signal starts (and the next stops) the profiler and the service's exact allocation count
  await service.allocations.start()
  const before = { service: await treeTicks([service.child.pid]), database: await treeTicks([postmaster]) }
  const run = await runLoad(root, spec, { amount: REQUESTS }, [])
  const after = { service: await treeTicks([service.child.pid]), database: await treeTicks([postmaster]) }
  const counted = await service.allocations.stop()
  return { service, spec, run, counted, ticks: { service: after.service - before.service, database: after.database - before.database } }
}

const main = async () => {
  cleanUpOnSignals()
  await Fs.mkdir(RESULTS_DIR, { recursive: true })
  const root = await temporaryRoot()
  const stamp = new Date().toISOString().replace(/[:.]/g, "-")
  const heapFile = Path.join(RESULTS_DIR, `${stamp}.heapprofile`)
  const cpuFile = Path.join(RESULTS_DIR, `${stamp}.cpuprofile`)

  // the CPU first, in a process of its own: the allocation sampler would about double what it shows
  const windowFile = Path.join(root, "cpu-window.json")
  const cpu = await profiled(root, {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${RESULTS_DIR}`, `--cpu-prof-name=${Path.basename(cpuFile)}`, "--import", "./bench/cpu-window.mjs"],
    env: { VDA_CPU_WINDOW: windowFile }
  })
  await untilWritten(windowFile)
  await cpu.service.child.stop() // the profile is written at exit
  await untilWritten(cpuFile)
  const allocations = await profiled(root, { nodeArgs: ["--import", "./bench/allocation-sampler.mjs"], env: { VDA_ALLOCATION_PROFILE: heapFile } })
  await untilWritten(heapFile)
  await allocations.service.child.stop()

  const perRequest = (ticks: number) => ((ticks * 10_000) / REQUESTS).toFixed(0)
  const { spec, run } = cpu
  console.log(`\n${spec.request.method} ${spec.request.path}: ${REQUESTS} requests, ${settings.connections} connections, ` +
    `${run.requestsPerSecond.toFixed(0)} req/s (under the CPU profiler), p99 ${run.p99Ms} ms, ${run.other + run.errors} other/errors`)
  console.log(`CPU per request: service ${perRequest(cpu.ticks.service)} µs, PostgreSQL ${perRequest(cpu.ticks.database)} µs`)
  console.log(`allocated per request: ${(cpu.counted.bytes / REQUESTS / 1024).toFixed(1)} KB (V8 heap, exact); ` +
    `sampled in a second process (${allocations.run.requestsPerSecond.toFixed(0)} req/s under the sampler), by function (self):`)
  console.log(allocationSummary(JSON.parse(await Fs.readFile(heapFile, "utf8"))))
  console.log(`\nthe service's busy time over the measured requests, by function (self; wall time, so a system call that was` +
    ` preempted counts in full):\n${cpuSummary(JSON.parse(await Fs.readFile(cpuFile, "utf8")), JSON.parse(await Fs.readFile(windowFile, "utf8")))}`)
  console.log(`\nwritten: ${Path.relative(ROOT, cpuFile)}, ${Path.relative(ROOT, heapFile)}`)
}

try {
  await main()
} catch (error) {
  if (!wasInterrupted()) console.error(error)
  process.exitCode = 1
} finally {
  await cleanUp()
}
