/**
 * Group commit: items submitted concurrently under the same key are processed together, one batch
 * at a time per key. A batch takes every item that arrived while the previous batch was running,
 * so an idle key adds no delay and a busy key pays one round trip for many items.
 */
import { Deferred, Effect, Either, Exit, FiberSet, type Scope } from "effect"

export interface Batcher<A, B, E> {
  readonly submit: (item: A) => Effect.Effect<B, E>
}

export interface BatcherOptions<A, B, E, E2> {
  readonly key: (item: A) => string
  /** One result per item, in order. A failure of the whole batch fails every item with it. */
  readonly process: (key: string, items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<Either.Either<B, E>>, E2>
  readonly maxBatchSize?: number
}

interface Pending<A, B, E> {
  readonly item: A
  readonly deferred: Deferred.Deferred<B, E>
}

interface Lane<A, B, E> {
  readonly queue: Array<Pending<A, B, E>>
  inFlight: ReadonlyArray<Pending<A, B, E>>
}

export const make = <A, B, E, E2>(
  options: BatcherOptions<A, B, E, E2>
): Effect.Effect<Batcher<A, B, E | E2>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberSet.make()
    const lanes = new Map<string, Lane<A, B, E | E2>>()
    const maxBatchSize = options.maxBatchSize ?? 500

    // Taking a batch and retiring an empty lane happen in one synchronous step, so an item
    // submitted in between always finds either a running lane or none.
    const takeBatch = (key: string, lane: Lane<A, B, E | E2>) =>
      Effect.sync(() => {
        const batch = lane.queue.splice(0, maxBatchSize)
        lane.inFlight = batch
        if (batch.length === 0) lanes.delete(key)
        return batch
      })

    const settle = (batch: ReadonlyArray<Pending<A, B, E | E2>>, exit: Exit.Exit<ReadonlyArray<Either.Either<B, E>>, E2>) =>
      Effect.forEach(batch, (pending, i) =>
        Exit.match(exit, {
          onFailure: (cause) => Deferred.failCause(pending.deferred, cause),
          onSuccess: (results) => {
            const result = results[i]
            return result === undefined
              ? Deferred.die(pending.deferred, new Error("batch returned fewer results than items"))
              : Deferred.complete(pending.deferred, Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left))
          }
        }), { discard: true })

    const drain = (key: string, lane: Lane<A, B, E | E2>): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (;;) {
          const batch = yield* takeBatch(key, lane)
          if (batch.length === 0) return
          const exit = yield* Effect.exit(options.process(key, batch.map((p) => p.item)))
          yield* settle(batch, exit)
        }
      }).pipe(
        Effect.onInterrupt(() =>
          Effect.forEach([...lane.inFlight, ...lane.queue.splice(0)], (p) => Deferred.interrupt(p.deferred), {
            discard: true
          }).pipe(Effect.zipRight(Effect.sync(() => lanes.delete(key))))
        )
      )

    const submit = (item: A): Effect.Effect<B, E | E2> =>
      Effect.gen(function*() {
        const deferred = yield* Deferred.make<B, E | E2>()
        const pending: Pending<A, B, E | E2> = { item, deferred }
        const key = options.key(item)
        const start = yield* Effect.sync(() => {
          const existing = lanes.get(key)
          if (existing) {
            existing.queue.push(pending)
            return undefined
          }
          const lane: Lane<A, B, E | E2> = { queue: [pending], inFlight: [] }
          lanes.set(key, lane)
          return lane
        })
        if (start) yield* FiberSet.run(fibers, drain(key, start))
        return yield* Deferred.await(deferred).pipe(
          // A caller that gives up before its batch starts leaves nothing behind.
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              const lane = lanes.get(key)
              const index = lane ? lane.queue.indexOf(pending) : -1
              if (lane && index >= 0) lane.queue.splice(index, 1)
            })
          )
        )
      })

    return { submit }
  })
