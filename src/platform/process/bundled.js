// Runs a TypeScript entry point from one bundled file cached under node_modules/.cache/vda,
// rebuilt from its sources whenever a source file (or the lockfile) is newer than the bundle, which
// takes about a second. Loading one bundled file starts several times faster than loading every
// module through a TypeScript loader: it matters for `npm start`, the worker and every `vda` command.
//
// Packages with native code or files read at run time stay outside the bundle and load from
// node_modules: the Temporal SDK (its core bridge is a `.node` addon, and the worker bundles
// workflows with webpack and swc at run time) and pg's optional native driver.
import { build } from "esbuild"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { WORKFLOW_SOURCE_DIRS, workflowSources } from "./workflowSources.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const cacheDir = Path.join(root, "node_modules", ".cache", "vda")

export const EXTERNAL_PACKAGES = ["pg-native", "@temporalio/*", "@swc/*"]

const newestSource = async (dir) => {
  let newest = 0
  for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
    const full = Path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(full))
    else if (/\.(ts|js|sql)$/.test(entry.name)) newest = Math.max(newest, (await Fs.stat(full)).mtimeMs)
  }
  return newest
}

const mtime = async (file) => (await Fs.stat(file).catch(() => undefined))?.mtimeMs ?? -1

/** Rebuilds `output` with `make(scratchPath)` unless it is newer than every source; returns its path. */
const cached = async (output, sourceDirs, make) => {
  const sources = await Promise.all(sourceDirs.map((dir) => newestSource(Path.join(root, dir))))
  const newest = Math.max(...sources, await mtime(Path.join(root, "package-lock.json")))
  if ((await mtime(output)) < newest) {
    await Fs.mkdir(cacheDir, { recursive: true })
    const scratch = `${output}.${process.pid}.${Date.now()}.tmp${Path.extname(output)}`
    await make(scratch)
    await Fs.rename(scratch, output) // atomic: concurrent starts never load half a bundle
  }
  return output
}

/** Bundles `entry` (relative to the repository root) unless the cached bundle is fresh; returns its path. */
export const ensureBundle = (entry, sourceDirs = ["src"]) =>
  cached(Path.join(cacheDir, `${entry.replace(/[\\/]/g, "_").replace(/\.ts$/, "")}.mjs`), sourceDirs, (outfile) =>
    build({
      entryPoints: [Path.join(root, entry)],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node24",
      sourcemap: "inline",
      external: EXTERNAL_PACKAGES,
      // the database functions' sources (src/*/sql/*.sql), as their text
      loader: { ".sql": "text" },
      logLevel: "warning",
      // bundled CommonJS dependencies still call require()
      banner: { js: "import { createRequire as __vdaRequire } from 'node:module'; const require = __vdaRequire(import.meta.url);" }
    }))

/**
 * The workflows of `workflows/index.ts`, bundled for Temporal's sandbox once (the worker would
 * otherwise run webpack on every start); returns the bundle's path.
 */
export const ensureWorkflowBundle = () =>
  cached(Path.join(cacheDir, "workflows.js"), WORKFLOW_SOURCE_DIRS, async (outfile) => {
    const { bundleWorkflowCode } = await import("@temporalio/worker")
    const { code } = await bundleWorkflowCode({
      ...workflowSources(root),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error }
    })
    await Fs.writeFile(outfile, code)
  })

/** Runs `entry` from its bundle. */
export const runBundled = async (entry, sourceDirs) => {
  const bundle = await ensureBundle(entry, sourceDirs)
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(bundle).href)
}
