// Runs a TypeScript entry point from one bundled file cached under node_modules/.cache/vda,
// rebuilt from src/ whenever a source file (or the lockfile) is newer than the bundle, which takes
// about a second. Loading one bundled file starts several times faster than loading every module
// through a TypeScript loader: it matters for `npm start`, the worker and every `vda` command.
import { build } from "esbuild"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
const cacheDir = Path.join(root, "node_modules", ".cache", "vda")

const newestSource = async (dir) => {
  let newest = 0
  for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
    const full = Path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(full))
    else if (/\.(ts|js)$/.test(entry.name)) newest = Math.max(newest, (await Fs.stat(full)).mtimeMs)
  }
  return newest
}

const mtime = async (file) => (await Fs.stat(file).catch(() => undefined))?.mtimeMs ?? -1

/** Bundles `entry` (relative to the repository root) unless the cached bundle is fresh; returns its path. */
export const ensureBundle = async (entry, sourceDirs = ["src"]) => {
  const bundle = Path.join(cacheDir, `${entry.replace(/[\\/]/g, "_").replace(/\.ts$/, "")}.mjs`)
  const sources = await Promise.all(sourceDirs.map((dir) => newestSource(Path.join(root, dir))))
  const newest = Math.max(...sources, await mtime(Path.join(root, "package-lock.json")))
  if ((await mtime(bundle)) < newest) {
    await Fs.mkdir(cacheDir, { recursive: true })
    const scratch = `${bundle}.${process.pid}.${Date.now()}.tmp.mjs`
    await build({
      entryPoints: [Path.join(root, entry)],
      outfile: scratch,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "inline",
      external: ["pg-native"],
      logLevel: "warning",
      // bundled CommonJS dependencies still call require()
      banner: { js: "import { createRequire as __vdaRequire } from 'node:module'; const require = __vdaRequire(import.meta.url);" }
    })
    await Fs.rename(scratch, bundle) // atomic: concurrent starts never load half a bundle
  }
  return bundle
}

/** Runs `entry` from its bundle. */
export const runBundled = async (entry, sourceDirs) => {
  const bundle = await ensureBundle(entry, sourceDirs)
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(bundle).href)
}
