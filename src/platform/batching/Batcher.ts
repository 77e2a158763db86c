/**
 * Group commit: items submitted concurrently under the same key are processed together, one batch
 * at a time per key. A batch takes every item that arrived while the previous batch was running,
 * and starts as soon as that batch is settled; the first batch of an idle key waits for the event
 * loop's next turn, to take the items of the turn it was due in, or, when the settling of another
 * batch woke its items, for the end of that task. So an idle key adds at most one turn of delay
 * and a busy key pays one round trip for many items.
 *
 * This sits on every request's path, so a waiting item is just a callback: no fiber or deferred
 * per item, one fiber per busy key.
 */
import { Effect, Exit, FiberSet, Result, type Scope } from "effect"

/**
 * A `key` for items with no owner to batch by (plates, ids): spread over `lanes` by their last
 * character, so that one slow batch holds only a share of them. The keys, `prefix` and the lane's
 * number from 0, are made once: a key made anew for each item would be hashed anew to find its lane.
 */
export const spreadOver = (lanes: number, prefix = "") => {
  const keys = Array.from({ length: lanes }, (_, i) => `${prefix}${i}`)
  // an empty item has no last character: lane 0
  return (item: string) => keys[(item.charCodeAt(item.length - 1) || 0) % lanes]!
}

/**
 * The event loop's next turn: an idle lane's first batch starts once the current turn's callbacks
 * have run, so the requests that the turn's reads woke (each connection's in a callback of its
 * own) join one batch rather than the first of them running alone.
 */
const nextTurn = Effect.callback<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})

/** Batches being settled now: their items' callers resumed, one after another, in one task. */
let settling = 0

/**
 * The end of the current task. An idle lane whose first item was submitted while a batch was
 * being settled starts its first batch here: the items that settle woke have all been submitted
 * by then (they run in one loop), and the lane does not wait for the rest of the event loop's turn
 * (other connections' reads, the answers' own callbacks) to send it.
 */
const endOfTask = Effect.callback<void>((resume) => {
  let cancelled = false
  queueMicrotask(() => {
    if (!cancelled) resume(Effect.void)
  })
  return Effect.sync(() => {
    cancelled = true
  })
})

export interface Batcher<A, B, E> {
  readonly submit: (item: A) => Effect.Effect<B, E>
  /**
   * Queues `item` now, and answers the effect that awaits its result: the caller does other work
   * while its batch runs, without a fiber of its own. An item whose result is never awaited is
   * still processed.
   */
  readonly queue: (item: A) => Effect.Effect<Effect.Effect<B, E>>
}

export interface BatcherOptions<A, B, E, E2> {
  readonly key: (item: A) => string
  /** One result per item, in order. A failure of the whole batch fails every item with it. */
  readonly process: (key: string, items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<Result.Result<B, E>>, E2>
  readonly maxBatchSize?: number
}

interface Pending<A, B, E> {
  readonly item: A
  readonly resume: (result: Exit.Exit<B, E>) => void
}

interface Lane<A, B, E> {
  readonly queue: Array<Pending<A, B, E>>
  inFlight: ReadonlyArray<Pending<A, B, E>>
  /** Its first item was submitted while a batch was being settled (see `endOfTask`). */
  readonly wokenBySettle: boolean
}

export const make = Effect.fnUntraced(function*<A, B, E, E2>(options: BatcherOptions<A, B, E, E2>) {
  const fibers = yield* FiberSet.make()
  const runFork = yield* FiberSet.runtime(fibers)<never>()
  const lanes = new Map<string, Lane<A, B, E | E2>>()
  const maxBatchSize = options.maxBatchSize ?? 500

  const settle = (batch: ReadonlyArray<Pending<A, B, E | E2>>, exit: Exit.Exit<ReadonlyArray<Result.Result<B, E>>, E2>) => {
    settling++
    try {
      if (Exit.isFailure(exit)) {
        const failed = Exit.failCause(exit.cause)
        for (const pending of batch) pending.resume(failed)
        return
      }
      batch.forEach((pending, i) => {
        const result = exit.value[i]
        pending.resume(
          result === undefined
            ? Exit.die(new Error("batch returned fewer results than items"))
            : Result.isSuccess(result) ? Exit.succeed(result.success) : Exit.fail(result.failure)
        )
      })
    } finally {
      settling--
    }
  }

  const drain = Effect.fnUntraced(
    function*(key: string, lane: Lane<A, B, E | E2>) {
      let wait = lane.wokenBySettle ? endOfTask : nextTurn
      for (let queuedMeanwhile = false;; queuedMeanwhile = lane.queue.length > 0) {
        // Items that queued while a batch ran are all here when it is settled: their batch starts
        // at once. A turn later, the settled items' own callbacks (their answers' end, on a
        // listener) would run first and hold up the round trip that the queued items wait for.
        if (!queuedMeanwhile) yield* wait
        wait = nextTurn
        // Taking a batch and retiring an empty lane happen in one synchronous step, so an item
        // submitted in between always finds either a running lane or none.
        const batch = lane.queue.splice(0, maxBatchSize)
        lane.inFlight = batch
        if (batch.length === 0) {
          lanes.delete(key)
          return
        }
        settle(batch, yield* Effect.exit(options.process(key, batch.map((p) => p.item))))
      }
    },
    (effect, key, lane) =>
      Effect.onInterrupt(effect, () =>
        Effect.sync(() => {
          for (const pending of [...lane.inFlight, ...lane.queue.splice(0)]) pending.resume(Exit.interrupt())
          lanes.delete(key)
        }))
  )

  const enqueue = (pending: Pending<A, B, E | E2>) => {
    const key = options.key(pending.item)
    const existing = lanes.get(key)
    if (existing) {
      existing.queue.push(pending)
    } else {
      const lane: Lane<A, B, E | E2> = { queue: [pending], inFlight: [], wokenBySettle: settling > 0 }
      lanes.set(key, lane)
      runFork(drain(key, lane))
    }
    return key
  }

  /** A caller that gives up before its batch starts leaves nothing behind. */
  const withdraw = (key: string, pending: Pending<A, B, E | E2>) =>
    Effect.sync(() => {
      const lane = lanes.get(key)
      const index = lane ? lane.queue.indexOf(pending) : -1
      if (lane && index >= 0) lane.queue.splice(index, 1)
    })

  const submit = (item: A): Effect.Effect<B, E | E2> =>
    Effect.callback<B, E | E2>((resume) => {
      const pending: Pending<A, B, E | E2> = { item, resume }
      return withdraw(enqueue(pending), pending)
    })

  const queue = (item: A): Effect.Effect<Effect.Effect<B, E | E2>> =>
    Effect.sync(() => {
      let result: Exit.Exit<B, E | E2> | undefined
      let waiting: ((result: Exit.Exit<B, E | E2>) => void) | undefined
      const pending: Pending<A, B, E | E2> = {
        item,
        resume: (exit) => {
          if (waiting === undefined) result = exit
          else waiting(exit)
        }
      }
      const key = enqueue(pending)
      return Effect.callback<B, E | E2>((resume) => {
        if (result !== undefined) return resume(result)
        waiting = resume
        return withdraw(key, pending)
      })
    })

  return { submit, queue } satisfies Batcher<A, B, E | E2>
})

/**
 * Reads that concurrent requests with the same key share: one read per batch, made for the batch's
 * latest item once every item of it has arrived, so each request sees at least what was committed
 * before it arrived (and the latest view of what the items describe).
 */
export const sharedReads = <A, B, E>(options: {
  readonly key: (item: A) => string
  readonly read: (latest: A) => Effect.Effect<B, E>
}): Effect.Effect<(item: A) => Effect.Effect<B, E>, never, Scope.Scope> =>
  Effect.map(
    make({
      key: options.key,
      process: (_key, items: ReadonlyArray<A>) =>
        Effect.map(options.read(items.at(-1)!), (read) => items.map(() => Result.succeed(read)))
    }),
    (batcher) => batcher.submit
  )
