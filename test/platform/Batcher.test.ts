/**
 * The group-commit batcher's callback side (`offer`), as the lean lane uses it outside any fiber:
 * items offered together share one batch, each callback gets its own item's result once, and a
 * callback that throws costs neither the batch's other items nor the next batches their answers.
 */
import { Cause, Deferred, Effect, Either, Exit, Logger } from "effect"
import { describe, expect, it } from "vitest"
import * as Batcher from "../../src/platform/Batcher.js"

type Settled = Exit.Exit<string, string>

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

/** Waits (polling the event loop, with a deadline) until `done` holds. */
const until = (done: () => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 5_000
    while (!done()) {
      if (Date.now() > deadline) throw new Error("timed out")
      await new Promise((resolve) => setImmediate(resolve))
    }
  })

describe("Batcher.offer", () => {
  it("items offered while a batch runs share the next batch; each callback gets its own result, once", async () => {
    const { batches, settled } = await Effect.runPromise(withBatcher((batcher, batches, gate) =>
      Effect.gen(function*() {
        const settled = new Map<number, Array<Settled>>()
        const offer = (item: number) => batcher.offer(item, (exit) => settled.set(item, [...(settled.get(item) ?? []), exit]))
        offer(2) // starts the first batch, held at the gate
        for (const item of [4, 5, 6]) offer(item)
        yield* Deferred.succeed(gate, undefined)
        yield* until(() => settled.size === 4)
        return { batches, settled }
      })))
    expect(batches).toEqual([[2], [4, 5, 6]])
    expect([...settled].sort(([a], [b]) => a - b)).toEqual([
      [2, [Exit.succeed("4")]],
      [4, [Exit.succeed("8")]],
      [5, [Exit.fail("odd 5")]],
      [6, [Exit.succeed("12")]]
    ])
  })

  it("a callback that throws is logged; the batch's other items and later batches still get their answers", async () => {
    const logged: Array<string> = []
    const logger = Logger.make(({ cause, message }) => logged.push(`${[message].flat().join(" ")}: ${Cause.pretty(cause).split("\n")[0]}`))
    const settled = await Effect.runPromise(withBatcher((batcher, _batches, gate) =>
      Effect.gen(function*() {
        const settled: Array<number> = []
        batcher.offer(2, () => {
          throw new Error("the caller's own bug")
        })
        batcher.offer(4, () => settled.push(4))
        yield* Deferred.succeed(gate, undefined)
        yield* until(() => settled.length === 1 && logged.length === 1)
        batcher.offer(6, () => settled.push(6))
        yield* until(() => settled.length === 2)
        return settled
      })).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    expect(settled).toEqual([4, 6])
    expect(logged).toEqual(["a batched item's callback failed: Error: the caller's own bug"])
  })

  it("a batch that fails as a whole fails every item's callback with its cause", async () => {
    const settled = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const batcher = yield* Batcher.make({
        key: () => "one",
        process: (_key, _items: ReadonlyArray<number>) => Effect.fail("database gone" as const)
      })
      const settled: Array<Exit.Exit<unknown, unknown>> = []
      batcher.offer(1, (exit) => settled.push(exit))
      batcher.offer(2, (exit) => settled.push(exit))
      yield* until(() => settled.length === 2)
      return settled
    })))
    expect(settled).toEqual([Exit.fail("database gone"), Exit.fail("database gone")])
  })
})
