/**
 * `setBounded`: the caches a client's input fills never hold more than their bound; the oldest
 * entry makes room for a new one.
 */
import { describe, expect, it } from "vitest"
import { setBounded } from "../../src/platform/caching/Bounded.js"

describe("setBounded", () => {
  it("keeps at most max entries, dropping the oldest first, and replaces a key's value in place", () => {
    const map = new Map<string, number>()
    setBounded(map, 2, "a", 1)
    setBounded(map, 2, "b", 2)
    expect([...map]).toEqual([["a", 1], ["b", 2]])
    setBounded(map, 2, "c", 3)
    expect([...map]).toEqual([["b", 2], ["c", 3]])
    map.delete("b")
    setBounded(map, 2, "c", 4)
    expect([...map]).toEqual([["c", 4]])
  })
})
