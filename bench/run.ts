/**
 * `npm run bench`: throughput of the HTTP stack and of metered vehicle queries, measured in the
 * same run on the same machine.
 *
 * Boots the real server on a temporary embedded database, creates one busy account (custom plan,
 * no limits), then drives the server with autocannon in a separate process:
 *   a) GET /healthz                   the HTTP stack's ceiling here
 *   b) GET /v2/vehicles/{plate}       registry cache hits for that one account, metering on
 * and checks afterwards that `plateQueries.used` equals the number of 200 responses exactly.
 * Prints a table and writes bench/results/latest.json. Not a test: it never runs in CI.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

interface Run {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly ok: number
  readonly other: number
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

const vda = async (env: Record<string, string>, ...args: Array<string>) => {
  const result = await run(process.execPath, ["src/cli/vda.js", ...args], env)
  if (result.code !== 0) throw new Error(`vda ${args.join(" ")} failed: ${result.stderr}`)
  return result.stdout
}

/**
 * A run of `duration` seconds, or of exactly `amount` requests: a timed run stops with requests in
 * flight (charged by the server, never seen by the client), so runs that are counted use amounts.
 */
const autocannon = async (url: string, headers: Record<string, string>, size: { duration: number } | { amount: number }): Promise<Run> => {
  const args = ["-c", String(CONNECTIONS), "-j", ...("duration" in size ? ["-d", String(size.duration)] : ["-a", String(size.amount)])]
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`)
  const result = await run(Path.join(ROOT, "node_modules", ".bin", "autocannon"), [...args, url], {})
  if (result.code !== 0) throw new Error(`autocannon failed: ${result.stderr}`)
  const report = JSON.parse(result.stdout)
  return {
    requestsPerSecond: report.requests.average,
    p50: report.latency.p50,
    p99: report.latency.p99,
    ok: report["2xx"],
    other: report.non2xx + report.errors + report.timeouts
  }
}

const startServer = async (env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, ["src/start.js"], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", SANDBOX_PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (c) => (output += c))
  child.stderr!.on("data", (c) => (output += c))
  const deadline = Date.now() + 60_000
  for (;;) {
    const url = /production API listening on (http:\/\/\S+)/.exec(output)?.[1]
    if (url && /curl -s/.test(output)) return { child, url } // first run done: demo data imported
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The first vehicle of the demo registry: a registry cache hit. */
const demoPlate = async () => {
  const first = (await Fs.readFile(Path.join(ROOT, "data", "registry.jsonl"), "utf8")).split("\n")[0]!
  return (JSON.parse(first) as { plate: string }).plate
}

const main = async () => {
  const PLATE = await demoPlate()
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-bench-"))
  await Fs.chmod(dataDir, 0o755)
  const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn" }
  const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "info" })
  try {
    const account = JSON.parse(await vda(env, "accounts", "create", "--owner", "Bench", "--plan", "custom", "--json"))
    await vda(env, "accounts", "set-custom", account.id, "--plate-queries", "unlimited", "--unique-plates", "unlimited",
      "--rpm", "unlimited")
    const { key } = JSON.parse(await vda(env, "keys", "create", "--account", account.id, "--environment", "production", "--json"))
    const vehicleUrl = `${server.url}/v2/vehicles/${PLATE}`
    const check = await fetch(vehicleUrl, { headers: { "x-api-key": key } })
    if (check.status !== 200 || !((await check.json()) as { found: boolean }).found) throw new Error(`${PLATE} is not in the demo registry`)

    // warm up both paths (JIT, pools), then measure; the vehicle run is sized from the warm-up
    // rate to last about DURATION_S seconds
    await autocannon(`${server.url}/healthz`, {}, { duration: 2 })
    const warm = await autocannon(vehicleUrl, { "x-api-key": key }, { amount: 2000 })
    const health = await autocannon(`${server.url}/healthz`, {}, { duration: DURATION_S })
    const vehicles = await autocannon(vehicleUrl, { "x-api-key": key }, { amount: Math.round(warm.requestsPerSecond * DURATION_S) })

    const usage = (await (await fetch(`${server.url}/v2/usage`, { headers: { "x-api-key": key } })).json()) as { data: { plateQueries: { used: number } } }
    const charged: number = usage.data.plateQueries.used
    const answered = 1 + warm.ok + vehicles.ok
    const ratio = vehicles.requestsPerSecond / health.requestsPerSecond

    const results = {
      date: new Date().toISOString(),
      machine: { cpus: Os.cpus().length, model: Os.cpus()[0]?.model ?? "unknown", node: process.version },
      settings: { durationSeconds: DURATION_S, connections: CONNECTIONS, plate: PLATE },
      healthz: health,
      vehicleCacheHits: vehicles,
      ratio: Number(ratio.toFixed(3)),
      metering: { plateQueriesUsed: charged, okResponses: answered, exact: charged === answered }
    }
    await Fs.mkdir(Path.join(ROOT, "bench", "results"), { recursive: true })
    await Fs.writeFile(Path.join(ROOT, "bench", "results", "latest.json"), JSON.stringify(results, null, 2) + "\n")

    const row = (name: string, r: Run) =>
      `| ${name.padEnd(34)} | ${r.requestsPerSecond.toFixed(0).padStart(8)} | ${String(r.p50).padStart(7)} | ${String(r.p99).padStart(7)} | ${String(r.other).padStart(6)} |`
    console.log(`\n${Os.cpus().length} CPUs, ${CONNECTIONS} connections, ${DURATION_S} s per run, ${process.version}\n`)
    console.log("| run                                | req/s    | p50 ms  | p99 ms  | errors |")
    console.log("|------------------------------------|----------|---------|---------|--------|")
    console.log(row("a) GET /healthz", health))
    console.log(row(`b) GET /v2/vehicles/${PLATE} (hit)`, vehicles))
    console.log(`\nratio b/a: ${ratio.toFixed(2)}   (goal >= 0.60)`)
    console.log(`metering: plateQueries.used = ${charged}, 200 responses = ${answered}: ${charged === answered ? "exact" : "MISMATCH"}`)
    console.log(`written: bench/results/latest.json`)
    if (charged !== answered) process.exitCode = 1
  } finally {
    server.child.kill("SIGTERM")
    await new Promise((resolve) => server.child.once("exit", resolve))
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
