/**
 * The configuration reference (the table under "## Configuration" in docs/operations.md) names
 * exactly the environment variables the service reads: every name `src/platform/config/Config.ts` reads,
 * and the few read elsewhere listed below. A setting added, renamed or removed on one side only
 * fails here, with the names that differ.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/Processes.js"

/** Documented variables that Config.ts does not read, each with where it is read instead. */
const READ_ELSEWHERE: Record<string, string> = {
  // read by Node itself when a process starts (extra CAs that webhook endpoints may use); no code of ours reads it
  NODE_EXTRA_CA_CERTS: "Node"
}

const configSource = Fs.readFileSync(Path.join(ROOT, "src/platform/config/Config.ts"), "utf8")
const guide = Fs.readFileSync(Path.join(ROOT, "docs/operations.md"), "utf8")

/**
 * How Config.ts reads a variable: through effect's `Config` constructors
 * (`Config.String("HOST")`, `Config.Int("TRUSTED_PROXY_HOPS")`, `Config.Boolean(…)`,
 * `Config.Number(…)`, `Config.Redacted(…)`, `Config.Literals([…], "WORKFLOW_ENGINE")`) or through
 * its own helpers around them (`port("PORT", 8080)`, `positiveInt(…)`, `milliseconds(…)`,
 * `optionalPort(…)`, `optionalUrl(…)`, `optionalString(…)`, `optionalSecret(…)`).
 */
const READER =
  /\b(?:Config\.(?:String|Int|Number|Boolean|Redacted|Literals)|port|optionalPort|positiveInt|milliseconds|optionalUrl|optionalString|optionalSecret)\(\s*(?:\[[^\]]*\]\s*,\s*)?"([A-Z][A-Z0-9_]*)"/g

const sorted = (names: Iterable<string>) => [...new Set(names)].sort()

/** Every variable Config.ts reads. */
const readInConfig = sorted([...configSource.matchAll(READER)].map((match) => match[1]!))

/** Every quoted name in Config.ts that looks like a variable, however it is read. */
const namesInConfig = sorted([...configSource.matchAll(/"([A-Z][A-Z0-9_]*)"/g)].map((match) => match[1]!))

/** The variables in the first column of the configuration table (a cell may name several). */
const documented = (() => {
  const start = guide.indexOf("\n## Configuration\n")
  if (start < 0) throw new Error("docs/operations.md has no \"## Configuration\" section")
  const end = guide.indexOf("\n## ", start + 1)
  const section = guide.slice(start, end < 0 ? undefined : end)
  const names: Array<string> = []
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue
    const firstCell = line.split("|")[1] ?? ""
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.push(match[1]!)
  }
  return sorted(names)
})()

const difference = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.filter((name) => !b.includes(name))

describe("the configuration reference in docs/operations.md", () => {
  it("finds the variables on both sides", () => {
    expect(readInConfig.length).toBeGreaterThan(50)
    // one of each way of reading: a helper, a constructor, Literals, Number, Redacted
    expect(readInConfig).toEqual(expect.arrayContaining(["PORT", "HOST", "WORKFLOW_ENGINE", "WEBHOOK_RETRY_COEFFICIENT", "DATABASE_URL"]))
    expect(documented.length).toBeGreaterThan(50)
  })

  it("reads every variable-like name in Config.ts through a pattern this test knows", () => {
    const unread = difference(namesInConfig, readInConfig)
    expect(unread, `Config.ts names ${unread.join(", ")} in a way READER does not match: extend READER`).toEqual([])
  })

  it("lists exactly the variables the service reads", () => {
    const read = sorted([...readInConfig, ...Object.keys(READ_ELSEWHERE)])
    const undocumented = difference(read, documented)
    const unknown = difference(documented, read)
    const message = [
      undocumented.length > 0 ? `read but not in the table: ${undocumented.join(", ")}` : "",
      unknown.length > 0 ? `in the table but not read by Config.ts (nor listed in READ_ELSEWHERE): ${unknown.join(", ")}` : ""
    ].filter((part) => part !== "").join("; ")
    expect(documented, message).toEqual(read)
  })

  it("keeps READ_ELSEWHERE to variables Config.ts does not read", () => {
    expect(Object.keys(READ_ELSEWHERE).filter((name) => readInConfig.includes(name))).toEqual([])
  })
})
