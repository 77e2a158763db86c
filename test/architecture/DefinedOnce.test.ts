/**
 * Each list of names is written out once in the code, and everything else derives from it. Read
 * from the sources: a list is written out wherever its members appear together as a run of string
 * literals (an array, a tuple or a union of them), whatever else the run holds.
 *
 * The migrations are left out: they are the database's own definitions, frozen once applied.
 */
import { describe, expect, it } from "vitest"
import { STANDARD_PLANS } from "../../src/principal/Domain.js"
import { METER_NAMES } from "../../src/platform/contract/MeterNames.js"
import { MODULES, OPERATION_STATUSES } from "../../workflows/shared.js"
import { readSource, sourceFiles } from "../support/SourceFiles.js"

const files = ["src", "workflows", "worker"].flatMap(sourceFiles).filter((file) => !file.startsWith("src/platform/db/migrations/"))

/** Strings are read first, so that a comment's marker inside one (a glob, a URL) starts no comment. */
const STRING_OR_COMMENT = /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g
const withoutComments = (text: string) => text.replace(STRING_OR_COMMENT, (_comment, literal: string | undefined) => literal ?? " ")
const LITERAL = String.raw`(?:"[^"\n]*"|'[^'\n]*'|\x60[^\x60$\n]*\x60)`
/** String literals one after another, separated by nothing but commas, bars and white space. */
const RUN = new RegExp(`${LITERAL}(?:\\s*[,|]\\s*${LITERAL})+`, "g")

const runsOf = (text: string) =>
  [...withoutComments(text).matchAll(RUN)].map((run) => new Set([...run[0].matchAll(new RegExp(LITERAL, "g"))].map((m) => m[0].slice(1, -1))))

const runs = new Map(files.map((file) => [file, runsOf(readSource(file))]))

/** The files that write out every member of `list` together. */
const writtenIn = (list: ReadonlyArray<string>) =>
  [...runs].filter(([, found]) => found.some((run) => list.every((member) => run.has(member)))).map(([file]) => file)

const LISTS = {
  "meter names": { list: METER_NAMES, home: "src/platform/contract/MeterNames.ts" },
  "operation statuses": { list: OPERATION_STATUSES, home: "workflows/shared.ts" },
  "module names": { list: MODULES, home: "workflows/shared.ts" },
  "standard plans": { list: STANDARD_PLANS, home: "src/principal/Domain.ts" }
}

describe("each list of names", () => {
  it("is found where it is defined, by the same reading that looks for copies", () => {
    expect(files.length).toBeGreaterThan(150)
    const sample = `type T = "a" | "b"\nconst list = ["c", 'd', \`e\`] // ["f", "g"]\nconst globs = ["h/*", "i"] /* "j", "k" */`
    expect(runsOf(sample).map((run) => [...run])).toEqual([["a", "b"], ["c", "d", "e"], ["h/*", "i"]])
  })

  for (const [name, { home, list }] of Object.entries(LISTS)) {
    it(`${name}: written out once, in ${home}`, () => {
      expect(writtenIn(list)).toEqual([home])
    })
  }
})
