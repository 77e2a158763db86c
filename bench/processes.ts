/**
 * Child processes the bench starts: all with the bench's own Node (process.execPath) and the same
 * small environment, their output kept only at its start and its end (the service writes an
 * access-log line per request), and stopped on every path out (bench/cleanup.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { ROOT } from "./config.js"

const HEAD_CHARS = 64 * 1024
const TAIL_CHARS = 16 * 1024

/** What every target and command inherits from the bench's environment; nothing else leaks in. */
export const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "TZ"]) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly pid: number
  /** The first 64 KB of its output and the last 16 KB, for errors. */
  output(): string
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  stop(): Promise<void>
}

export const start = (
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env: Record<string, string>; readonly stdin?: "pipe" | "ignore" }
): Child => {
  const child = spawn(process.execPath, [...args], { cwd: options.cwd ?? ROOT, env: options.env, stdio: [options.stdin ?? "ignore", "pipe", "pipe"] })
  let head = ""
  let tail = ""
  const keep = (chunk: Buffer) => {
    if (head.length < HEAD_CHARS) head += chunk.toString("utf8")
    else tail = (tail + chunk.toString("utf8")).slice(-TAIL_CHARS)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const running = () => child.exitCode === null && child.signalCode === null
  return {
    name,
    process: child,
    pid: child.pid ?? -1,
    output: () => (tail === "" ? head : `${head}\n[…]\n${tail}`),
    waitFor: async (pattern, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const match = pattern.exec(head)
        if (match) return match
        if (!running()) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${head}`)
        if (Date.now() > deadline) throw new Error(`${name}: no ${pattern} within ${timeoutMs / 1000} s:\n${head}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    stop: async () => {
      if (!running()) return
      child.kill("SIGTERM")
      const killed = setTimeout(() => running() && child.kill("SIGKILL"), 20_000)
      await exited
      clearTimeout(killed)
    }
  }
}

const running = new Set<ChildProcess>()

/** Ends the commands still running (bench/cleanup.ts, on an interruption). */
export const killCommands = () => {
  for (const child of running) child.kill("SIGTERM")
}

/** Runs a command to its end; answers its stdout, or throws with its output. */
export const runToEnd = (
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env: NodeJS.ProcessEnv; readonly command?: string }
) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(options.command ?? process.execPath, [...args], { cwd: options.cwd ?? ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
    running.add(child)
    child.once("exit", () => running.delete(child))
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
    child.on("error", reject)
    child.on("exit", (code, signal) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${name} failed (${code ?? signal}):\n${stderr || stdout}`)))
  })

/** Runs `work` over `items`, at most `concurrency` at a time, keeping their order. */
export const mapLimit = async <A, B>(items: ReadonlyArray<A>, concurrency: number, work: (item: A, index: number) => Promise<B>) => {
  const results = new Array<B>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}
