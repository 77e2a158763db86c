/**
 * The goals of issues 27 and 28, decided from one run's results (and, for issue 27's "no slower /
 * 2× today", a baseline results file). A goal whose rows are missing (no peers) is "not measured",
 * which fails the run like a miss; one without a baseline is "no baseline", which does not. A row
 * with any answer other than 2xx, any connection error or timeout, or (vehicle rows) any 200 that
 * was not `found:true`, is not a valid measurement: the goals that use it are missed.
 */
import * as Fs from "node:fs/promises"
import { ROW_IDS } from "./rows.js"
import type { TargetName } from "./targets.js"

export type Verdict = "met" | "missed" | "not measured" | "no baseline"

export interface Goal {
  readonly source: "issue 27" | "issue 28"
  readonly goal: string
  readonly verdict: Verdict
  readonly detail: string
}

export interface RowOverall {
  readonly id: string
  readonly meanRequestsPerSecond: number
  readonly p99Ms: number | null
  /** Why the row's runs are not a valid measurement, if they are not. */
  readonly invalid: string | null
}

export interface Allocation {
  readonly bytesPerQuery: number
}

export interface MeteringCheck {
  readonly target: TargetName
  readonly answered200: { readonly one: number; readonly many: number }
  readonly consumed: { readonly one: number; readonly many: number }
}

export interface BurstCheck {
  readonly target: TargetName
  readonly ok: number
  readonly quotaExceeded: number
  readonly other: number
  readonly errors: number
  readonly consumed: number
}

export interface GoalInputs {
  readonly rows: ReadonlyArray<RowOverall>
  readonly allocation: Partial<Record<"one" | "many", Allocation>>
  readonly metering: ReadonlyArray<MeteringCheck>
  readonly bursts: ReadonlyArray<BurstCheck>
  readonly peersPresent: boolean
  readonly baseline: Baseline | null
  /** This run's CPU (`describeMachine`). */
  readonly cpuModel: string
  readonly burst: { readonly limit: number; readonly requests: number }
}

export interface Baseline {
  readonly file: string
  readonly date: string
  readonly commit: string
  /** The CPU it was measured on: a quotient from another CPU is not comparable. */
  readonly cpuModel: string
  readonly meanRequestsPerSecond: ReadonlyMap<string, number>
}

const readBaselineFile = async (file: string): Promise<Baseline> => {
  const json = JSON.parse(await Fs.readFile(file, "utf8")) as {
    date?: string
    commit?: { short?: string }
    machine?: { cpuModel?: string }
    rows?: Array<{ id: string; overall: { meanRequestsPerSecond: number } }>
  }
  if (!Array.isArray(json.rows)) throw new Error(`BENCH_BASELINE ${file} is not a results file of this bench (no rows)`)
  return {
    file,
    date: json.date ?? "unknown",
    commit: json.commit?.short ?? "unknown",
    cpuModel: json.machine?.cpuModel ?? "unknown",
    meanRequestsPerSecond: new Map(json.rows.map((r) => [r.id, r.overall.meanRequestsPerSecond]))
  }
}

/**
 * BENCH_BASELINE: one results file, or several runs of the same code on the same CPU separated by
 * commas, whose rows count as the mean of their means (each run's rounds weigh alike).
 */
export const readBaseline = async (files: string): Promise<Baseline> => {
  const runs = await Promise.all(files.split(",").map((file) => readBaselineFile(file.trim())))
  const [first, ...rest] = runs
  if (first === undefined) throw new Error("BENCH_BASELINE names no file")
  for (const run of rest) {
    if (run.commit !== first.commit || run.cpuModel !== first.cpuModel) {
      throw new Error(`BENCH_BASELINE's runs must be of one commit on one CPU: ${first.file} is ${first.commit} on ${first.cpuModel}, ` +
        `${run.file} ${run.commit} on ${run.cpuModel}`)
    }
  }
  const ids = [...first.meanRequestsPerSecond.keys()].filter((id) => rest.every((run) => run.meanRequestsPerSecond.has(id)))
  return {
    file: runs.map((run) => run.file).join(", "),
    date: runs.map((run) => run.date).join(", "),
    commit: first.commit,
    cpuModel: first.cpuModel,
    meanRequestsPerSecond: new Map(ids.map((id) => [id, runs.reduce((sum, run) => sum + run.meanRequestsPerSecond.get(id)!, 0) / runs.length]))
  }
}

const P99_GOAL_MS = 20
const ALLOCATION_GOAL_BYTES = 40 * 1024
const YARDSTICK = ROW_IDS.vehicleOne("group-commit")

const n = (value: number) => Math.round(value).toLocaleString("en-US")
const ratio = (value: number) => `${value.toFixed(3)}×`

export const decideGoals = (inputs: GoalInputs): Array<Goal> => {
  const row = (id: string) => inputs.rows.find((r) => r.id === id)
  const goals: Array<Goal> = []
  const add = (source: Goal["source"], goal: string, verdict: Verdict, detail: string) => goals.push({ source, goal, verdict, detail })
  const invalidOf = (...rows: Array<RowOverall>) => rows.filter((r) => r.invalid !== null).map((r) => `${r.id}: ${r.invalid}`).join("; ")

  const versusPeer = (source: Goal["source"], kind: "one" | "many", factor: number) => {
    const id = kind === "one" ? ROW_IDS.vehicleOne : ROW_IDS.vehicleMany
    const goal = `vehicle ${kind === "one" ? "one-account" : "many"} ≥ ${factor.toFixed(1)} × group-commit`
    const ours = row(id("service"))
    const peer = row(id("group-commit"))
    if (!ours || !peer) return add(source, goal, "not measured", inputs.peersPresent ? "row missing" : "no peers in this run")
    const invalid = invalidOf(ours, peer)
    const value = ours.meanRequestsPerSecond / peer.meanRequestsPerSecond
    const detail = `${n(ours.meanRequestsPerSecond)} / ${n(peer.meanRequestsPerSecond)} req/s = ${ratio(value)}${invalid ? `; invalid: ${invalid}` : ""}`
    add(source, goal, !invalid && value >= factor ? "met" : "missed", detail)
  }

  versusPeer("issue 28", "one", 1)
  versusPeer("issue 28", "many", 1)
  for (const kind of ["one", "many"] as const) {
    const r = row(kind === "one" ? ROW_IDS.vehicleOne("service") : ROW_IDS.vehicleMany("service"))
    const goal = `service p99 ≤ ${P99_GOAL_MS} ms, vehicle ${kind === "one" ? "one-account" : "many"} (every round's latencies merged)`
    if (!r || r.p99Ms === null) add("issue 28", goal, "not measured", "no responses")
    else add("issue 28", goal, r.p99Ms <= P99_GOAL_MS && !r.invalid ? "met" : "missed", `p99 ${r.p99Ms.toFixed(2)} ms${r.invalid ? `; invalid: ${r.invalid}` : ""}`)
  }
  for (const kind of ["one", "many"] as const) {
    const goal = `≤ 40 KB allocated per vehicle query (${kind === "one" ? "one account" : "many accounts"})`
    const a = inputs.allocation[kind]
    if (!a) add("issue 28", goal, "not measured", "no allocation run")
    else add("issue 28", goal, a.bytesPerQuery <= ALLOCATION_GOAL_BYTES ? "met" : "missed", `${(a.bytesPerQuery / 1024).toFixed(1)} KB per query`)
  }
  for (const target of ["service", "group-commit", "naive"] as const) {
    const goal = `metering exact, ${target}: plate queries consumed = 200 answers`
    const m = inputs.metering.find((x) => x.target === target)
    if (!m) {
      add("issue 28", goal, "not measured", inputs.peersPresent ? "no check" : "no peers in this run")
      continue
    }
    const exact = m.consumed.one === m.answered200.one && m.consumed.many === m.answered200.many
    add("issue 28", goal, exact ? "met" : "missed",
      `one account ${n(m.consumed.one)} consumed / ${n(m.answered200.one)} answered; many ${n(m.consumed.many)} / ${n(m.answered200.many)}`)
  }
  for (const target of ["service", "group-commit", "naive"] as const) {
    const { limit, requests } = inputs.burst
    const goal = `burst of ${n(requests)} at a limit of ${n(limit)}, ${target}: ${n(limit)} × 200, ${n(requests - limit)} × 429 quota_exceeded, ${n(limit)} consumed`
    const b = inputs.bursts.find((x) => x.target === target)
    if (!b) {
      add("issue 28", goal, "not measured", inputs.peersPresent ? "no check" : "no peers in this run")
      continue
    }
    const exact = b.ok === limit && b.quotaExceeded === requests - limit && b.other === 0 && b.errors === 0 && b.consumed === limit
    add("issue 28", goal, exact ? "met" : "missed",
      `${n(b.ok)} × 200, ${n(b.quotaExceeded)} × 429 quota_exceeded, ${n(b.other)} other, ${n(b.errors)} errors, ${n(b.consumed)} consumed`)
  }

  versusPeer("issue 27", "one", 0.5)
  const baselineRows: Array<[id: string, k: number]> = [
    [ROW_IDS.vehicleOne("service"), 1], [ROW_IDS.status, 1], [ROW_IDS.poll, 1],
    [ROW_IDS.moduleCreation, 2], [ROW_IDS.webhookConfig, 2], [ROW_IDS.usage, 2], [ROW_IDS.v1ReportPoll, 2]
  ]
  const yardstick = row(YARDSTICK)
  for (const [id, k] of baselineRows) {
    const goal = `${id}: (req/s ÷ group-commit one-account req/s) ≥ ${k} × the baseline's`
    const r = row(id)
    if (!inputs.baseline) {
      add("issue 27", goal, "no baseline", "BENCH_BASELINE not given")
      continue
    }
    const then = inputs.baseline.meanRequestsPerSecond.get(id)
    const thenYardstick = inputs.baseline.meanRequestsPerSecond.get(YARDSTICK)
    if (then === undefined || thenYardstick === undefined) {
      add("issue 27", goal, "no baseline", `${inputs.baseline.file} has no ${then === undefined ? id : YARDSTICK} row`)
      continue
    }
    if (inputs.baseline.cpuModel !== inputs.cpuModel) {
      // the service and the peer do not gain alike from a faster CPU: measure the baseline here
      add("issue 27", goal, "not measured", `${inputs.baseline.file} was measured on ${inputs.baseline.cpuModel}, this run on ${inputs.cpuModel}`)
      continue
    }
    if (!r || !yardstick) {
      add("issue 27", goal, "not measured", !yardstick ? "no group-commit peer in this run" : "row missing")
      continue
    }
    const now = r.meanRequestsPerSecond / yardstick.meanRequestsPerSecond
    const before = then / thenYardstick
    const invalid = invalidOf(r, yardstick)
    add("issue 27", goal, !invalid && now >= k * before ? "met" : "missed",
      `now ${ratio(now)} (${n(r.meanRequestsPerSecond)} / ${n(yardstick.meanRequestsPerSecond)}), baseline ${ratio(before)} ` +
        `(${n(then)} / ${n(thenYardstick)}): ${(now / before).toFixed(2)}× the baseline${invalid ? `; invalid: ${invalid}` : ""}`)
  }
  return goals
}
