/**
 * One embedded PostgreSQL for the whole run, with a migrated template database that each test
 * file clones (see `freshDatabase`).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"
import { type Cluster, startCluster, stopCluster } from "../../src/platform/EmbeddedPostgres.js"
import { adminQuery, migrate, TEMPLATE_DATABASE } from "./Admin.js"

declare module "vitest" {
  export interface ProvidedContext {
    readonly postgres: { readonly baseUrl: string; readonly clusterDir: string }
  }
}

export default async function setup(project: TestProject) {
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-test-pg-"))
  await Fs.chmod(dataDir, 0o755)
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
