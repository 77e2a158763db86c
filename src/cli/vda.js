#!/usr/bin/env node
// The `vda` admin CLI.
//
// It runs from one bundled file cached under node_modules/.cache/vda-cli, rebuilt from src/
// whenever a source file is newer than the bundle (about a second). Loading one bundled file
// starts several times faster than loading every module through a TypeScript loader, which
// matters for a command run many times by operators and tests.
import { build } from "esbuild"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
const cacheDir = Path.join(root, "node_modules", ".cache", "vda-cli")
const bundle = Path.join(cacheDir, "vda.mjs")

const newestSource = async (dir) => {
  let newest = 0
  for (const entry of await Fs.readdir(dir, { withFileTypes: true })) {
    const full = Path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(full))
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, (await Fs.stat(full)).mtimeMs)
  }
  return newest
}

const lockfileTime = async () => (await Fs.stat(Path.join(root, "package-lock.json")).catch(() => ({ mtimeMs: 0 }))).mtimeMs

const bundleTime = (await Fs.stat(bundle).catch(() => undefined))?.mtimeMs ?? -1
if (bundleTime < Math.max(await newestSource(Path.join(root, "src")), await lockfileTime())) {
  await Fs.mkdir(cacheDir, { recursive: true })
  const scratch = Path.join(cacheDir, `vda.${process.pid}.${Date.now()}.mjs`)
  await build({
    entryPoints: [Path.join(root, "src", "cli", "main.ts")],
    outfile: scratch,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["pg-native"],
    logLevel: "warning",
    // bundled CommonJS dependencies still call require()
    banner: { js: "import { createRequire as __vdaRequire } from 'node:module'; const require = __vdaRequire(import.meta.url);" }
  })
  await Fs.rename(scratch, bundle) // atomic: concurrent invocations never see half a bundle
}
await import(pathToFileURL(bundle).href)
