/**
 * The project brings its own Node.js (the `node` package, pinned in package.json, whose binary npm
 * puts first on the PATH of every npm script): the tests run on it, whatever Node the machine has.
 * The server's banner says which Node it runs on (test/observability/Logs.test.ts).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/Processes.js"

describe("the Node.js runtime", () => {
  it("the test run is on Node.js 26 or later, the version the project pins", () => {
    const manifest = JSON.parse(Fs.readFileSync(Path.join(ROOT, "package.json"), "utf8"))
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(26)
    expect(process.versions.node).toBe(manifest.dependencies.node)
    expect(Fs.readFileSync(Path.join(ROOT, ".nvmrc"), "utf8").trim()).toBe(manifest.dependencies.node)
    expect(Fs.readFileSync(Path.join(ROOT, "Dockerfile"), "utf8")).toContain(`FROM node:${manifest.dependencies.node}-trixie-slim`)
  })
})
