/**
 * `vda catalog import` and `vda registry import`: row-by-row validation with line numbers, and
 * nothing half-imported.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { adminQuery } from "../support/Admin.js"
import { freshDatabase } from "../support/Postgres.js"
import { runVda } from "../support/Processes.js"

let dir: string
let env: Record<string, string>

const vehicleLine = (plate: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: "vehicle", plate, make: "VOLKSWAGEN", model: "GOL TREND 1.6 TRENDLINE", year: 2018,
    firstRegistered: "2018-04-10", totalOwners: 1, currentOwners: 1,
    currentLocation: { city: "Rosario", province: "Santa Fe" }, locations: ["Rosario, Santa Fe"],
    sourceDate: "2026-10-28", modelImage: null, ...extra
  })

const write = async (name: string, lines: Array<string>) => {
  const file = Path.join(dir, name)
  await Fs.writeFile(file, lines.join("\n") + "\n")
  return file
}

const count = async (table: string) => Number((await adminQuery(env.DATABASE_URL!, `select count(*) as n from ${table}`)).rows[0].n)

beforeAll(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-imports-"))
  env = { DATABASE_URL: await freshDatabase() }
})
afterAll(() => Fs.rm(dir, { recursive: true, force: true }))

describe("vda registry import", () => {
  it("imports every line of a valid file", async () => {
    const file = await write("ok.jsonl", [vehicleLine("AC123BD"), "", vehicleLine("KLM456", { year: null, firstRegistered: null })])
    const result = await runVda(["registry", "import", file], env)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("imported 2 vehicles and 0 module records")
    expect(await count("vehicles")).toBe(2)
  })

  it("reports every bad line with its number and imports nothing", async () => {
    const file = await write("bad.jsonl", [
      vehicleLine("AB111CD"),
      vehicleLine("AB-11-CD"),
      "{not json",
      vehicleLine("AB112CD", { totalOwners: 1, currentOwners: 3 }),
      vehicleLine("AB113CD", { sourceDate: "yesterday", color: "red" }),
      vehicleLine("AB111CD"),
      JSON.stringify({ kind: "fine", plate: "AB111CD", amount: -5 })
    ])
    const before = await count("vehicles")
    const result = await runVda(["registry", "import", file], env)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    const lines = result.stderr.trim().split("\n")
    expect(lines[0]).toBe(`vda: ${file}: 6 invalid lines, nothing imported`)
    expect(lines.slice(1).map((l) => l.slice(file.length + 1, l.indexOf(":", file.length + 1)))).toEqual(["2", "3", "4", "5", "6", "7"])
    expect(result.stderr).toContain(`${file}:2: plate: plate must be AAA999 or AA999AA in upper case`)
    expect(result.stderr).toContain(`${file}:3: not valid JSON`)
    expect(result.stderr).toContain("currentOwners cannot exceed totalOwners")
    expect(result.stderr).toMatch(/:5: .*sourceDate/)
    expect(result.stderr).toMatch(/:5: .*color/)
    expect(result.stderr).toContain(`${file}:6: vehicle plate AB111CD already appears on line 1`)
    // each line is judged against its own kind only: a fine's problems, never a vehicle's
    expect(lines[6]).toMatch(/:7: date: is missing/)
    expect(lines[6]).not.toMatch(/make|kind/)
    expect(result.stderr).not.toMatch(/kind: Expected/)
    expect(await count("vehicles")).toBe(before)
  })

  it("a missing file is a bad argument (exit code 2)", async () => {
    const result = await runVda(["registry", "import", Path.join(dir, "nope.jsonl")], env)
    expect(result.code).toBe(2)
  })
})

describe("vda catalog import", () => {
  it("imports versions and replaces them by codia", async () => {
    const file = await write("catalog.jsonl", FIXTURE_CATALOG.map((r) => JSON.stringify(r)))
    const result = await runVda(["catalog", "import", file], env)
    expect(result.stderr).toBe("")
    expect(result.stdout).toContain(`imported ${FIXTURE_CATALOG.length} catalog versions`)
    const again = await runVda(["catalog", "import", file], env)
    expect(again.code).toBe(0)
    expect(await count("catalog_versions")).toBe(FIXTURE_CATALOG.length)
  })

  it("rejects a file with an invalid version, importing nothing", async () => {
    const before = await count("catalog_versions")
    const bad = { ...FIXTURE_CATALOG[0]!, codia: "7777777", years: [], category: "bus" }
    const file = await write("bad-catalog.jsonl", [JSON.stringify({ ...FIXTURE_CATALOG[0]!, codia: "7777778" }), JSON.stringify(bad)])
    const result = await runVda(["catalog", "import", file], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(new RegExp(`${file}:2: .*years`))
    expect(await count("catalog_versions")).toBe(before)
  })
})
