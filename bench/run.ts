/**
 * `npm run bench`: the hot paths against this machine's own reference, in interleaved rounds.
 *
 * Starts a bare Node `http` hello world (the machine's reference) and the real server on a
 * temporary embedded database, creates one busy account (custom plan, no limits), and drives
 * each row with autocannon in a separate process, round after round (BENCH_ROUNDS, default 2),
 * each row's run just after a 5 s run of the bare Node hello world, its reference for the ratio
 * (the machine's speed drifts over minutes):
 *   GET /healthz (on the lean lane), and the same probe through HttpApi, for
 *   comparison (what every route off the lane pays) · metered GET /v2/vehicles/{plate} (registry hits, one
 *   account) · the same query against the plain-Node group-commit design, for comparison
 *   (bench/reference-server.ts, on the same database and account) · polling GET /v2/operations/{id},
 *   and the same poll against that design · POST modules reusing an active operation ·
 *   GET /v2/status · the metered vehicle query again on a second server with tracing on (same
 *   database, exporting every span over OTLP/HTTP to a stand-in collector), which shows what
 *   tracing costs and, against the row with tracing off, that off costs nothing more
 * Afterwards it checks that metering is exact: every 200 vehicle answer charged one plate query,
 * reuses and polls charged nothing. Then the account console's first page, as a person meets it
 * (sign-in, overview, its assets), over fresh sessions. Prints one table (req/s, p50, p99, all after each
 * run's first second, its ramp-up, as `bench/load.mjs` says why; ratio to its bare Node runs,
 * the issue's goal, the bytes the server allocated per request, the share of the machine's CPU left idle,
 * and the share the hypervisor took from it: steal, over the run and at its peak second) and writes
 * bench/results/latest.json. A pair the hypervisor took more than 3% of the CPU from, or more than
 * 10% in any one second, is run again; a goal whose row kept such a pair anyway is marked undecided
 * (?) where that steal could have made the verdict.
 * Not a test: it never runs in CI.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import {
  activeOperation,
  Allocations,
  autocannon,
  busyAccount,
  CONNECTIONS,
  consoleFirstPage,
  demoPlate,
  embeddedDatabaseUrl,
  ROOT,
  type Run,
  SETTLE_S,
  SLOW_SANDBOX_MODULES,
  startBareNode,
  startOtlpSink,
  startPlainNodeServer,
  startServer,
  temporaryDataDir
} from "./Harness.js"

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10)
const POLLING = "GET /v2/operations/{id} (polling)"
const PLAIN_VEHICLE = "plain Node + pg, vehicle"
const PLAIN_POLL = "plain Node + pg, poll"
const HTTPAPI_HEALTHZ = "GET /healthz?via=httpapi (HttpApi)"

interface Row {
  readonly name: string
  /** Fraction of the bare Node row the issue asks for, if it sets one. */
  readonly goal?: number
  /** A row for comparison (another server, or this one's HttpApi path): no goal of ours applies to it. */
  readonly comparison?: true
  readonly run: (duration: number) => Promise<Run>
}

const sum = (runs: ReadonlyArray<Run>, of: (run: Run) => number) => runs.reduce((n, r) => n + of(r), 0)

const mean = (runs: ReadonlyArray<Run>): Run => ({
  requestsPerSecond: sum(runs, (r) => r.requestsPerSecond) / runs.length,
  p50: Math.max(...runs.map((r) => r.p50)),
  p99: Math.max(...runs.map((r) => r.p99)),
  p99WithRampUp: Math.max(...runs.map((r) => r.p99WithRampUp)),
  ok: sum(runs, (r) => r.ok),
  other: sum(runs, (r) => r.other),
  total: sum(runs, (r) => r.total),
  bytesPerRequest: runs.some((r) => r.bytesPerRequest === null)
    ? null
    : sum(runs, (r) => r.bytesPerRequest! * r.total) / sum(runs, (r) => r.total),
  idle: runs.some((r) => r.idle === null) ? null : sum(runs, (r) => r.idle!) / runs.length,
  steal: runs.some((r) => r.steal === null) ? null : Math.max(...runs.map((r) => r.steal!)),
  stealPeak: runs.some((r) => r.stealPeak === null) ? null : Math.max(...runs.map((r) => r.stealPeak!))
})

/**
 * A run during which the hypervisor gave more than this share of the machine's CPU to other guests
 * measures them, not this code: the bench runs the pair again (BENCH_STEAL_ATTEMPTS in all,
 * default 4) and keeps the first pair under it, or else the least disturbed one, marked in the table.
 */
const MAX_STEAL = Number(process.env.BENCH_MAX_STEAL ?? 0.03)
/**
 * The same for the run's worst second. Steal comes in spells of a few seconds at 20-50%: one such
 * second slows every request in flight, enough to set a p99, while the run's share stays under
 * MAX_STEAL. An undisturbed second here reads 0-3% (a clock tick is 0.5% of a second of two CPUs).
 */
const MAX_STEAL_PEAK = Number(process.env.BENCH_MAX_STEAL_PEAK ?? 0.1)
const STEAL_ATTEMPTS = Number(process.env.BENCH_STEAL_ATTEMPTS ?? 4)
/** The bare Node run just before each row's run, that row's reference in that round. */
const REFERENCE_S = Number(process.env.BENCH_REFERENCE_S ?? 5)

/** The steal of every pair done again (over its runs, and at its worst second). */
const repeated: Array<{ readonly steal: number; readonly peak: number }> = []

interface Pair {
  readonly reference: Run
  readonly run: Run
}

/** The more of a pair's two runs' `of`. */
const worstOf = (of: (run: Run) => number | null) => ({ reference, run }: Pair) => Math.max(of(reference) ?? 0, of(run) ?? 0)
const stealOf = worstOf((run) => run.steal)
const stealPeakOf = worstOf((run) => run.stealPeak)

/** How far over its thresholds a run's steal went: over 1, the run was disturbed. */
const disturbance = (run: Run) => Math.max((run.steal ?? 0) / MAX_STEAL, (run.stealPeak ?? 0) / MAX_STEAL_PEAK)
const pairDisturbance = ({ reference, run }: Pair) => Math.max(disturbance(reference), disturbance(run))

const disturbed = (run: Run) => disturbance(run) > 1

/**
 * Which runs of a row's kept pairs were disturbed, which decides which verdicts stay open. Stolen
 * CPU slows the run it is stolen from: in the row's run it can only lower the row's rate and raise
 * its p99 (a goal met still holds); in the reference it can only raise the ratio (a goal missed
 * still fails).
 */
const disturbanceOf = (rowPairs: ReadonlyArray<Pair>) => ({
  reference: rowPairs.some(({ reference }) => disturbed(reference)),
  run: rowPairs.some(({ run }) => disturbed(run))
})

/**
 * A row's run with a bare Node run just before it: the machine's speed drifts over minutes on a
 * shared host, so each run is set against the reference of its own moment.
 */
const pairedRun = async (row: Row, reference: Row, duration: number): Promise<Pair> => {
  let least: Pair | undefined
  for (let attempt = 1; ; attempt++) {
    const pair = { reference: await reference.run(REFERENCE_S), run: await row.run(duration) }
    if (pairDisturbance(pair) <= 1) return pair
    if (least === undefined || pairDisturbance(pair) < pairDisturbance(least)) least = pair
    if (attempt === STEAL_ATTEMPTS) return least
    repeated.push({ steal: stealOf(pair), peak: stealPeakOf(pair) })
  }
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
/** The servers' access log (ACCESS_LOG): on by default, as deployed, one line per request. */
const ACCESS_LOG = process.env.BENCH_ACCESS_LOG ?? "true"
const API_PROCESSES = Number(process.env.API_PROCESSES ?? 1)
/** The issue's allocation budget for the vehicle query, in bytes. */
const VEHICLE_ALLOCATION_GOAL = 40 * 1024
/** The issue's tail latency goal at 50 connections, for every row. */
const P99_GOAL_MS = 20
/** The console issue's goal for its first page on this machine. */
const CONSOLE_FIRST_PAGE_GOAL_MS = 200
const CONSOLE_SAMPLES = 10

const main = async () => {
  const PLATE = await demoPlate()
  const dataDir = await temporaryDataDir()
  const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn" }
  const bare = await startBareNode()
  const allocations = new Allocations()
  const server = await startServer({
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ACCESS_LOG,
    ...SLOW_SANDBOX_MODULES,
    API_PROCESSES: String(API_PROCESSES)
  }, allocations)
  const sink = await startOtlpSink()
  const tracedAllocations = new Allocations()
  const traced = await startServer({
    DATABASE_URL: await embeddedDatabaseUrl(dataDir),
    LOG_LEVEL: "info",
    ACCESS_LOG,
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url
  }, tracedAllocations)
  let plainNodeServer: Awaited<ReturnType<typeof startPlainNodeServer>> | undefined
  try {
    const { id: accountId, production: key, sandbox: sandboxKey } = await busyAccount(env)
    const vehicleUrl = `${server.url}/v2/vehicles/${PLATE}`
    const check = await fetch(vehicleUrl, { headers: { "x-api-key": key } })
    const vehicleBody = await check.text()
    if (check.status !== 200 || !(JSON.parse(vehicleBody) as { found: boolean }).found) throw new Error(`${PLATE} is not in the demo registry`)
    const operation = await activeOperation(server.sandboxUrl, sandboxKey)
    const plainNode = plainNodeServer = await startPlainNodeServer(await embeddedDatabaseUrl(dataDir), vehicleBody)
    let vehicleAnswers = 1
    // counted runs use amounts: a timed run stops with requests in flight, charged but unseen
    const countedVehicleRun = async (runAllocations: Allocations | undefined, url: string, d: number) => {
      // the warm-up's rate sizes the run: it has no ramp-up of its own to leave out
      const warm = await autocannon(runAllocations, url, { "x-api-key": key }, { amount: 1000 }, {}, 0)
      const r = await autocannon(runAllocations, url, { "x-api-key": key }, { amount: Math.max(1000, Math.round(warm.requestsPerSecond * (d + SETTLE_S))) })
      vehicleAnswers += warm.ok + r.ok
      return r
    }
    const rows: Array<Row> = [
      { name: "bare Node http hello world", run: (d) => autocannon(undefined, bare.url, {}, { duration: d }) },
      { name: "GET /healthz", run: (d) => autocannon(allocations, `${server.url}/healthz`, {}, { duration: d }) },
      // the same probe through HttpApi (a query string passes it on): what every route off the lane pays
      { name: HTTPAPI_HEALTHZ, comparison: true, run: (d) => autocannon(allocations, `${server.url}/healthz?via=httpapi`, {}, { duration: d }) },
      { name: `GET /v2/vehicles/${PLATE} (metered)`, goal: 0.3, run: (d) => countedVehicleRun(allocations, vehicleUrl, d) },
      {
        name: PLAIN_VEHICLE,
        comparison: true,
        run: (d) => countedVehicleRun(undefined, `${plainNode.url}/v2/vehicles/${PLATE}`, d)
      },
      { name: POLLING, goal: 0.2, run: (d) => autocannon(allocations, operation.pollUrl, { "x-api-key": sandboxKey }, { duration: d }) },
      {
        name: PLAIN_POLL,
        comparison: true,
        run: (d) => autocannon(undefined, `${plainNode.url}${new URL(operation.pollUrl).pathname}`, { "x-api-key": sandboxKey }, { duration: d })
      },
      {
        name: "POST modules (reuse)",
        goal: 0.08,
        run: (d) => autocannon(allocations, operation.reuse.url, operation.reuse.headers, { duration: d }, operation.reuse.request)
      },
      { name: "GET /v2/status", run: (d) => autocannon(allocations, `${server.url}/v2/status`, { "x-api-key": key }, { duration: d }) },
      {
        name: `GET /v2/vehicles/${PLATE} (tracing on)`,
        // another configuration (every span exported), to show what tracing costs: not a row of the goals
        comparison: true,
        run: (d) => countedVehicleRun(tracedAllocations, `${traced.url}/v2/vehicles/${PLATE}`, d)
      }
    ]

    for (const row of rows) await row.run(2) // warm-up: JIT, pools
    const [bareRow, ...measured] = rows
    const pairs = measured.map(() => [] as Array<Pair>)
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, row] of measured.entries()) pairs[i]!.push(await pairedRun(row, bareRow!, DURATION_S))
    }
    // each row's ratio: its runs' rates over their own references' rates, summed over the rounds
    const ratioOf = (rowPairs: ReadonlyArray<Pair>) =>
      sum(rowPairs.map(({ run }) => run), (run) => run.requestsPerSecond) / sum(rowPairs.map(({ reference }) => reference), (run) => run.requestsPerSecond)
    const results = [
      {
        name: bareRow!.name,
        goal: null,
        comparison: false,
        ...mean(pairs.flat().map(({ reference }) => reference)),
        ratio: 1,
        disturbed: { reference: false, run: false }
      },
      ...measured.map((row, i) => ({
        name: row.name,
        goal: row.goal ?? null,
        comparison: row.comparison ?? false,
        ...mean(pairs[i]!.map(({ run }) => run)),
        steal: Math.max(...pairs[i]!.map(stealOf)),
        stealPeak: Math.max(...pairs[i]!.map(stealPeakOf)),
        ratio: ratioOf(pairs[i]!),
        disturbed: disturbanceOf(pairs[i]!)
      }))
    ]
    const consoleTimes = await consoleFirstPage(env, accountId, server.url, CONSOLE_SAMPLES)

    const usageOf = async (url: string, k: string) =>
      ((await (await fetch(`${url}/v2/usage`, { headers: { "x-api-key": k } })).json()) as { data: { plateQueries: { used: number }; moduleQueries: { used: number } } }).data
    const production = await usageOf(server.url, key)
    const sandbox = await usageOf(server.sandboxUrl, sandboxKey)
    const metering = {
      plateQueriesUsed: production.plateQueries.used,
      vehicleAnswers,
      moduleQueriesUsed: sandbox.moduleQueries.used,
      moduleQueriesExpected: 2,
      exact: production.plateQueries.used === vehicleAnswers && sandbox.moduleQueries.used === 2
    }

    await Fs.mkdir(Path.join(ROOT, "bench", "results"), { recursive: true })
    await Fs.writeFile(Path.join(ROOT, "bench", "results", "latest.json"), JSON.stringify({
      date: new Date().toISOString(),
      machine: { cpus: Os.cpus().length, model: Os.cpus()[0]?.model ?? "unknown", node: process.version },
      settings: { durationSeconds: DURATION_S, connections: CONNECTIONS, rounds: ROUNDS, plate: PLATE, apiProcesses: API_PROCESSES, maxSteal: MAX_STEAL, maxStealPeak: MAX_STEAL_PEAK },
      stealRepeats: repeated.map(({ peak, steal }) => ({ steal: Number(steal.toFixed(3)), peak: Number(peak.toFixed(3)) })),
      rows: results.map((r) => ({ ...r, ratio: Number(r.ratio.toFixed(3)) })),
      metering,
      console: { firstPageMs: consoleTimes.map((t) => Number(t.toFixed(1))), goalMs: CONSOLE_FIRST_PAGE_GOAL_MS }
    }, null, 2) + "\n")

    console.log(`\n${Os.cpus().length} CPUs, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, API_PROCESSES=${API_PROCESSES}, ${process.version}\n`)
    console.log("| row                                  | req/s    | p50 ms | p99 ms | × bare | goal   | KB/req | errors | idle % | steal % (peak) |")
    console.log("|--------------------------------------|----------|--------|--------|--------|--------|--------|--------|--------|----------------|")
    /** A ratio goal's mark: undecided (?) where the steal the row kept could have made the verdict. */
    const verdict = (r: typeof results[number], met: boolean) =>
      (met ? r.disturbed.reference : r.disturbed.run) ? "?" : met ? "✓" : "✗"
    const anyDisturbed = (r: typeof results[number]) => r.disturbed.reference || r.disturbed.run
    for (const r of results) {
      const { ratio } = r
      const goal = r.goal === null ? "" : `${verdict(r, ratio >= r.goal)} ${r.goal}`
      const kb = r.bytesPerRequest === null ? "" : (r.bytesPerRequest / 1024).toFixed(1)
      console.log(`| ${r.name.padEnd(36)} | ${r.requestsPerSecond.toFixed(0).padStart(8)} | ${String(r.p50).padStart(6)} | ${String(r.p99).padStart(6)} | ${ratio.toFixed(3).padStart(6)} | ${goal.padStart(6)} | ${kb.padStart(6)} | ${String(r.other).padStart(6)} | ${(r.idle === null ? "" : (r.idle * 100).toFixed(0)).padStart(6)} | ${((r.steal === null ? "" : `${(r.steal * 100).toFixed(0)} (${((r.stealPeak ?? 0) * 100).toFixed(0)})`) + (anyDisturbed(r) ? "*" : "")).padStart(14)} |`)
    }
    const repeats = repeated.map(({ peak, steal }) => `${(steal * 100).toFixed(0)}% (${(peak * 100).toFixed(0)}%)`)
    console.log(`\nsteal: ${repeats.length} pair(s) done again, the hypervisor having taken more than ${(MAX_STEAL * 100).toFixed(0)}% of the machine's CPU during a run, or more than ${(MAX_STEAL_PEAK * 100).toFixed(0)}% in one second of it${repeats.length === 0 ? "" : ` (${repeats.join(", ")})`}; the steal column is the most of a row's kept runs, and in brackets of their worst second${!results.some(anyDisturbed) ? "" : `, * where none of ${STEAL_ATTEMPTS} pairs was under both`}`)
    const named = (name: string) => results.find((r) => r.name === name)!
    const vehicle = named(`GET /v2/vehicles/${PLATE} (metered)`)
    const tracing = results.at(-1)!
    console.log(`\ntracing: on, the vehicle query does ${tracing.requestsPerSecond.toFixed(0)} req/s against ${vehicle.requestsPerSecond.toFixed(0)} off (${((tracing.requestsPerSecond / vehicle.requestsPerSecond - 1) * 100).toFixed(1)}%), ${(((tracing.bytesPerRequest ?? 0) - (vehicle.bytesPerRequest ?? 0)) / 1024).toFixed(1)} KB more per request; ${sink.spans()} spans exported. Off, no span is made: Effect's tracer is disabled and the listener starts none`)
    const allocationMet = vehicle.bytesPerRequest !== null && vehicle.bytesPerRequest <= VEHICLE_ALLOCATION_GOAL
    console.log(`\nmetering: plateQueries.used = ${metering.plateQueriesUsed}, 200 vehicle answers = ${vehicleAnswers}; moduleQueries.used = ${metering.moduleQueriesUsed} (expected 2: reuses and polls charge nothing): ${metering.exact ? "exact" : "MISMATCH"}`)
    console.log(`\nplain Node + pg (bench/reference-server.ts): group commit per key, the same admission statements, nothing else; the metered vehicle query does ${(vehicle.requestsPerSecond / named(PLAIN_VEHICLE).requestsPerSecond).toFixed(2)}× its vehicle row's rate, polling ${(named(POLLING).requestsPerSecond / named(PLAIN_POLL).requestsPerSecond).toFixed(2)}× its poll row's`)
    const slow = results.slice(1).filter((r) => !r.comparison && r.p99 > P99_GOAL_MS)
    const undecided = slow.filter((r) => r.disturbed.run)
    const missed = slow.filter((r) => !r.disturbed.run)
    const listed = (rows: ReadonlyArray<typeof results[number]>) => rows.map((r) => `${r.name} (${r.p99} ms)`).join(", ")
    console.log(`p99 ≤ ${P99_GOAL_MS} ms (after each run's first second, its ramp-up; with it, the rows' p99 read ${results.map((r) => r.p99WithRampUp).join("/")} ms): ${slow.length === 0 ? "✓ every row" : [
      ...(missed.length === 0 ? [] : [`✗ ${listed(missed)}`]),
      ...(undecided.length === 0 ? [] : [`? ${listed(undecided)} (disturbed)`])
    ].join("; ")}`)
    console.log(`allocation: ${((vehicle.bytesPerRequest ?? 0) / 1024).toFixed(1)} KB per vehicle query (goal ≤ ${VEHICLE_ALLOCATION_GOAL / 1024} KB): ${allocationMet ? "✓" : "✗"}; the server's heap growth between collections (--trace-gc), over every request sent`)
    const slowest = consoleTimes.at(-1)!
    console.log(`console: first page (sign-in submitted, overview, its CSS and scripts) over ${consoleTimes.length} fresh sessions: median ${consoleTimes[Math.floor(consoleTimes.length / 2)]!.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms (goal < ${CONSOLE_FIRST_PAGE_GOAL_MS} ms): ${slowest < CONSOLE_FIRST_PAGE_GOAL_MS ? "✓" : "✗"}`)
    console.log("written: bench/results/latest.json")
    if (!metering.exact) process.exitCode = 1
  } finally {
    bare.child.kill("SIGTERM")
    plainNodeServer?.child.kill("SIGTERM")
    traced.child.kill("SIGTERM")
    await new Promise((resolve) => traced.child.once("exit", resolve))
    await sink.close()
    server.child.kill("SIGTERM")
    await new Promise((resolve) => server.child.once("exit", resolve))
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
