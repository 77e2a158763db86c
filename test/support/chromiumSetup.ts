/**
 * The headless Chromium from `@sparticuz/chromium`, unpacked once per installed version, before any
 * test file starts (see `Browser.ts`, which launches it).
 *
 * `Chromium.executablePath()` unpacks its brotli'd binary, fonts and libraries into `os.tmpdir()`
 * every time a process finds them missing, and writes the binary in place: several vitest workers
 * doing it at once fail with ETXTBSY, and a run killed halfway leaves a truncated binary that the
 * package would then reuse. So this setup runs the package's own unpacking in a child process
 * whose `TMPDIR` is a fresh staging directory, checks the result, and renames the staging
 * directory to `node_modules/.cache/vda-chromium/<version>-<platform>-<arch>` in one step. That
 * directory either holds a complete install (with `ready.json`) or does not exist; a later run
 * only stats it. Staging directories of dead runs and directories of other versions are removed.
 * `VDA_CHROMIUM_CACHE` overrides the cache root.
 *
 * Test files get the paths through `inject("chromium")`.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"

/** Where the unpacked browser lives; everything a launch needs besides playwright. */
export interface ChromiumInstall {
  readonly available: true
  readonly version: string
  /** The `chromium` (chrome-headless-shell) binary. */
  readonly executablePath: string
  /** Directory with the generated fonts.conf (only the bundled fonts: screenshots match across machines). */
  readonly fontconfigPath: string
  /** The bundled NSS/NSPR/expat libraries, so the binary needs nothing from the system but glibc. */
  readonly libraryPath: string
}

export type ChromiumSetup = ChromiumInstall | { readonly available: false; readonly reason: string }

declare module "vitest" {
  export interface ProvidedContext {
    readonly chromium: ChromiumSetup
  }
}

const execFile = promisify(ChildProcess.execFile)

const MARKER = "ready.json"
const PARTIAL = ".partial-"

const repoRoot = fileURLToPath(new URL("../../", import.meta.url))

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const packageDir = () => {
  // build/index.js → the package directory
  const entry = createRequire(import.meta.url).resolve("@sparticuz/chromium")
  return Path.resolve(Path.dirname(entry), "..")
}

const layout = (dir: string, version: string): ChromiumInstall => ({
  available: true,
  version,
  executablePath: Path.join(dir, "chromium"),
  fontconfigPath: Path.join(dir, "fonts"),
  libraryPath: Path.join(dir, "al2023", "lib")
})

/** A directory renamed into place by `unpack`, not since damaged. */
const isComplete = async (dir: string, version: string) => {
  try {
    const marker = JSON.parse(await Fs.readFile(Path.join(dir, MARKER), "utf8")) as { version?: string; size?: number }
    const binary = await Fs.stat(layout(dir, version).executablePath)
    return marker.version === version && binary.isFile() && binary.size === marker.size
  } catch {
    return false
  }
}

/** Staging directories of runs that died before renaming, and installs of other versions. */
const removeLeftovers = async (root: string, key: string) => {
  for (const name of await Fs.readdir(root)) {
    const at = name.indexOf(PARTIAL)
    if (at >= 0) {
      const pid = Number(name.slice(at + PARTIAL.length).split("-")[0])
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue
    } else if (name === key) {
      continue
    }
    await Fs.rm(Path.join(root, name), { recursive: true, force: true })
  }
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The package's fonts.conf names /tmp/fonts; point it at the final directory instead. */
const fontsConf = (finalDir: string) => `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>${escapeXml(Path.join(finalDir, "fonts", "fonts"))}</dir>
  <cachedir>${escapeXml(Path.join(finalDir, "fonts-cache"))}</cachedir>
</fontconfig>
`

/** Runs the package's own unpacking with `os.tmpdir()` = `staging`. */
const unpackInto = async (staging: string, pkgDir: string) => {
  const script = `
    const { default: Chromium, inflate } = await import(${JSON.stringify(pathToFileURL(Path.join(pkgDir, "build", "index.js")).href)})
    const bin = ${JSON.stringify(Path.join(pkgDir, "bin"))}
    await Chromium.executablePath(bin)
    await inflate(bin + "/al2023.tar.br")
  `
  await execFile(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, TMPDIR: staging, TMP: staging, TEMP: staging },
    timeout: 180_000
  })
}

const unpack = async (root: string, key: string, version: string, pkgDir: string): Promise<ChromiumInstall> => {
  const finalDir = Path.join(root, key)
  const install = layout(finalDir, version)
  if (await isComplete(finalDir, version)) return install
  // not created by a rename (a copied or hand-edited cache): start again
  await Fs.rm(finalDir, { recursive: true, force: true })
  const staging = await Fs.mkdtemp(Path.join(root, `${key}${PARTIAL}${process.pid}-`))
  try {
    await unpackInto(staging, pkgDir)
    const staged = layout(staging, version)
    await Fs.writeFile(Path.join(staged.fontconfigPath, "fonts.conf"), fontsConf(finalDir))
    // fail here, with the reason, rather than in every test file
    await execFile(staged.executablePath, ["--version"], {
      env: { ...process.env, LD_LIBRARY_PATH: staged.libraryPath },
      timeout: 30_000
    })
    const { size } = await Fs.stat(staged.executablePath)
    await Fs.chmod(staging, 0o755)
    await Fs.writeFile(Path.join(staging, MARKER), JSON.stringify({ version, size, unpackedAt: new Date().toISOString() }))
    try {
      await Fs.rename(staging, finalDir)
    } catch (error) {
      // another run (a second `vitest` in this checkout) got there first
      if (!(await isComplete(finalDir, version))) throw error
    }
    return install
  } finally {
    await Fs.rm(staging, { recursive: true, force: true })
  }
}

export const ensureChromium = async (): Promise<ChromiumSetup> => {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return { available: false, reason: `@sparticuz/chromium ships a linux-x64 binary; this is ${process.platform}-${process.arch}` }
  }
  const pkgDir = packageDir()
  const { version } = JSON.parse(await Fs.readFile(Path.join(pkgDir, "package.json"), "utf8")) as { version: string }
  const root = process.env["VDA_CHROMIUM_CACHE"] ?? Path.join(repoRoot, "node_modules", ".cache", "vda-chromium")
  const key = `${version}-${process.platform}-${process.arch}`
  const finalDir = Path.join(root, key)
  if (await isComplete(finalDir, version)) return layout(finalDir, version)
  await Fs.mkdir(root, { recursive: true })
  await removeLeftovers(root, key)
  return unpack(root, key, version, pkgDir)
}

export default async function setup(project: TestProject) {
  project.provide("chromium", await ensureChromium())
}
