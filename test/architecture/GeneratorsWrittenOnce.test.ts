/**
 * Effectful functions are `Effect.fnUntraced(function*(…) { … })`, their generator written once,
 * not `(…) => Effect.gen(function*() { … })`, which makes a new generator function per call: V8
 * gives each generator function a hidden class of its own, kept in the old generation until a full
 * collection, and the call's closure (on the hot paths, the request) with it. See
 * docs/effect-4-idioms.md §19.8.
 */
import { describe, expect, it } from "vitest"
import { readSource, sourceFiles } from "../support/SourceFiles.js"

/** An arrow whose body is an `Effect.gen` block: a generator function made per call. */
const PER_CALL_GENERATOR = /=>\s*\(?\s*Effect\.gen\(\s*function\*/g

const perCallGenerators = (text: string) =>
  [...text.matchAll(PER_CALL_GENERATOR)].map((match) => text.slice(0, match.index).split("\n").length)

describe("generator functions", () => {
  it("are found by this reading where an arrow returns an Effect.gen block", () => {
    const sample = [
      "const once = Effect.gen(function*() {})",
      "const perCall = (id: string) =>",
      "  Effect.gen(function*() { yield* lookup(id) })",
      "const written = Effect.fnUntraced(function*(id: string) { yield* lookup(id) })",
      "const inline = (id: string) => Effect.gen(function*() {})"
    ].join("\n")
    expect(perCallGenerators(sample)).toEqual([2, 5])
  })

  it("are written once in the server and the worker, never made per call", () => {
    const found = ["src", "worker"].flatMap(sourceFiles)
      .flatMap((file) => perCallGenerators(readSource(file)).map((line) => `${file}:${line}`))
    expect(found).toEqual([])
  })
})
