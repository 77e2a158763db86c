/**
 * `npm run bench`: the service against two plain-Node peers, side by side in one run (bench/README.md).
 *
 * Why issue 27's goals divide every rate by the group-commit peer's: this machine's speed drifts
 * over minutes (a virtual machine on a shared host, which takes CPU away in spells), so a rate
 * measured today cannot be set against one measured on another day. The group-commit peer's
 * vehicle one-account row, run in the same interleaved rounds on the same machine and Node, is the
 * yardstick: each row's mean req/s is divided by the peer's mean req/s in the same run, and that
 * quotient is compared with the same quotient in the baseline file (BENCH_BASELINE). This
 * normalisation was chosen before any number of this bench was seen.
 */
import { measureAllocation, readMetering, runBursts } from "./checks.js"
import { cleanUp, cleanUpOnSignals, wasInterrupted } from "./cleanup.js"
import { settings } from "./config.js"
import { decideGoals, readBaseline } from "./goals.js"
import { describeCommit, describeMachine } from "./machine.js"
import { type Run, runWhenIdle } from "./measure.js"
import { printGoals, printTable, type RoundRecord, summarise, writeResults } from "./results.js"
import { type Row, ROW_IDS } from "./rows.js"
import { Answers, prepare, type Prepared } from "./setup.js"
import { temporaryRoot } from "./targets.js"

const began = Date.now()
const elapsed = () => `${((Date.now() - began) / 1000).toFixed(0)} s`
const say = (line: string) => console.log(`[${elapsed().padStart(5)}] ${line}`)
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const pct = (share: number | null) => (share === null ? "–" : `${(share * 100).toFixed(1)}%`)

/** Measured on the development machine: starting and seeding the targets, and the checks after the rounds. */
const SETUP_AND_CHECKS_S = 60
/** Waiting for the targets to be idle and starting the load generator, per run. */
const PER_RUN_S = 1

const plan = (rows: number, peers: boolean) => {
  const runs = rows * (1 + settings.rounds) + 2 + (peers ? 3 : 1)
  const seconds = rows * (settings.warmupS + settings.rounds * settings.durationS) + 2 * (settings.durationS + 2) + runs * PER_RUN_S + SETUP_AND_CHECKS_S
  return `${rows} rows × (a ${settings.warmupS} s warm-up + ${settings.rounds} rounds of ${settings.durationS} s), 2 allocation runs, ` +
    `${peers ? 3 : 1} bursts, ${settings.connections} connections: about ${Math.ceil(seconds / 60)} min in all`
}

/** One warm-up run per row, then the rounds: round 1 runs every row once, then round 2… Every run is kept. */
const runRounds = async (root: string, prepared: Prepared, answers: Answers) => {
  const targets = prepared.targets
  const measure = async (row: Row, seed: number, durationS: number) => {
    const measured = await runWhenIdle(root, targets, row.spec(seed), { durationS })
    if (row.vehicle) answers.count(row.target, row.vehicle, measured.run)
    return measured
  }
  say(`warm-up: one ${settings.warmupS} s run per row, not counted`)
  const warmups = new Map<string, Run>()
  for (const row of prepared.rows) warmups.set(row.id, (await measure(row, settings.seed, settings.warmupS)).run)
  const rounds = new Map<string, Array<RoundRecord>>(prepared.rows.map((row) => [row.id, []]))
  for (let round = 1; round <= settings.rounds; round++) {
    say(`round ${round} of ${settings.rounds}`)
    for (const row of prepared.rows) {
      const measured = await measure(row, settings.seed + round, settings.durationS)
      rounds.get(row.id)!.push({ round, ...measured })
      const r = measured.run
      say(`  ${row.name}: ${int(r.requestsPerSecond)} req/s, p99 ${r.p99Ms ?? "–"} ms, ${int(r.ok)} × 2xx, ${int(r.other + r.errors)} other/errors; ` +
        `steal ${pct(r.steal)}, others ${pct(r.others)}, idle ${pct(r.idle)}`)
    }
  }
  return prepared.rows.map((row) => summarise(row, warmups.get(row.id)!, rounds.get(row.id)!))
}

/** The floors beside the vehicle query: what Node alone and Effect's HttpApi serve with no work, and the rest as shares of it. */
const floorsLine = (results: ReadonlyArray<{ readonly id: string; readonly overall: { readonly meanRequestsPerSecond: number } }>) => {
  const rate = (id: string) => results.find((r) => r.id === id)?.overall.meanRequestsPerSecond
  const node = rate(ROW_IDS.floor("node-floor"))
  const effect = rate(ROW_IDS.floor("effect-floor"))
  if (node === undefined || effect === undefined) return "floors: not measured"
  const share = (id: string, label: string) => {
    const r = rate(id)
    return r === undefined ? "" : `; ${label} ${int(r)} req/s = ${(r / effect).toFixed(2)}× the Effect floor`
  }
  return `floors: node:http ${int(node)} req/s, Effect HttpApi ${int(effect)} req/s (${(effect / node).toFixed(2)}× node:http)` +
    share(ROW_IDS.vehicleOne("group-commit"), "the group-commit peer's metered query") +
    share(ROW_IDS.vehicleOne("service"), "the service's")
}

const main = async () => {
  cleanUpOnSignals()
  const date = new Date()
  const machine = describeMachine()
  const commit = describeCommit()
  const baseline = settings.baseline ? await readBaseline(settings.baseline) : null
  say(`commit ${commit.short}${commit.dirty ? " (dirty)" : ""}, ${machine.node}, ${machine.cores} × ${machine.cpuModel}`)
  const root = await temporaryRoot()
  const answers = new Answers()
  const prepared = await prepare(root, answers, say)
  const peersPresent = prepared.peers.length > 0
  const setupSeconds = (Date.now() - began) / 1000
  say(plan(prepared.rows.length, peersPresent))

  const results = await runRounds(root, prepared, answers)
  say("allocation: one more run of each service vehicle row with the service's allocation counter on (not counted in req/s)")
  const allocation = await measureAllocation(root, prepared, answers, settings.seed + settings.rounds + 1)
  say(`burst: ${settings.burst.requests} requests at a plate-query limit of ${settings.burst.limit}, on every target`)
  const bursts = await runBursts(root, prepared)
  say("metering: plate queries consumed against the 200 answers each target gave")
  const metering = await readMetering(prepared, answers)

  const goals = decideGoals({ rows: results.map((r) => r.overall), allocation, metering, bursts, peersPresent, baseline, cpuModel: machine.cpuModel, burst: settings.burst })
  const accountsVia = settings.accountsVia === "clone"
    ? "one made with vda (accounts create, set-custom, keys create), the others copies of its rows in SQL, every key checked over HTTP"
    : "every one made with vda"
  const file = await writeResults(date, commit.short, {
    date: date.toISOString(),
    commit,
    machine,
    settings,
    method: {
      vehicleListener: "production: registry rows imported with `vda registry import` (the peers answer from their `vehicles` table, same data)",
      manyAccounts: accountsVia,
      peers: peersPresent ? `${settings.peersDir}, installed with npm ci` : `absent (${settings.peersDir})`,
      targets: Object.fromEntries(prepared.targets.map((target) => [target.name, target.started])),
      floors: "bench/floor/: the service's one-plate answer as a constant, with no key, metering, database or log; the Effect one bundled as the service is",
      answerBytes: prepared.answerBytes,
      rate: "responses ÷ time from the first request to the last response; a timed run stops sending when its time is up and waits for the answers in flight",
      latency: "every response of every measured run; bins of 10 µs, percentiles nearest-rank at the bin's upper edge; a row's p99 merges all its rounds"
    },
    baseline: baseline === null ? null : { file: baseline.file, date: baseline.date, commit: baseline.commit },
    rows: results,
    stealPerRun: results.flatMap((r) =>
      r.rounds.map((x) => ({ row: r.id, round: x.round, steal: x.run.steal, stealWorstSecond: x.run.stealWorstSecond, idle: x.run.idle, others: x.run.others }))),
    allocation,
    metering,
    bursts,
    goals,
    setupSeconds,
    totalSeconds: (Date.now() - began) / 1000
  })

  console.log(`\n${machine.cores} × ${machine.cpuModel}, ${machine.node}, commit ${commit.short}${commit.dirty ? " (dirty)" : ""}; ` +
    `${settings.rounds} interleaved round(s) of ${settings.durationS} s per row after one ${settings.warmupS} s warm-up, ${settings.connections} connections`)
  console.log(`vehicle rows on the service's production listener (registry rows); ${settings.manyAccounts} accounts: ${accountsVia}` +
    `${peersPresent ? "" : "; NO PEERS in this run"}\n`)
  printTable(results)
  console.log(floorsLine(results))
  const kb = (bytes: number | undefined) => ((bytes ?? 0) / 1024).toFixed(1)
  console.log(`\nallocation (V8 heap, one extra run per row): ${(["one", "many"] as const)
    .map((k) => `${k} ${kb(allocation[k]?.bytesPerQuery)} KB/query at ${int(allocation[k]?.run.requestsPerSecond ?? 0)} req/s`).join(", ")}; ` +
    `idle, the service allocates ${kb(allocation.one?.idleBytesPerSecond)} KB/s`)
  console.log(`baseline: ${baseline === null ? "none (BENCH_BASELINE)" : `${baseline.file} (${baseline.date}, ${baseline.commit})`}\n`)
  printGoals(goals)
  console.log(`\nwritten: ${file} and bench/results/latest.json (${elapsed()})`)
  const failed = goals.filter((g) => g.verdict === "missed" || g.verdict === "not measured")
  if (failed.length > 0) {
    console.log(`\n${failed.length} goal(s) not met:\n${failed.map((g) => `  ${g.source}: ${g.goal} (${g.verdict})`).join("\n")}`)
    process.exitCode = 1
  }
}

try {
  await main()
} catch (error) {
  if (!wasInterrupted()) console.error(error)
  process.exitCode = 1
} finally {
  await cleanUp()
}
