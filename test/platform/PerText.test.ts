/**
 * `perText`: a hot path's few repeated texts computed once each, and never more than `max` kept,
 * whatever a client sends; and `lastPerHolder`: the last input of each holder (a connection) remembered.
 */
import { describe, expect, it } from "vitest"
import { lastPerHolder, perText } from "../../src/platform/caching/PerObject.js"

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

describe("lastPerHolder", () => {
  it("computes again whenever a holder's input changes, each holder apart, and every time for none", () => {
    const computed: Array<string | undefined> = []
    const hashOf = lastPerHolder((key: string | undefined) => {
      computed.push(key)
      return { key }
    })
    const one = {}
    const other = {}
    const first = hashOf(one, "vda_live_a")
    expect(hashOf(one, "vda_live_a")).toBe(first)
    expect(hashOf(other, "vda_live_a")).toEqual(first)
    expect(hashOf(one, "vda_live_b")).toEqual({ key: "vda_live_b" })
    // only the last input is remembered
    expect(hashOf(one, "vda_live_a")).not.toBe(first)
    expect(hashOf(one, undefined)).toEqual({ key: undefined })
    expect(hashOf(one, undefined)).toEqual({ key: undefined })
    hashOf(undefined, "vda_live_a")
    hashOf(null, "vda_live_a")
    expect(computed).toEqual(["vda_live_a", "vda_live_a", "vda_live_b", "vda_live_a", undefined, "vda_live_a", "vda_live_a"])
  })

  it("remembers only what `keep` keeps: the rest is computed every time, and leaves the last kept value in place", () => {
    const computed: Array<string> = []
    const checked = lastPerHolder((key: string) => {
      computed.push(key)
      return { key, wellFormed: key.startsWith("vda_") }
    }, (value) => value.wellFormed)
    const connection = {}
    const kept = checked(connection, "vda_live_a")
    expect(checked(connection, "garbage")).toEqual({ key: "garbage", wellFormed: false })
    expect(checked(connection, "garbage")).toEqual({ key: "garbage", wellFormed: false })
    expect(checked(connection, "vda_live_a")).toBe(kept)
    expect(computed).toEqual(["vda_live_a", "garbage", "garbage"])
  })
})
