import { describe, expect, it } from "vitest"
import { finalStatus, type ModuleOutcome } from "../../workflows/shared.js"

const ok: Pick<ModuleOutcome, "status" | "warnings"> = { status: "completed", warnings: [] }
const empty = ok // a module with no records completes like any other
const reduced: Pick<ModuleOutcome, "status" | "warnings"> = {
  status: "partial",
  warnings: [{ code: "reduced_coverage", message: "partial" }]
}
const warnedOnly: Pick<ModuleOutcome, "status" | "warnings"> = {
  status: "completed",
  warnings: [{ code: "reduced_coverage", message: "partial" }]
}
const failed: Pick<ModuleOutcome, "status" | "warnings"> = { status: "failed", warnings: [] }

describe("final status of a modules operation", () => {
  it.each([
    ["every module answered", [ok, ok, ok, ok], "completed"],
    ["a module with no records is a correct completion", [empty], "completed"],
    ["one module with reduced coverage", [ok, reduced], "partial"],
    ["a reduced-coverage warning alone", [warnedOnly], "partial"],
    ["some failed, others answered", [failed, ok], "partial"],
    ["some failed, another with reduced coverage", [failed, reduced], "partial"],
    ["every module failed", [failed, failed, failed], "failed"],
    ["the only module failed", [failed], "failed"],
    ["nothing to look up", [], "failed"]
  ] as const)("%s", (_name, outcomes, expected) => {
    expect(finalStatus(outcomes)).toBe(expected)
  })
})
