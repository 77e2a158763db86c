/**
 * One embedded PostgreSQL for the whole run, with a migrated template database that each test
 * file clones (see `freshDatabase`).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"
import { ensureBundle, ensureWorkflowBundle } from "../../src/platform/process/bundled.js"
import { type Cluster, startCluster, stopCluster } from "../../src/platform/db/EmbeddedPostgres.js"
import { adminQuery, migrate, TEMPLATE_DATABASE } from "./Admin.js"

declare module "vitest" {
  export interface ProvidedContext {
    readonly postgres: { readonly baseUrl: string; readonly clusterDir: string }
  }
}

const PREFIX = "vda-test-pg-"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Clusters left behind by a run that was killed before its teardown. */
const removeAbandonedClusters = async () => {
  for (const name of await Fs.readdir(Os.tmpdir())) {
    if (!name.startsWith(PREFIX)) continue
    const dir = Path.join(Os.tmpdir(), name)
    const owner = Number(await Fs.readFile(Path.join(dir, "owner.pid"), "utf8").catch(() => "0"))
    if (owner > 0 && alive(owner)) continue
    await stopCluster({ clusterDir: Path.join(dir, "postgres") }).catch(() => undefined)
    await Fs.rm(dir, { recursive: true, force: true })
  }
}

export default async function setup(project: TestProject) {
  await removeAbandonedClusters()
  // build the server, CLI and worker bundles once, before test files start processes in parallel
  await Promise.all([
    ensureBundle("src/main.ts"),
    ensureBundle("src/cli/main.ts"),
    ensureBundle("worker/main.ts", ["src", "worker", "workflows"]),
    ensureWorkflowBundle()
  ])
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), PREFIX))
  await Fs.chmod(dataDir, 0o755)
  await Fs.writeFile(Path.join(dataDir, "owner.pid"), String(process.pid))
  let cluster: Cluster | undefined
  try {
    cluster = await startCluster({ dataDir, ephemeral: true })
    const started = cluster
    await adminQuery(started.url("postgres"), `create database ${TEMPLATE_DATABASE}`)
    await migrate(started.url(TEMPLATE_DATABASE))
    project.provide("postgres", { baseUrl: started.url(""), clusterDir: started.clusterDir })
  } catch (error) {
    if (cluster) await stopCluster(cluster)
    await Fs.rm(dataDir, { recursive: true, force: true })
    throw error
  }
  return async () => {
    if (cluster) await stopCluster(cluster)
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
}
