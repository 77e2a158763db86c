/**
 * ULIDs: 26 Crockford base32 characters, the first 10 the creation time (so they sort by it), the
 * other 16 random.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { ulidAt } from "../../src/platform/ids/Ids.js"

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const ULID = /^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{26}$/
const MAX_TIME = 2 ** 48 - 1

const timeOf = (id: string) => [...id.slice(0, 10)].reduce((millis, char) => millis * 32 + CROCKFORD.indexOf(char), 0)

describe("ULIDs", () => {
  it("are 26 Crockford characters whose first 10 are the creation time", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX_TIME }), (millis) => {
      const id = ulidAt(millis)
      expect(id).toMatch(ULID)
      expect(timeOf(id)).toBe(millis)
    }), { numRuns: 2_000 })
  })

  it("sort by their creation time", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX_TIME - 1 }), fc.integer({ min: 1, max: 2 ** 20 }), (earlier, later) => {
      expect(ulidAt(earlier) < ulidAt(Math.min(MAX_TIME, earlier + later))).toBe(true)
    }), { numRuns: 2_000 })
  })

  it("made in the same millisecond differ, their random part drawing on every character", () => {
    const ids = Array.from({ length: 100_000 }, () => ulidAt(1_764_000_000_000))
    expect(new Set(ids).size).toBe(ids.length)
    for (let position = 10; position < 26; position++) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(32)
    }
  })
})
