/**
 * Real processes for end-to-end tests: the API server and the `vda` CLI, exactly as operators run
 * them. Every process started here is killed when the test file ends.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll } from "vitest"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

/** Environment for a child: ours minus anything that would point it elsewhere. */
const childEnv = (env: Record<string, string>) => {
  const base = { ...process.env }
  for (const name of [
    "DATABASE_URL", "DATA_DIR", "PORT", "SANDBOX_PORT", "ADMIN_PORT", "LOG_LEVEL", "LOG_FORMAT", "WORKFLOW_ENGINE",
    "OTEL_EXPORTER_OTLP_ENDPOINT"
  ]) delete base[name]
  return { ...base, ...env }
}

/**
 * Runs `attempt` every 50 ms, on the live clock, until it gives a value; dies when `deadlineMs`
 * pass without one.
 */
export const eventually = <A, E, R>(attempt: Effect.Effect<A | undefined, E, R>, what: string, deadlineMs = 30_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + deadlineMs
    for (;;) {
      const result = yield* attempt
      if (result !== undefined) return result
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(50)
    }
  })

/** `eventually` for a test outside Effect; it rejects with what `attempt` threw, or the timeout. */
export const waitFor = <A>(
  attempt: () => A | undefined | Promise<A | undefined>,
  what: string,
  deadlineMs = 30_000
): Promise<A> => Effect.runPromise(eventually(Effect.promise(async () => attempt()), what, deadlineMs))

/** A long-running child process of ours, its output captured. */
export interface ChildProcessHandle {
  readonly child: ChildProcess
  output(): string
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited: Promise<number | null>
}

export interface ServerProcess extends ChildProcessHandle {
  readonly productionUrl: string
  readonly sandboxUrl: string
}

export type WorkerProcess = ChildProcessHandle

/**
 * Spawns `node ENTRY` and waits until `ready` finds what it waits for in the output; fails with
 * the output if the process exits first.
 */
const startProcess = async <A>(
  entry: string,
  env: Record<string, string>,
  what: string,
  ready: (output: string) => A | undefined,
  deadlineMs?: number
): Promise<ChildProcessHandle & { readonly ready: A }> => {
  const child = spawn(process.execPath, [entry], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  let exitCode: number | null | undefined
  void exited.then((code) => (exitCode = code))
  const found = await waitFor(() => {
    if (exitCode !== undefined) throw new Error(`${entry} exited (${exitCode}):\n${output}`)
    return ready(output)
  }, what, deadlineMs)
  return {
    child,
    ready: found,
    output: () => output,
    exited,
    stop: (signal = "SIGTERM") => {
      child.kill(signal)
      return exited
    }
  }
}

/** Spawns `npm start`'s entry (`node src/start.js`) and resolves once both listeners are open. */
export const startServer = async (env: Record<string, string>): Promise<ServerProcess> => {
  const server = await startProcess("src/start.js", { PORT: "0", SANDBOX_PORT: "0", ADMIN_PORT: "0", HOST: "127.0.0.1", ...env }, "the server to listen", (output) => {
    const production = /production API listening on (http:\/\/[^\s"]+)/.exec(output)?.[1]
    const sandbox = /sandbox API listening on (http:\/\/[^\s"]+)/.exec(output)?.[1]
    return production && sandbox ? { production, sandbox } : undefined
  })
  return { ...server, productionUrl: server.ready.production, sandboxUrl: server.ready.sandbox }
}

/** Spawns `npm run worker`'s entry (`node worker/start.js`); resolves once it polls, or fails if it exits. */
export const startWorker = (env: Record<string, string>): Promise<WorkerProcess> =>
  startProcess("worker/start.js", env, "the worker to poll", (output) => (output.includes("worker polling") ? true : undefined), 90_000)

/** What a process that stops on its own said: its exit code and everything it wrote. */
export interface Ended {
  readonly code: number | null
  readonly output: string
}

/** Runs `node ENTRY` until it exits on its own (killed after the deadline, which fails the caller). */
export const runToExit = (entry: string, env: Record<string, string>, deadlineMs = 60_000): Promise<Ended> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] })
    children.add(child)
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${entry} did not exit within ${deadlineMs} ms:\n${output}`))
    }, deadlineMs)
    child.on("error", reject)
    child.on("exit", (code) => {
      clearTimeout(deadline)
      resolve({ code, output })
    })
  })

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

/**
 * An account made with `vda`, as an operator makes one: the plan (a custom plan's terms given as
 * `set-custom` flags) and a key for each environment asked for.
 */
export const cliAccount = async (
  env: Record<string, string>,
  options: {
    readonly owner: string
    readonly plan: string
    readonly custom?: ReadonlyArray<string>
    readonly environments: ReadonlyArray<"production" | "sandbox">
  }
) => {
  const account = JSON.parse((await runVda(["accounts", "create", "--owner", options.owner, "--plan", options.plan, "--json"], env)).stdout)
  if (options.custom !== undefined) await runVda(["accounts", "set-custom", account.id, ...options.custom], env)
  const keys: Partial<Record<"production" | "sandbox", string>> = {}
  for (const environment of options.environments) {
    keys[environment] = JSON.parse((await runVda(["keys", "create", "--account", account.id, "--environment", environment, "--json"], env)).stdout).key
  }
  return { id: account.id as string, keys: keys as Record<"production" | "sandbox", string> }
}
