/**
 * What the benchmark and the profiler share: the server and a bare Node reference as processes,
 * autocannon runs, the `vda` CLI, the busy account, and the server's allocations from its
 * `--trace-gc` lines.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

/**
 * A run's first second is its ramp-up (`bench/load.mjs`): rates and latencies are of the responses
 * after it. BENCH_SETTLE_S sets it.
 */
export const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 1)

export interface Run {
  /** After the ramp-up, like p50 and p99. */
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  /** The p99 of the whole run, ramp-up included, as autocannon gives it. */
  readonly p99WithRampUp: number
  readonly ok: number
  readonly other: number
  /** Every request sent, answered or not. */
  readonly total: number
  /** Bytes the server's heap allocated per request during the run (null for the bare Node row). */
  readonly bytesPerRequest: number | null
  /** The share of the machine's CPU time left idle during the run (null where /proc/stat is not). */
  readonly idle: number | null
  /**
   * The share of the machine's CPU time the hypervisor gave to other guests during the run
   * (`steal` in /proc/stat; null where it is not read): time none of the bench's processes could run.
   */
  readonly steal: number | null
  /**
   * The most the hypervisor took in any one second of the run (null where /proc/stat is not read).
   * It comes in spells of a few seconds: a spell of a second can set a run's p99 while the run's
   * share (`steal`) stays small.
   */
  readonly stealPeak: number | null
}

type CpuTimes = { readonly idle: number; readonly steal: number; readonly total: number }

/** The machine's idle, stolen and total CPU time so far, in clock ticks (Linux). */
const cpuTimes = (): CpuTimes | null => {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
    return { idle: fields[3]! + fields[4]!, steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) }
  } catch {
    return null
  }
}

const STEAL_SAMPLE_MS = 250
const SAMPLES_PER_SECOND = 1000 / STEAL_SAMPLE_MS

const stolenBetween = (from: CpuTimes, to: CpuTimes) => (to.steal - from.steal) / Math.max(1, to.total - from.total)

/** Samples the machine's CPU times every STEAL_SAMPLE_MS until stopped; answers the samples, first and last included. */
const sampleCpuTimes = () => {
  const samples: Array<CpuTimes> = []
  const take = () => {
    const times = cpuTimes()
    if (times !== null) samples.push(times)
  }
  take()
  const timer = setInterval(take, STEAL_SAMPLE_MS)
  return () => {
    clearInterval(timer)
    take()
    return samples
  }
}

/** The largest share stolen over any one second of `samples` (the whole span, if shorter). */
const peakSteal = (samples: ReadonlyArray<CpuTimes>) => {
  const span = Math.min(SAMPLES_PER_SECOND, samples.length - 1)
  let peak = 0
  for (let i = span; i < samples.length; i++) peak = Math.max(peak, stolenBetween(samples[i - span]!, samples[i]!))
  return peak
}

/**
 * Bytes the server allocates, from its `--trace-gc` lines: between two collections a process
 * allocated what its heap grew by (before this one, after the last), per process.
 */
export class Allocations {
  private total = 0
  private readonly lastAfter = new Map<string, number>()
  private pending = ""
  // found in the whole text rather than line by line: the access log's lines, most of what the
  // server writes, are skipped without a string each (the bench shares the server's two cores)
  private static readonly LINE = /^\[(\d+):[^\]\n]*\][ \t]+\d+ ms: [A-Za-z -]+?(?: \([a-z ]+\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/gm

  feed(chunk: string) {
    const text = this.pending + chunk
    const complete = text.lastIndexOf("\n") + 1
    this.pending = text.slice(complete)
    const lines = text.slice(0, complete)
    Allocations.LINE.lastIndex = 0
    for (let match = Allocations.LINE.exec(lines); match !== null; match = Allocations.LINE.exec(lines)) {
      const [, pid = "", before = "0", after = "0"] = match
      const previous = this.lastAfter.get(pid)
      if (previous !== undefined) this.total += Math.max(0, Number(before) - previous) * 1024 * 1024
      this.lastAfter.set(pid, Number(after))
    }
  }

  get bytes() {
    return this.total
  }
}

const run = (command: string, args: Array<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c) => (stdout += c))
    child.stderr.on("data", (c) => (stderr += c))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

export const vda = async (env: Record<string, string>, ...args: Array<string>) => {
  const result = await run(process.execPath, ["src/cli/vda.js", ...args], env)
  if (result.code !== 0) throw new Error(`vda ${args.join(" ")} failed: ${result.stderr}`)
  return result.stdout
}

/**
 * A run of `duration` seconds after its ramp-up, or of exactly `amount` requests: a timed run stops
 * with requests in flight (charged by the server, never seen by the client), so runs that are
 * counted use amounts, and their rate is taken to their last response (`bench/load.mjs`).
 */
export const autocannon = async (
  allocations: Allocations | undefined,
  url: string,
  headers: Record<string, string>,
  size: { duration: number } | { amount: number },
  request: { readonly method?: string; readonly body?: string } = {},
  settleSeconds = SETTLE_S
): Promise<Run> => {
  const options = { url, connections: CONNECTIONS, headers, ...request, ...size, settleSeconds }
  const before = allocations?.bytes ?? 0
  const stopSampling = sampleCpuTimes()
  const result = await run(process.execPath, [Path.join(ROOT, "bench", "load.mjs"), JSON.stringify(options)], {})
  const samples = stopSampling()
  // the run's first and last readings of /proc/stat (none where it is not read)
  const [cpuBefore, cpuAfter] = samples.length < 2 ? [null, null] : [samples[0]!, samples.at(-1)!]
  if (result.code !== 0) throw new Error(`autocannon failed: ${result.stderr}`)
  const report = JSON.parse(result.stdout)
  const total = report.requests.sent as number
  return {
    // answered requests after the ramp-up, to the last response (autocannon's average is over whole seconds)
    requestsPerSecond: report.settled.requestsPerSecond,
    p50: report.settled.p50,
    p99: report.settled.p99,
    p99WithRampUp: report.latency.p99,
    ok: report["2xx"],
    other: report.non2xx + report.errors + report.timeouts,
    total,
    bytesPerRequest: allocations === undefined || total === 0 ? null : (allocations.bytes - before) / total,
    idle: cpuBefore === null || cpuAfter === null ? null : (cpuAfter.idle - cpuBefore.idle) / Math.max(1, cpuAfter.total - cpuBefore.total),
    steal: cpuBefore === null || cpuAfter === null ? null : stolenBetween(cpuBefore, cpuAfter),
    stealPeak: cpuBefore === null ? null : peakSteal(samples)
  }
}

export const startServer = async (env: Record<string, string>, allocations: Allocations, nodeArgs: ReadonlyArray<string> = []) => {
  const child: ChildProcess = spawn(process.execPath, ["--trace-gc", ...nodeArgs, "src/start.js"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", SANDBOX_PORT: "0", ADMIN_PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (c) => {
    allocations.feed(String(c))
    if (output.length < 1_000_000) output += c
  })
  child.stderr!.on("data", (c) => (output += c))
  const deadline = Date.now() + 60_000
  for (;;) {
    const url = /production API listening on (http:\/\/[^\s"]+)/.exec(output)?.[1]
    const sandboxUrl = /sandbox API listening on (http:\/\/[^\s"]+)/.exec(output)?.[1]
    // on its own embedded database, the first run (demo data imported) is done once the demo is shown
    if (url && sandboxUrl && (env.DATABASE_URL !== undefined || /curl -s/.test(output))) return { child, url, sandboxUrl }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The first vehicle of the demo registry: a registry cache hit. */
export const demoPlate = async () => {
  const first = (await Fs.readFile(Path.join(ROOT, "data", "registry.jsonl"), "utf8")).split("\n")[0]!
  return (JSON.parse(first) as { plate: string }).plate
}

/** The machine's reference: the smallest Node HTTP server, in a process of its own. */
export const startBareNode = async () => {
  const code = `require("http").createServer((q, r) => r.end("hello")).listen(0, "127.0.0.1", function () { console.log("port " + this.address().port) })`
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] })
  const port = await new Promise<string>((resolve) => child.stdout!.on("data", (c) => resolve(/port (\d+)/.exec(String(c))![1]!)))
  return { child, url: `http://127.0.0.1:${port}/` }
}

/** The plain-Node group-commit design (bench/reference-server.ts) on `databaseUrl`, answering `vehicleBody`. */
export const startPlainNodeServer = async (databaseUrl: string, vehicleBody: string) => {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/reference-server.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, VEHICLE_BODY: vehicleBody },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      const listening = /listening on (http:\/\/\S+)/.exec(String(c))
      if (listening) resolve(listening[1]!)
    })
    child.once("exit", (code) => reject(new Error(`the plain-Node server exited (${code})`)))
  })
  return { child, url }
}

/** The bench's busy account: custom plan, no limits, a key per environment. */
export const busyAccount = async (env: Record<string, string>) => {
  const account = JSON.parse(await vda(env, "accounts", "create", "--owner", "Bench", "--plan", "custom", "--json"))
  await vda(env, "accounts", "set-custom", account.id, "--plate-queries", "unlimited", "--unique-plates", "unlimited",
    "--module-queries", "unlimited", "--rpm", "unlimited")
  const keyOf = async (environment: string) =>
    JSON.parse(await vda(env, "keys", "create", "--account", account.id, "--environment", environment, "--json")).key as string
  return { id: account.id as string, production: await keyOf("production"), sandbox: await keyOf("sandbox") }
}

/** What a module query sends: the same request each time, for a plate of the sandbox. */
const MODULES_QUERY = { plate: "AB123CD", body: JSON.stringify({ modules: ["fines", "vtv"] }) }

/**
 * A modules operation that stays active (the server's sandbox modules answer after an hour), and
 * the request of the module query that reuses it: the polling and reuse rows' targets.
 */
export const activeOperation = async (sandboxUrl: string, sandboxKey: string) => {
  const reuse = {
    url: `${sandboxUrl}/v2/vehicles/${MODULES_QUERY.plate}/modules`,
    headers: { "x-api-key": sandboxKey, "content-type": "application/json" },
    request: { method: "POST", body: MODULES_QUERY.body }
  }
  const created = await fetch(reuse.url, { method: "POST", headers: reuse.headers, body: MODULES_QUERY.body })
  if (created.status !== 202) throw new Error(`the module query answered ${created.status}`)
  const { id } = (await created.json()) as { id: string }
  return { pollUrl: `${sandboxUrl}/v2/operations/${id}`, reuse }
}

/** A server setting: sandbox module lookups that never finish during a bench, so their operation stays active. */
export const SLOW_SANDBOX_MODULES = { SANDBOX_MODULE_LATENCY_MS: "3600000" }

/**
 * The console's first page, as a person meets it: the sign-in form submitted, the redirect
 * followed to the overview, and the overview's stylesheet and scripts (uPlot included). Each
 * sample uses a fresh one-time link; answers the wall time of each sample in milliseconds.
 */
export const consoleFirstPage = async (env: Record<string, string>, accountId: string, baseUrl: string, samples: number) => {
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) {
    const url = JSON.parse(await vda({ ...env, PUBLIC_URL: baseUrl }, "console", "link", "--account", accountId, "--json")).url as string
    const token = url.split("/console/sign-in/")[1]!
    const started = performance.now()
    const signedIn = await fetch(`${baseUrl}/console/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token })
    })
    const cookie = signedIn.headers.get("set-cookie")?.split(";")[0] ?? ""
    const overview = await fetch(`${baseUrl}${signedIn.headers.get("location")}`, { headers: { cookie } })
    const html = await overview.text()
    if (overview.status !== 200 || !html.includes("usage-data")) throw new Error(`the console's overview answered ${overview.status}`)
    await Promise.all(["console.css", "console.js", "uplot.js", "uplot.css"].map(async (asset) => {
      const res = await fetch(`${baseUrl}/console/assets/${asset}`)
      if (res.status !== 200) throw new Error(`${asset} answered ${res.status}`)
      await res.arrayBuffer()
    }))
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)
}

/** A temporary data directory the server's embedded PostgreSQL can use. */
export const temporaryDataDir = async () => {
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-bench-"))
  await Fs.chmod(dataDir, 0o755)
  return dataDir
}

/** The URL of the embedded PostgreSQL a server started on `dataDir`, for a second server on the same database. */
export const embeddedDatabaseUrl = async (dataDir: string) => {
  const credentials = JSON.parse(await Fs.readFile(Path.join(dataDir, "postgres-credentials.json"), "utf8")) as { user: string; password: string }
  const port = (await Fs.readFile(Path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[3]!.trim()
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/postgres`
}

/**
 * A stand-in OTLP/HTTP collector: takes every export (JSON, as the HTTP exporter sends it),
 * counts its spans and answers 200, so a traced server pays the whole cost of exporting.
 */
export const startOtlpSink = async () => {
  let spans = 0
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<unknown> }> }>
        }
        for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0
      } catch {
        // not JSON: still accepted, not counted
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
