/**
 * One embedded PostgreSQL for the whole run, with a migrated template database that each test
 * file clones (see `freshDatabase`).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Layer, Redacted } from "effect"
import type { TestProject } from "vitest/node"
import { MigratorLive, pgClientLayer } from "../../src/platform/Database.js"
import { type Cluster, startCluster, stopCluster } from "../../src/platform/EmbeddedPostgres.js"
import { adminQuery, TEMPLATE_DATABASE } from "./Admin.js"

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
    // building the migrator layer runs the migrations; the scope then closes the pool
    await Effect.runPromise(Effect.scoped(Layer.build(
      MigratorLive.pipe(Layer.provide(pgClientLayer(Redacted.make(started.url(TEMPLATE_DATABASE)), 2)))
    )))
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
