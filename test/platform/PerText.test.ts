/**
 * `perText`: a hot path's few repeated texts computed once each, and never more than `max` kept,
 * whatever a client sends.
 */
import { describe, expect, it } from "vitest"
import { perText } from "../../src/platform/caching/PerObject.js"

describe("perText", () => {
  it("computes once per text while it is kept, and keeps at most max texts", () => {
    const computed: Array<string> = []
    const lengthOf = perText((text) => {
      computed.push(text)
      return { length: text.length }
    }, 3)
    const first = lengthOf("codia=true")
    expect(lengthOf("codia=true")).toBe(first)
    expect(lengthOf("")).toEqual({ length: 0 })
    expect(computed).toEqual(["codia=true", ""])

    // a fourth text empties what was kept: the first is computed again, once
    lengthOf("a")
    lengthOf("b")
    const again = lengthOf("codia=true")
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
    expect(lengthOf("codia=true")).toBe(again)
    expect(computed).toEqual(["codia=true", "", "a", "b", "codia=true"])
  })
})
