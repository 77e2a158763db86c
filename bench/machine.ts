/**
 * What the bench reads of the machine: its CPU, the commit, /proc/stat's idle and steal over a
 * run, and the CPU time of a target's processes (to wait for it to be idle between runs).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import { ROOT } from "./config.js"

export const describeMachine = () => {
  let model = Os.cpus()[0]?.model ?? "unknown"
  try {
    const cpuinfo = readFileSync("/proc/cpuinfo", "utf8")
    const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.+)$`, "m").exec(cpuinfo)?.[1]?.trim()
    model = `${field("model name") ?? model} (family ${field("cpu family") ?? "?"}, model ${field("model") ?? "?"})`
  } catch {}
  return { cpuModel: model, cores: Os.availableParallelism(), node: process.version, nodePath: process.execPath, platform: `${process.platform} ${Os.release()}` }
}

const git = (...args: Array<string>) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim()

export const describeCommit = () => {
  try {
    const status = git("status", "--porcelain")
    return { hash: git("rev-parse", "HEAD"), short: git("rev-parse", "--short", "HEAD"), dirty: status.length > 0, changed: status.split("\n").filter(Boolean) }
  } catch {
    return { hash: "unknown", short: "unknown", dirty: true, changed: [] }
  }
}

interface CpuTimes {
  readonly idle: number
  readonly steal: number
  readonly total: number
}

const readCpuTimes = (): CpuTimes | null => {
  try {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return { idle: fields[3]! + fields[4]!, steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) }
  } catch {
    return null
  }
}

const share = (from: CpuTimes, to: CpuTimes, of: (t: CpuTimes) => number) => (of(to) - of(from)) / Math.max(1, to.total - from.total)

export interface CpuShares {
  /** Shares of the whole machine's CPU time over the run (null where /proc/stat cannot be read). */
  readonly idle: number | null
  readonly steal: number | null
  /** The most stolen in any one second of the run. */
  readonly stealWorstSecond: number | null
  /**
   * The share used by processes that are not the bench's (not the targets, their PostgreSQL, the
   * load generator or the bench itself): other work on this machine during the run.
   */
  readonly others: number | null
}

/** Reads /proc/stat now and every second until the returned function is called; `pids` are the targets'. */
export const watchCpu = async (pids: ReadonlyArray<number>) => {
  const samples: Array<CpuTimes> = []
  const take = () => {
    const times = readCpuTimes()
    if (times !== null) samples.push(times)
  }
  const oursBefore = await ourTicks(pids)
  take()
  const timer = setInterval(take, 1_000)
  return async (): Promise<CpuShares> => {
    clearInterval(timer)
    take()
    const ours = (await ourTicks(pids)) - oursBefore
    if (samples.length < 2) return { idle: null, steal: null, stealWorstSecond: null, others: null }
    const first = samples[0]!
    const last = samples.at(-1)!
    let worst = 0
    for (let i = 1; i < samples.length; i++) worst = Math.max(worst, share(samples[i - 1]!, samples[i]!, (t) => t.steal))
    const busy = last.total - last.idle - last.steal - (first.total - first.idle - first.steal)
    return {
      idle: share(first, last, (t) => t.idle),
      steal: share(first, last, (t) => t.steal),
      stealWorstSecond: worst,
      others: Math.max(0, busy - ours) / Math.max(1, last.total - first.total)
    }
  }
}

const ticksOf = async (pid: number | "self") => {
  const stat = await Fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number)
  return { parent: fields[1] ?? -1, own: (fields[11] ?? 0) + (fields[12] ?? 0), reaped: (fields[13] ?? 0) + (fields[14] ?? 0) }
}

/**
 * CPU ticks used so far by `pids` (with their children that exited) and by their live direct
 * children (a postmaster's backends).
 */
export const treeTicks = async (pids: ReadonlyArray<number>) => {
  const roots = new Set(pids)
  let ticks = 0
  for (const entry of await Fs.readdir("/proc").catch(() => [] as Array<string>)) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    const stat = await ticksOf(pid)
    if (roots.has(pid)) ticks += stat.own + stat.reaped
    else if (roots.has(stat.parent)) ticks += stat.own
  }
  return ticks
}

/** The targets' ticks and the bench's own, with the load generator and commands it ran. */
const ourTicks = async (pids: ReadonlyArray<number>) => {
  const self = await ticksOf("self")
  return (await treeTicks(pids)) + self.own + self.reaped
}

const TICK_WINDOW_MS = 250
const IDLE_TICKS = 1

/**
 * Waits until `pids` and their children used at most one clock tick in a quarter of a second,
 * or `maxMs` passed; answers how long it waited and whether they were idle by then.
 */
export const waitIdle = async (pids: ReadonlyArray<number>, maxMs = 60_000) => {
  const started = Date.now()
  let before = await treeTicks(pids)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, TICK_WINDOW_MS))
    const now = await treeTicks(pids)
    if (now - before <= IDLE_TICKS) return { waitedMs: Date.now() - started, idle: true }
    if (Date.now() - started > maxMs) return { waitedMs: Date.now() - started, idle: false }
    before = now
  }
}
