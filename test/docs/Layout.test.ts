/**
 * Where a reader finds what: the README is a newcomer's page (under 400 lines, no bench diary), and
 * the guides it points to exist: the API guide, the operations guide, the architecture and the
 * clients' guide.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/Processes.js"

const readme = Fs.readFileSync(Path.join(ROOT, "README.md"), "utf8")
const GUIDES = ["docs/api.md", "docs/operations.md", "docs/architecture.md", "docs/client.md"]

describe("the documentation", () => {
  it("has a README under 400 lines", () => {
    expect(readme.split("\n").length).toBeLessThan(400)
  })

  it("has each guide, linked from the README", () => {
    for (const guide of GUIDES) {
      expect(Fs.existsSync(Path.join(ROOT, guide)), guide).toBe(true)
      expect(readme, guide).toContain(guide)
    }
  })

  it("keeps the bench's history in bench/, not in the README", () => {
    expect(Fs.existsSync(Path.join(ROOT, "bench/HISTORY.md"))).toBe(true)
    expect(readme).toContain("bench/HISTORY.md")
    expect(readme.match(/^\|.*req\/s.*\|$/gm)?.length ?? 0).toBeLessThanOrEqual(1)
  })
})
