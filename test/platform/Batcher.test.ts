/**
 * The group-commit batcher: items submitted while a batch runs share the next batch, each submitter
 * gets its own item's result, a batch that fails as a whole fails every item with its cause, and a
 * submitter that gives up before its batch starts leaves nothing behind.
 */
import { Deferred, Effect, Either, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import * as Batcher from "../../src/platform/Batcher.js"

/** Runs `body` with a batcher that doubles items, fails odd ones, and records its batches. */
const withBatcher = <A>(body: (batcher: Batcher.Batcher<number, string, string>, batches: Array<ReadonlyArray<number>>, gate: Deferred.Deferred<void>) => Effect.Effect<A>) =>
  Effect.scoped(Effect.gen(function*() {
    const batches: Array<ReadonlyArray<number>> = []
    const gate = yield* Deferred.make<void>()
    const batcher = yield* Batcher.make({
      key: () => "one",
      process: (_key, items: ReadonlyArray<number>) =>
        Effect.zipRight(Deferred.await(gate), Effect.sync(() => {
          batches.push(items)
          return items.map((item) => (item % 2 === 0 ? Either.right(`${item * 2}`) : Either.left(`odd ${item}`)))
        }))
    })
    return yield* body(batcher, batches, gate)
  }))

describe("Batcher.submit", () => {
  it("items submitted while a batch runs share the next batch; each submitter gets its own result", async () => {
    const { batches, results } = await Effect.runPromise(withBatcher((batcher, batches, gate) =>
      Effect.gen(function*() {
        const first = yield* Effect.fork(Effect.exit(batcher.submit(2))) // starts the first batch, held at the gate
        const rest = yield* Effect.forEach([4, 5, 6], (item) => Effect.fork(Effect.exit(batcher.submit(item))))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        const results = yield* Effect.forEach([first, ...rest], Fiber.join)
        return { batches, results }
      })))
    expect(batches).toEqual([[2], [4, 5, 6]])
    expect(results).toEqual([Exit.succeed("4"), Exit.succeed("8"), Exit.fail("odd 5"), Exit.succeed("12")])
  })

  it("a batch that fails as a whole fails every item with its cause", async () => {
    const results = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const batcher = yield* Batcher.make({
        key: () => "one",
        process: (_key, _items: ReadonlyArray<number>) => Effect.fail("database gone" as const)
      })
      return yield* Effect.forEach([1, 2], (item) => Effect.exit(batcher.submit(item)), { concurrency: "unbounded" })
    })))
    expect(results).toEqual([Exit.fail("database gone"), Exit.fail("database gone")])
  })

  it("a submitter that gives up before its batch starts is left out of it", async () => {
    const batches = await Effect.runPromise(withBatcher((batcher, batches, gate) =>
      Effect.gen(function*() {
        const first = yield* Effect.fork(batcher.submit(2))
        yield* Effect.yieldNow()
        const leaving = yield* Effect.fork(batcher.submit(4))
        const staying = yield* Effect.fork(batcher.submit(6))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(leaving)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.await(first)
        yield* Fiber.await(staying)
        return batches
      })))
    expect(batches).toEqual([[2], [6]])
  })
})
