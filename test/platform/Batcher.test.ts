/**
 * The group-commit batcher: items submitted while a batch runs share the next batch, each submitter
 * gets its own item's result, a batch that fails as a whole fails every item with its cause, and a
 * submitter that gives up before its batch starts leaves nothing behind. An item queued now
 * (`queue`) is in the batch of its turn whether or not its result is asked for yet.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Result } from "effect"
import * as Batcher from "../../src/platform/batching/Batcher.js"

/**
 * A batcher that doubles items, fails odd ones, records its batches and holds each batch at `gate`;
 * `started` is done once the first batch has begun.
 */
const makeBatcher = Effect.gen(function*() {
  const batches: Array<ReadonlyArray<number>> = []
  const gate = yield* Deferred.make<void>()
  const started = yield* Deferred.make<void>()
  const batcher: Batcher.Batcher<number, string, string> = yield* Batcher.make({
    key: () => "one",
    process: (_key, items: ReadonlyArray<number>) =>
      Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Deferred.await(gate)),
        Effect.andThen(Effect.sync(() => {
          batches.push(items)
          return items.map((item) => (item % 2 === 0 ? Result.succeed(`${item * 2}`) : Result.fail(`odd ${item}`)))
        }))
      )
  })
  return { batcher, batches, gate, started }
})

describe("Batcher.submit", () => {
  it.effect("items submitted while a batch runs share the next batch; each submitter gets its own result", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate, started } = yield* makeBatcher
      const first = yield* Effect.forkChild(Effect.exit(batcher.submit(2))) // starts the first batch, held at the gate
      yield* Deferred.await(started)
      const rest = yield* Effect.forEach([4, 5, 6], (item) => Effect.forkChild(Effect.exit(batcher.submit(item))))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach([first, ...rest], Fiber.join)
      expect(batches).toEqual([[2], [4, 5, 6]])
      expect(results).toEqual([Exit.succeed("4"), Exit.succeed("8"), Exit.fail("odd 5"), Exit.succeed("12")])
    }))

  it.effect("the items queued while a batch ran start their batch as soon as it is settled, not a turn later", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate, started } = yield* makeBatcher
      let seenNextTurn: ReadonlyArray<ReadonlyArray<number>> | undefined
      // the first submitter, on its answer, looks at the batches from the event loop's next turn
      const first = yield* Effect.forkChild(batcher.submit(2).pipe(
        Effect.tap(() => Effect.sync(() => setImmediate(() => (seenNextTurn = [...batches]))))
      ))
      yield* Deferred.await(started)
      const rest = yield* Effect.forEach([4, 6], (item) => Effect.forkChild(batcher.submit(item)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined) // open from now on: a batch ends in the step it starts in
      yield* Effect.forEach([first, ...rest], Fiber.join)
      yield* Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))
      expect(seenNextTurn).toEqual([[2], [4, 6]])
    }))

  it.effect("items submitted in one turn of the event loop share one batch", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate } = yield* makeBatcher
      const submitted = yield* Effect.forEach([2, 4, 5], (item) => Effect.forkChild(Effect.exit(batcher.submit(item))))
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach(submitted, Fiber.join)
      expect(batches).toEqual([[2, 4, 5]])
      expect(results).toEqual([Exit.succeed("4"), Exit.succeed("8"), Exit.fail("odd 5")])
    }))

  it.effect("the items one settled batch passes on to an idle key share its first batch, sent before the loop's next turn", () =>
    Effect.gen(function*() {
      let nextTurnCame = false
      const seen: Array<{ readonly items: ReadonlyArray<number>; readonly nextTurnCame: boolean }> = []
      const first = yield* Batcher.make({
        key: () => "first",
        process: (_key, items: ReadonlyArray<number>) =>
          Effect.sync(() => {
            // queued before this batch is settled: a batch a turn later would come after it
            setImmediate(() => (nextTurnCame = true))
            return items.map((item) => Result.succeed(item))
          })
      })
      const next = yield* Batcher.make({
        key: () => "next",
        process: (_key, items: ReadonlyArray<number>) =>
          Effect.sync(() => {
            seen.push({ items, nextTurnCame })
            return items.map((item) => Result.succeed(item * 10))
          })
      })
      const submitters = yield* Effect.forEach([1, 2, 3], (item) =>
        Effect.forkChild(Effect.flatMap(first.submit(item), (settled) => next.submit(settled))))
      const results = yield* Effect.forEach(submitters, Fiber.join)
      expect(results).toEqual([10, 20, 30])
      expect(seen).toEqual([{ items: [1, 2, 3], nextTurnCame: false }])
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
      const { batcher, batches, gate, started } = yield* makeBatcher
      const first = yield* Effect.forkChild(batcher.submit(2))
      yield* Deferred.await(started)
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

describe("Batcher.queue", () => {
  it.effect("queues the item at once: it joins the batch of its turn, and its result waits until asked for", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate } = yield* makeBatcher
      const even = yield* batcher.queue(2)
      const odd = yield* batcher.queue(5)
      const submitted = yield* Effect.forkChild(Effect.exit(batcher.submit(4)), { startImmediately: true })
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.await(submitted) // the batch is over before either queued result is asked for
      expect(batches).toEqual([[2, 5, 4]])
      expect([yield* Effect.exit(even), yield* Effect.exit(odd)]).toEqual([Exit.succeed("4"), Exit.fail("odd 5")])
    }))

  it.effect("a result asked for while its batch runs arrives when the batch ends", () =>
    Effect.gen(function*() {
      const { batcher, gate, started } = yield* makeBatcher
      const queued = yield* batcher.queue(6)
      const waiting = yield* Effect.forkChild(queued)
      yield* Deferred.await(started)
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(waiting)).toBe("12")
    }))

  it.effect("a caller that gives up waiting before its batch starts is left out of it", () =>
    Effect.gen(function*() {
      const { batcher, batches, gate, started } = yield* makeBatcher
      const first = yield* Effect.forkChild(batcher.submit(2))
      yield* Deferred.await(started)
      const leaving = yield* Effect.forkChild(yield* batcher.queue(4))
      const staying = yield* batcher.queue(6)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.await(first)
      expect(yield* staying).toBe("12")
      expect(batches).toEqual([[2], [6]])
    }))
})

describe("Batcher.sharedReads", () => {
  it.effect("reads waiting while one runs share the next, made for the latest of them; other keys read apart", () =>
    Effect.gen(function*() {
      const reads: Array<string> = []
      const gate = yield* Deferred.make<void>()
      const began = yield* Deferred.make<void>()
      let version = 0
      const read = yield* Batcher.sharedReads({
        key: (item: string) => item.split("#")[0]!,
        read: (latest: string) =>
          Effect.flatMap(Effect.sync(() => version), (seen) =>
            Effect.andThen(Effect.andThen(Deferred.succeed(began, undefined), Deferred.await(gate)), Effect.sync(() => {
              reads.push(latest)
              return `${latest} saw v${seen}`
            })))
      })
      const first = yield* Effect.forkChild(read("a#1")) // the first read, held at the gate
      yield* Deferred.await(began)
      version = 1 // committed after the first read began: only the reads that arrive later must see it
      const waiting = yield* Effect.forEach(["a#2", "a#3", "b#1"], (item) => Effect.forkChild(read(item)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach([first, ...waiting], Fiber.join)
      expect(results).toEqual(["a#1 saw v0", "a#3 saw v1", "a#3 saw v1", "b#1 saw v1"])
      expect(reads.sort()).toEqual(["a#1", "a#3", "b#1"])
    }))

  it.effect("a read that fails fails every request that shared it", () =>
    Effect.gen(function*() {
      const read = yield* Batcher.sharedReads({ key: () => "one", read: (_: number) => Effect.fail("database gone" as const) })
      const results = yield* Effect.forEach([1, 2], (item) => Effect.exit(read(item)), { concurrency: "unbounded" })
      expect(results).toEqual([Exit.fail("database gone"), Exit.fail("database gone")])
    }))
})
