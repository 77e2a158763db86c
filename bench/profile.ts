/**
 * `npm run bench:profile`: where one hot request's time and memory go, as evidence.
 *
 * Runs the server (one API process) under V8's CPU profiler and sampling allocation profiler,
 * drives BENCH_PROFILE_REQUESTS (default 20,000) requests of one bench row with 50 connections,
 * and prints:
 *   - the server's and PostgreSQL's CPU per request (from /proc, Linux);
 *   - the functions with the most CPU time (self), and with the most bytes allocated per request.
 * The profiles are written to bench/results/ (`.cpuprofile` and `.heapprofile`, for Chrome
 * DevTools or speedscope). Not a test: it never runs in CI.
 *
 * The row is BENCH_PROFILE_ROW: `vehicle` (the default, the busy account's metered vehicle query,
 * or BENCH_PROFILE_PATH), `polling` (an active operation) or `reuse` (the module query that
 * reuses it).
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import {
  activeOperation,
  Allocations,
  autocannon,
  busyAccount,
  CONNECTIONS,
  demoPlate,
  ROOT,
  SLOW_SANDBOX_MODULES,
  startServer,
  temporaryDataDir
} from "./Harness.js"

const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 20_000)
const RESULTS = Path.join(ROOT, "bench", "results")

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

/** A node of an allocation profile: a tree, where a CPU profile lists its nodes flat. */
interface AllocationNode extends ProfileNode {
  readonly children: ReadonlyArray<AllocationNode>
}

const frameName = ({ callFrame }: ProfileNode) =>
  `${callFrame.functionName || "(anonymous)"} ${callFrame.url.replace(/^.*node_modules\//, "").replace(`file://${ROOT}/`, "")}:${callFrame.lineNumber + 1}`

const top = (totals: Map<string, number>, count: number, format: (value: number) => string) =>
  [...totals].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, value]) => `  ${format(value).padStart(10)}  ${name}`).join("\n")

const add = (totals: Map<string, number>, name: string, value: number) => totals.set(name, (totals.get(name) ?? 0) + value)

/** Self time per function, idle excluded, as shares of the busy time. */
const cpuSummary = (profile: { nodes: ReadonlyArray<ProfileNode>; samples: ReadonlyArray<number>; timeDeltas: ReadonlyArray<number> }) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  let busy = 0
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!
    if (node.callFrame.functionName === "(idle)") return
    busy += profile.timeDeltas[i] ?? 0
    add(totals, frameName(node), profile.timeDeltas[i] ?? 0)
  })
  return top(totals, 20, (us) => `${((100 * us) / busy).toFixed(1)}%`)
}

/** Bytes allocated per request by the function that allocated them. */
const allocationSummary = (profile: { head: AllocationNode; samples: ReadonlyArray<{ nodeId: number; size: number }> }) => {
  const byId = new Map<number, ProfileNode>()
  const walk = (node: AllocationNode) => {
    byId.set(node.id, node)
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  const totals = new Map<string, number>()
  let total = 0
  for (const sample of profile.samples) {
    const node = byId.get(sample.nodeId)
    if (node === undefined) continue // taken while sampling stopped, its stack not in the tree
    total += sample.size
    add(totals, frameName(node), sample.size)
  }
  return { perRequest: total / REQUESTS, lines: top(totals, 20, (bytes) => `${(bytes / REQUESTS / 1024).toFixed(2)} KB`) }
}

/** A process's user and system CPU ticks (1/100 s), and its parent. */
const statOf = async (pid: string) => {
  const stat = await Fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { parent: fields[1] ?? "", ticks: Number(fields[11] ?? 0) + Number(fields[12] ?? 0) }
}

/** CPU ticks of the server and of its PostgreSQL (the postmaster of `dataDir` and its backends). */
const cpuTicks = async (pid: number, dataDir: string) => {
  const postmaster = (await Fs.readFile(Path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]!
  let database = (await statOf(postmaster)).ticks
  for (const entry of await Fs.readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await statOf(entry)
    if (stat.parent === postmaster) database += stat.ticks
  }
  return { server: (await statOf(String(pid))).ticks, database }
}

/** The request a row sends. */
interface Target {
  readonly url: string
  readonly headers: Record<string, string>
  readonly request?: { readonly method: string; readonly body: string }
}

const targetOf = async (row: string, server: { url: string; sandboxUrl: string }, key: string, sandboxKey: string): Promise<Target> => {
  switch (row) {
    case "vehicle":
      return { url: `${server.url}${process.env.BENCH_PROFILE_PATH ?? `/v2/vehicles/${await demoPlate()}`}`, headers: { "x-api-key": key } }
    case "polling":
      return { url: (await activeOperation(server.sandboxUrl, sandboxKey)).pollUrl, headers: { "x-api-key": sandboxKey } }
    case "reuse":
      return (await activeOperation(server.sandboxUrl, sandboxKey)).reuse
    default:
      throw new Error(`BENCH_PROFILE_ROW is vehicle, polling or reuse, not ${row}`)
  }
}

const main = async () => {
  await Fs.mkdir(RESULTS, { recursive: true })
  const dataDir = await temporaryDataDir()
  const stamp = new Date().toISOString().replace(/[:.]/g, "-")
  const allocationFile = Path.join(RESULTS, `${stamp}.heapprofile`)
  const server = await startServer(
    { DATA_DIR: dataDir, LOG_LEVEL: "info", VDA_ALLOCATION_PROFILE: allocationFile, ...SLOW_SANDBOX_MODULES },
    new Allocations(),
    ["--cpu-prof", `--cpu-prof-dir=${RESULTS}`, `--cpu-prof-name=${stamp}.cpuprofile`, "--import", "./bench/allocation-sampler.mjs"]
  )
  try {
    const { production: key, sandbox: sandboxKey } = await busyAccount({ DATA_DIR: dataDir, LOG_LEVEL: "warn" })
    const target = await targetOf(process.env.BENCH_PROFILE_ROW ?? "vehicle", server, key, sandboxKey)
    const load = (amount: number) => autocannon(undefined, target.url, target.headers, { amount }, target.request)
    await load(5_000) // warm-up: JIT, pools
    server.child.kill("SIGUSR2")
    const before = await cpuTicks(server.child.pid!, dataDir)
    const run = await load(REQUESTS)
    const after = await cpuTicks(server.child.pid!, dataDir)
    server.child.kill("SIGUSR2")
    const written = Date.now() + 30_000
    while (!(await Fs.stat(allocationFile).then(() => true, () => false))) {
      if (Date.now() > written) throw new Error("the allocation profile was not written")
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const perRequest = (ticks: number) => ((ticks * 10_000) / REQUESTS).toFixed(0)
    console.log(`\n${target.request?.method ?? "GET"} ${new URL(target.url).pathname}: ${REQUESTS} requests, ${CONNECTIONS} connections, ${run.requestsPerSecond.toFixed(0)} req/s, p99 ${run.p99} ms, ${run.other} errors`)
    console.log(`CPU per request: server ${perRequest(after.server - before.server)} µs, PostgreSQL ${perRequest(after.database - before.database)} µs`)
    const allocations = allocationSummary(JSON.parse(await Fs.readFile(allocationFile, "utf8")))
    console.log(`\nallocated per request: ${(allocations.perRequest / 1024).toFixed(1)} KB; by function (self):\n${allocations.lines}`)
  } finally {
    server.child.kill("SIGTERM")
    await new Promise((resolve) => server.child.once("exit", resolve))
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
  const cpuFile = Path.join(RESULTS, `${stamp}.cpuprofile`)
  console.log(`\nCPU time of the server's busy time, whole run (self):\n${cpuSummary(JSON.parse(await Fs.readFile(cpuFile, "utf8")))}`)
  console.log(`\nwritten: ${Path.relative(ROOT, cpuFile)}, ${Path.relative(ROOT, allocationFile)}`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
