/**
 * The group-commit batcher: items submitted while a batch runs share the next batch, each submitter
 * gets its own item's result, a batch that fails as a whole fails every item with its cause, and a
 * submitter that gives up before its batch starts leaves nothing behind.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Result } from "effect"
import * as Batcher from "../../src/platform/Batcher.js"

/** A batcher that doubles items, fails odd ones, records its batches and holds each batch at `gate`. */
const makeBatcher = Effect.gen(function*() {
  const batches: Array<ReadonlyArray<number>> = []
  const gate = yield* Deferred.make<void>()
  const batcher: Batcher.Batcher<number, string, string> = yield* Batcher.make({
    key: () => "one",
    process: (_key, items: ReadonlyArray<number>) =>
      Effect.andThen(Deferred.await(gate), Effect.sync(() => {
        batches.push(items)
        return items.map((item) => (item % 2 === 0 ? Result.succeed(`${item * 2}`) : Result.fail(`odd ${item}`)))
      }))
  })
  return { batcher, batches, gate }
})

describe("Batcher.submit", () => {
  it.effect("items submitted while a batch runs share the next batch; each submitter gets its own result", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate } = yield* makeBatcher
      const first = yield* Effect.forkChild(Effect.exit(batcher.submit(2))) // starts the first batch, held at the gate
      const rest = yield* Effect.forEach([4, 5, 6], (item) => Effect.forkChild(Effect.exit(batcher.submit(item))))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach([first, ...rest], Fiber.join)
      expect(batches).toEqual([[2], [4, 5, 6]])
      expect(results).toEqual([Exit.succeed("4"), Exit.succeed("8"), Exit.fail("odd 5"), Exit.succeed("12")])
    }))

  it.effect("a batch that fails as a whole fails every item with its cause", () =>
    Effect.gen(function*() {
      const batcher = yield* Batcher.make({
        key: () => "one",
        process: (_key, _items: ReadonlyArray<number>) => Effect.fail("database gone" as const)
      })
      const results = yield* Effect.forEach([1, 2], (item) => Effect.exit(batcher.submit(item)), { concurrency: "unbounded" })
      expect(results).toEqual([Exit.fail("database gone"), Exit.fail("database gone")])
    }))

  it.effect("a submitter that gives up before its batch starts is left out of it", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate } = yield* makeBatcher
      const first = yield* Effect.forkChild(batcher.submit(2))
      yield* Effect.yieldNow
      const leaving = yield* Effect.forkChild(batcher.submit(4))
      const staying = yield* Effect.forkChild(batcher.submit(6))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.await(first)
      yield* Fiber.await(staying)
      expect(batches).toEqual([[2], [6]])
    }))
})
