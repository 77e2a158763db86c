/**
 * Builds what the package ships for Node to load from node_modules, where it does not strip
 * TypeScript: each entry (entries.ts) as JavaScript, its dependencies left to node_modules, the
 * code the entries share in chunks of their own (so importing one entry loads nothing only another
 * needs), and the declarations of everything the entries reach. Writes package.json's `exports`
 * from the entries. Run by `npm pack` (prepack); `npm start` and the tests run from the sources.
 */
import { spawnSync } from "node:child_process"
import { builtinModules } from "node:module"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { ENTRIES, exportsOf } from "./entries.js"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = Path.join(root, "dist")
const manifestFile = Path.join(root, "package.json")
const manifest = JSON.parse(await Fs.readFile(manifestFile, "utf8"))

const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

await Fs.rm(dist, { recursive: true, force: true })

const { metafile } = await build({
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outdir: dist,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node24",
  packages: "external",
  // the database functions' sources (src/*/sql/*.sql), as their text
  loader: { ".sql": "text" },
  sourcemap: true,
  metafile: true,
  logLevel: "warning"
})

// an import left to node_modules must be there for whoever installs the package
const builtins = new Set(builtinModules)
const missing = new Set(
  Object.values(metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external && !i.path.startsWith("node:") && !builtins.has(i.path)).map((i) => packageOf(i.path))
  ).filter((name) => manifest.dependencies?.[name] === undefined)
)
if (missing.size > 0) throw new Error(`the built code imports packages that are not dependencies: ${[...missing].join(", ")}`)

// the declarations, by the project's own compiler options
const scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-types-"))
try {
  const config = Path.join(scratch, "tsconfig.json")
  await Fs.writeFile(config, JSON.stringify({
    extends: Path.join(root, "tsconfig.json"),
    compilerOptions: {
      noEmit: false,
      declaration: true,
      emitDeclarationOnly: true,
      rootDir: root,
      outDir: Path.join(dist, "types"),
      typeRoots: [Path.join(root, "node_modules", "@types")]
    },
    files: Object.values(ENTRIES).map((file) => Path.join(root, file)),
    // the module declarations the sources rely on (`*.sql` as text…), wherever they sit
    include: [Path.join(root, "src/**/*.d.ts")]
  }))
  const tsc = spawnSync(Path.join(root, "node_modules", ".bin", "tsc"), ["-p", config], { stdio: "inherit" })
  if (tsc.status !== 0) throw new Error(`the declarations did not build (tsc exited ${tsc.status ?? tsc.signal})`)
} finally {
  await Fs.rm(scratch, { recursive: true, force: true })
}

const exports = exportsOf(ENTRIES)
if (JSON.stringify(manifest.exports) !== JSON.stringify(exports)) {
  await Fs.writeFile(manifestFile, `${JSON.stringify({ ...manifest, exports }, null, 2)}\n`)
  console.log("package.json: exports written from build/entries.ts")
}
