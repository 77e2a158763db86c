/**
 * Real processes for end-to-end tests: the API server and the `vda` CLI, exactly as operators run
 * them. Every process started here is killed when the test file ends.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

/** Environment for a child: ours minus anything that would point it elsewhere. */
const childEnv = (env: Record<string, string>) => {
  const base = { ...process.env }
  for (const name of ["DATABASE_URL", "DATA_DIR", "PORT", "SANDBOX_PORT", "LOG_LEVEL", "WORKFLOW_ENGINE"]) delete base[name]
  return { ...base, ...env }
}

export const waitFor = async <A>(
  attempt: () => A | undefined | Promise<A | undefined>,
  what: string,
  deadlineMs = 30_000
): Promise<A> => {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const result = await attempt()
    if (result !== undefined) return result
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly productionUrl: string
  readonly sandboxUrl: string
  output(): string
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited: Promise<number | null>
}

/** Spawns `npm start`'s entry (`node src/start.js`) and resolves once both listeners are open. */
export const startServer = async (env: Record<string, string>): Promise<ServerProcess> => {
  const child = spawn(process.execPath, ["src/start.js"], {
    cwd: ROOT,
    env: childEnv({ PORT: "0", SANDBOX_PORT: "0", HOST: "127.0.0.1", ...env }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  let exitCode: number | null | undefined
  void exited.then((code) => (exitCode = code))
  const urls = await waitFor(() => {
    if (exitCode !== undefined) throw new Error(`server exited (${exitCode}):\n${output}`)
    const production = /production API listening on (http:\/\/\S+)/.exec(output)?.[1]
    const sandbox = /sandbox API listening on (http:\/\/\S+)/.exec(output)?.[1]
    return production && sandbox ? { production, sandbox } : undefined
  }, "the server to listen")
  return {
    child,
    productionUrl: urls.production,
    sandboxUrl: urls.sandbox,
    output: () => output,
    exited,
    stop: (signal = "SIGTERM") => {
      child.kill(signal)
      return exited
    }
  }
}

export interface WorkerProcess {
  readonly child: ChildProcess
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited: Promise<number | null>
}

/** Spawns `npm run worker`'s entry (`node worker/start.js`); resolves once it polls, or fails if it exits. */
export const startWorker = async (env: Record<string, string>): Promise<WorkerProcess> => {
  const child = spawn(process.execPath, ["worker/start.js"], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  let exitCode: number | null | undefined
  void exited.then((code) => (exitCode = code))
  await waitFor(() => {
    if (exitCode !== undefined) throw new Error(`worker exited (${exitCode}):\n${output}`)
    return output.includes("worker polling") ? true : undefined
  }, "the worker to poll", 90_000)
  return {
    child,
    output: () => output,
    exited,
    stop: (signal = "SIGTERM") => {
      child.kill(signal)
      return exited
    }
  }
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runVda = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [Path.join(ROOT, "src/cli/vda.js"), ...args], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })
