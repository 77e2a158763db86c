/**
 * A row's rounds summed up, the results file (bench/results/<date>T<time>-<commit>.json, and
 * latest.json), and what is printed: one table of the overall numbers and a line per goal.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { RESULTS_DIR } from "./config.js"
import type { Goal, RowOverall } from "./goals.js"
import { merge, percentile } from "./histogram.js"
import type { Run } from "./measure.js"
import type { Row } from "./rows.js"

export interface RoundRecord {
  readonly round: number
  /** How long the bench waited, before the run, for every target to be idle (and whether they were). */
  readonly waitedForIdleMs: number
  readonly targetsIdle: boolean
  readonly run: Run
}

export interface RowResult {
  readonly id: string
  readonly name: string
  readonly target: string
  readonly warmup: Omit<Run, "histogram">
  readonly rounds: ReadonlyArray<RoundRecord>
  readonly overall: RowOverall & {
    readonly minRequestsPerSecond: number
    readonly maxRequestsPerSecond: number
    readonly p50Ms: number | null
    readonly ok: number
    readonly other: number
    readonly otherStatuses: Record<string, number>
    readonly errors: number
    readonly responses: number
    readonly worstSteal: number | null
    readonly meanIdle: number | null
    readonly worstOthers: number | null
  }
}

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

export const withoutHistogram = ({ histogram: _, ...rest }: Run) => rest

export const summarise = (row: Row, warmup: Run, rounds: ReadonlyArray<RoundRecord>): RowResult => {
  const runs = rounds.map((r) => r.run)
  const rates = runs.map((r) => r.requestsPerSecond)
  const histogram = merge(runs.map((r) => r.histogram))
  const otherStatuses: Record<string, number> = {}
  for (const run of runs) for (const [status, count] of Object.entries(run.otherStatuses)) otherStatuses[status] = (otherStatuses[status] ?? 0) + count
  const ok = sum(runs.map((r) => r.ok))
  const other = sum(runs.map((r) => r.other))
  const errors = sum(runs.map((r) => r.errors))
  const notFound = row.vehicle ? ok - sum(runs.map((r) => r.found ?? 0)) : 0
  const problems = [
    other > 0 ? `${other} non-2xx answers (${Object.entries(otherStatuses).map(([s, c]) => `${c} × ${s}`).join(", ")})` : "",
    errors > 0 ? `${errors} connection errors or timeouts` : "",
    notFound > 0 ? `${notFound} 200 answers without "found":true` : ""
  ].filter(Boolean)
  const known = (of: (run: Run) => number | null) => runs.map(of).filter((s): s is number => s !== null)
  const steals = known((r) => r.steal)
  const idles = known((r) => r.idle)
  const others = known((r) => r.others)
  return {
    id: row.id,
    name: row.name,
    target: row.target.name,
    warmup: withoutHistogram(warmup),
    rounds,
    overall: {
      id: row.id,
      meanRequestsPerSecond: sum(rates) / Math.max(1, rates.length),
      minRequestsPerSecond: Math.min(...rates),
      maxRequestsPerSecond: Math.max(...rates),
      p50Ms: percentile(histogram, 0.5),
      p99Ms: percentile(histogram, 0.99),
      ok,
      other,
      otherStatuses,
      errors,
      responses: sum(runs.map((r) => r.responses)),
      worstSteal: steals.length === 0 ? null : Math.max(...steals),
      meanIdle: idles.length === 0 ? null : sum(idles) / idles.length,
      worstOthers: others.length === 0 ? null : Math.max(...others),
      invalid: problems.length === 0 ? null : problems.join(", ")
    }
  }
}

const stamp = (date: Date) => date.toISOString().slice(0, 16).replace(/:/g, "")

export const writeResults = async (date: Date, short: string, results: object) => {
  await Fs.mkdir(RESULTS_DIR, { recursive: true })
  // each histogram on one line: a file that people read, and that stays small
  const histograms: Array<string> = []
  const text = JSON.stringify(results, (key, value: unknown) => (key === "histogram" ? `@histogram${histograms.push(JSON.stringify(value)) - 1}` : value), 1)
    .replace(/"@histogram(\d+)"/g, (_, i: string) => histograms[Number(i)]!) + "\n"
  const file = Path.join(RESULTS_DIR, `${stamp(date)}-${short}.json`)
  await Fs.writeFile(file, text)
  await Fs.writeFile(Path.join(RESULTS_DIR, "latest.json"), text)
  return file
}

const percent = (share: number | null) => (share === null ? "–" : `${(share * 100).toFixed(1)}`)
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const ms = (value: number | null) => (value === null ? "–" : value.toFixed(2))

export const printTable = (rows: ReadonlyArray<RowResult>) => {
  const header = ["row", "req/s (mean)", "min–max", "p50 ms", "p99 ms", "2xx", "other", "errors", "steal %", "others' CPU %", "idle %"]
  const lines = rows.map((r) => {
    const o = r.overall
    return [
      r.name + (o.invalid ? " (!)" : ""), int(o.meanRequestsPerSecond), `${int(o.minRequestsPerSecond)}–${int(o.maxRequestsPerSecond)}`,
      ms(o.p50Ms), ms(o.p99Ms), int(o.ok), int(o.other), int(o.errors), percent(o.worstSteal), percent(o.worstOthers), percent(o.meanIdle)
    ]
  })
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const format = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  console.log(format(header))
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`)
  for (const line of lines) console.log(format(line))
  console.log("steal: the most the hypervisor took in one of the row's runs; others' CPU: the most used by processes outside the bench in one run; idle: the mean (shares of the machine's CPU)")
  for (const r of rows.filter((x) => x.overall.invalid)) console.log(`(!) ${r.name}: ${r.overall.invalid}`)
}

const MARK: Record<Goal["verdict"], string> = { met: "✓", missed: "✗", "not measured": "✗ not measured:", "no baseline": "– no baseline:" }

export const printGoals = (goals: ReadonlyArray<Goal>) => {
  for (const g of goals) console.log(`${MARK[g.verdict]} ${g.source}: ${g.goal} — ${g.detail}`)
}
