/**
 * The targets, each a process of its own on a PostgreSQL cluster of its own, all started with the
 * same Node and the same cluster options (`startCluster({ dataDir })`, as the service starts its
 * embedded one): the service (`node src/start.js`, as deployed: JSON logs with the access log on,
 * the inline workflow engine) and the two peers of /work/shared/bench-peers. Beside them, two floors
 * (bench/floor/), with no database: the same answer as a constant, from Node alone and from Effect's
 * HttpApi, bundled as the service is.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { type Cluster, startCluster, stopCluster } from "../src/platform/db/EmbeddedPostgres.js"
import { onCleanup } from "./cleanup.js"
import { ensureBundle } from "../src/platform/process/bundled.js"
import { ROOT, settings } from "./config.js"
import { baseEnv, type Child, runToEnd, start } from "./processes.js"

export type TargetName = "service" | "group-commit" | "naive" | FloorName
export const PEERS = ["group-commit", "naive"] as const

/** The floors: the vehicle answer as a constant, with no work, from Node alone and from Effect's HttpApi (bench/floor/). */
export type FloorName = "node-floor" | "effect-floor"
export const FLOORS = ["node-floor", "effect-floor"] as const

export interface Database {
  readonly url: string
  /** The postmaster's pid, for the idle wait between runs. */
  readonly postmaster: () => Promise<number | null>
}

export interface Target {
  readonly name: TargetName
  readonly child: Child
  /** Its PostgreSQL; a floor has none. */
  readonly database: Database | null
  /** Its command line and the environment the bench gave it (DATABASE_URL aside). */
  readonly started: { readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }
}

const described = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const { DATABASE_URL: _, ...rest } = env
  const inherited = new Set(Object.keys(baseEnv()))
  return { args, env: Object.fromEntries(Object.entries(rest).filter(([name]) => !inherited.has(name))) }
}

export interface Service extends Target {
  readonly name: "service"
  readonly database: Database
  readonly productionUrl: string
  readonly sandboxUrl: string
  /** Bytes the service's V8 heap allocated between `start()` and `stop()` (bench/allocation-counter.mjs). */
  readonly allocations: { start(): Promise<void>; stop(): Promise<{ readonly bytes: number; readonly collections: number }> }
  readonly vda: (...args: Array<string>) => Promise<string>
}

export interface Peer extends Target {
  readonly name: "group-commit" | "naive"
  readonly database: Database
  readonly url: string
  /** The account the peer seeded at boot (all limits unlimited), and its key. */
  readonly boot: { readonly accountId: number; readonly key: string }
}

export const temporaryRoot = async () => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-bench-"))
  // PostgreSQL runs as its own user when the bench runs as root: it must traverse this directory
  await Fs.chmod(dir, 0o755)
  onCleanup(`remove ${dir}`, () => Fs.rm(dir, { recursive: true, force: true }))
  return dir
}

const startDatabase = async (root: string, name: string): Promise<Database> => {
  const cluster: Cluster = await startCluster({ dataDir: Path.join(root, `${name}-db`) })
  onCleanup(`stop the PostgreSQL of ${name}`, () => stopCluster(cluster))
  return {
    url: cluster.url("postgres"),
    postmaster: async () => {
      const pid = Number((await Fs.readFile(Path.join(cluster.clusterDir, "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0])
      return Number.isInteger(pid) && pid > 0 ? pid : null
    }
  }
}

const SIGNAL_POLL_MS = 50

/** What `npm start` gives node (its flags and the entry point): the service runs as it is started. */
const npmStartArguments = async () => {
  const pkg = JSON.parse(await Fs.readFile(Path.join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } }
  const [command, ...args] = pkg.scripts.start.split(" ")
  if (command !== "node") throw new Error(`npm start runs ${command}, not node: the bench cannot start the service as it does`)
  return args
}

export const startService = async (
  root: string,
  extra: { readonly nodeArgs?: ReadonlyArray<string>; readonly env?: Record<string, string> } = {}
): Promise<Service> => {
  const database = await startDatabase(root, "service")
  const allocationFile = Path.join(root, "allocations.json")
  const env = {
    ...baseEnv(),
    DATABASE_URL: database.url,
    PORT: "0",
    SANDBOX_PORT: "0",
    ADMIN_PORT: "0",
    HOST: "127.0.0.1",
    LOG_FORMAT: "json",
    WORKFLOW_ENGINE: "inline",
    SANDBOX_MODULE_LATENCY_MS: String(settings.sandboxModuleLatencyMs),
    BENCH_ALLOCATION_FILE: allocationFile,
    ...extra.env
  }
  const args = ["--import", "./bench/allocation-counter.mjs", ...(extra.nodeArgs ?? []), ...(await npmStartArguments())]
  const child = start("service", args, { env })
  onCleanup("stop the service", () => child.stop())
  const productionUrl = (await child.waitFor(/production API listening on (http:\/\/[^\s"]+)/))[1]!
  const sandboxUrl = (await child.waitFor(/sandbox API listening on (http:\/\/[^\s"]+)/))[1]!
  const vdaEnv = { ...baseEnv(), DATABASE_URL: database.url }
  const signal = async (expectFile: boolean) => {
    await Fs.rm(allocationFile, { force: true })
    child.process.kill("SIGUSR2")
    if (!expectFile) return null
    const deadline = Date.now() + 30_000
    for (;;) {
      const text = await Fs.readFile(allocationFile, "utf8").catch(() => null)
      if (text !== null) return JSON.parse(text) as { bytes: number; collections: number }
      if (Date.now() > deadline) throw new Error("the service did not write its allocation count")
      await new Promise((resolve) => setTimeout(resolve, SIGNAL_POLL_MS))
    }
  }
  return {
    name: "service",
    child,
    database,
    started: described(args, env),
    productionUrl,
    sandboxUrl,
    allocations: {
      start: async () => {
        await signal(false)
        await new Promise((resolve) => setTimeout(resolve, SIGNAL_POLL_MS))
      },
      stop: async () => (await signal(true))!
    },
    vda: (...args) => runToEnd(`vda ${args.slice(0, 2).join(" ")}`, ["src/cli/vda.js", ...args], { env: vdaEnv })
  }
}

/**
 * The peers' folder copied to `root` and installed there with the bench's npm (`npm ci`), or null
 * when BENCH_PEERS_DIR (default ../shared/bench-peers) is not there.
 */
export const installPeers = async (root: string) => {
  if (!(await Fs.stat(Path.join(settings.peersDir, "common.mjs")).catch(() => null))) return null
  const dir = Path.join(root, "peers")
  await Fs.cp(settings.peersDir, dir, { recursive: true, filter: (source) => !source.includes(`${Path.sep}node_modules`) })
  await makeWritable(dir)
  const npm = process.env.npm_execpath
  // npm needs what the bench's environment says about the registry (proxies, certificates)
  const env = { ...process.env, npm_config_update_notifier: "false" }
  const args = ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
  // the npm that runs `npm run bench`, on the bench's Node; outside npm, the npm on the PATH
  if (npm !== undefined && /\.c?js$/.test(npm)) await runToEnd("npm ci (peers)", [npm, ...args], { cwd: dir, env })
  else await runToEnd("npm ci (peers)", args, { cwd: dir, env, command: "npm" })
  return dir
}

const makeWritable = async (dir: string): Promise<void> => {
  await Fs.chmod(dir, 0o755)
  for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) await makeWritable(path)
    else await Fs.chmod(path, 0o644)
  }
}

/** What the bench uses of the peers' common.mjs. */
export interface PeerCommon {
  readonly seedAccount: (
    db: unknown,
    options?: { rpmLimit?: number | null; plateLimit?: number | null; uniqueLimit?: number | null }
  ) => Promise<{ accountId: number; key: string }>
  readonly plateUsed: (databaseUrl: string, accountId: number) => Promise<number>
}

export const peerCommon = async (dir: string) => (await import(pathToFileURL(Path.join(dir, "common.mjs")).href)) as PeerCommon

export const startPeer = async (root: string, dir: string, name: "group-commit" | "naive"): Promise<Peer> => {
  const database = await startDatabase(root, name)
  const env = {
    ...baseEnv(),
    DATABASE_URL: database.url,
    HOST: "127.0.0.1",
    PORT: "0",
    PEER_WATCH_STDIN: "1",
    PEER_RPM_LIMIT: "unlimited",
    PEER_PLATE_LIMIT: "unlimited",
    PEER_UNIQUE_LIMIT: "unlimited"
  }
  const args = [Path.join(dir, `${name}.mjs`)]
  const child = start(name, args, { cwd: dir, env, stdin: "pipe" })
  onCleanup(`stop the ${name} peer`, () => child.stop())
  const ready = JSON.parse((await child.waitFor(/^\{.*"url".*\}$/m))[0]) as { url: string; key: string; accountId: number }
  return { name, child, database, started: described(args, env), url: ready.url, boot: { accountId: ready.accountId, key: ready.key } }
}

export interface Floor extends Target {
  readonly name: FloorName
  readonly url: string
}

const FLOOR_ENTRIES: Record<FloorName, () => Promise<string>> = {
  "node-floor": async () => Path.join(ROOT, "bench", "floor", "node-http.mjs"),
  // bundled as `npm start` bundles the service (src/platform/process/bundled.js)
  "effect-floor": () => ensureBundle("bench/floor/EffectHttpApi.ts", ["bench/floor"])
}

/** A floor answering `answer` (the service's vehicle answer, as text) to every vehicle query. */
export const startFloor = async (name: FloorName, answer: string): Promise<Floor> => {
  const env = { ...baseEnv(), FLOOR_ANSWER: answer }
  const args = [await FLOOR_ENTRIES[name]()]
  const child = start(name, args, { env, stdin: "pipe" })
  onCleanup(`stop the ${name}`, () => child.stop())
  const ready = JSON.parse((await child.waitFor(/^\{.*"url".*\}$/m))[0]) as { url: string }
  const { FLOOR_ANSWER: _, ...shown } = env
  return { name, child, database: null, started: described(args, shown), url: ready.url }
}
