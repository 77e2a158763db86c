/**
 * Where the vehicle query finds a plate's vehicle (a port). Production's source is the registry,
 * the upstream cache and the upstream (`VehicleSource.Live`); the sandbox's is its generator
 * (`sandbox/Sources.ts`); `VehicleSource.Test` answers canned vehicles. `VehicleSources` holds
 * one per environment, built once with the query.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { RetryPolicy } from "../platform/sandboxSafe/RetryPolicy.js"
import { buildPerEnvironment, type PerEnvironment } from "../platform/http/PerEnvironment.js"
import type { VehicleQueryParams } from "./Api.js"
import type { VehicleFacts } from "./Records.js"
import { type StoredVehicle, VehicleStore } from "./Store.js"
import { SourceUnavailable, VehicleUpstream } from "./Upstream.js"

/** What a source found, with where it came from (for `debug` and the sandbox's extra fields). */
export interface Lookup {
  readonly facts: Option.Option<VehicleFacts>
  readonly source: "registry" | "upstream" | "synthetic" | "none"
  readonly cache: "hit" | "miss"
  readonly stale?: boolean
  readonly sandbox?: { readonly scenario: string; readonly seed: string | null; readonly vehicleType: string | null }
  readonly lookupMs: number
}

/** What a source knows without waiting for its origin, or what the query must do instead. */
export type Local =
  | { readonly _tag: "Found"; readonly lookup: Lookup }
  /** `onMiss=search` and the origin must be asked: the query accepts a vehicle search. */
  | { readonly _tag: "SearchAccepted" }
  /** The origin must be asked, once the query may be charged; transient failures retried by `retry` if given. */
  | { readonly _tag: "AskSource"; readonly ask: (retry?: RetryPolicy) => Effect.Effect<Lookup, SourceUnavailable> }

export const found = (lookup: Lookup): Local => ({ _tag: "Found", lookup })
export const SEARCH: Local = { _tag: "SearchAccepted" }

export const elapsedSince = (started: number) => Clock.clockWith((clock) => Effect.succeed(clock.currentTimeMillisUnsafe() - started))

export class VehicleSource extends Context.Service<VehicleSource, {
  readonly findLocally: (plate: string, params: VehicleQueryParams, started: number) => Effect.Effect<Local, SourceUnavailable>
  /**
   * What `findLocally` would find at `now`, when the source knows it from memory alone (no wait,
   * no effect); undefined when it must look further.
   */
  readonly findAtOnce: (plate: string, params: VehicleQueryParams, now: number) => Local | undefined
  /** What a vehicle search finds: waits for the origin when there is one (its workflow retries). */
  readonly search: (plate: string, params: VehicleQueryParams, started: number) => Effect.Effect<Lookup, SourceUnavailable>
}>()("vda/VehicleSource") {
  /**
   * Production: the registry and the upstream cache, then the upstream when one is configured.
   * Its store and upstream are the application's (one hot cache, one breaker), as the
   * environments' sources are built apart (`VehicleSources`).
   */
  static readonly Live = Layer.effect(
    VehicleSource,
    Effect.gen(function*() {
      const store = yield* VehicleStore
      const upstream = yield* VehicleUpstream
      /** What the query does with what the store holds for `plate` (read `lookupMs` after `started`). */
      const localOf = (plate: string, params: VehicleQueryParams, stored: StoredVehicle | undefined, started: number, lookupMs: number): Local => {
        if (stored !== undefined && isFresh(stored, started)) return found(fromStore(stored, false, lookupMs))
        if (!upstream.enabled) {
          return found(stored !== undefined ? fromStore(stored, true, lookupMs) : { facts: Option.none(), source: "none", cache: "miss", lookupMs })
        }
        return params.onMiss === "search"
          ? SEARCH
          : { _tag: "AskSource", ask: (retry) => fromUpstream(store, upstream, plate, stored, started, retry) }
      }
      return VehicleSource.of({
        findLocally: (plate, params, started) =>
          Effect.flatMap(store.find(plate), (stored) =>
            Effect.map(elapsedSince(started), (lookupMs) => localOf(plate, params, stored, started, lookupMs))),
        findAtOnce: (plate, params, now) => {
          const kept = store.heldInMemory(plate, now)
          return kept === undefined ? undefined : localOf(plate, params, kept.row, now, 0)
        },
        search: (plate, _params, started) =>
          Effect.flatMap(store.find(plate), (stored) =>
            upstream.enabled ? fromUpstream(store, upstream, plate, stored, started) : Effect.succeed(fromStore(stored, false, 0)))
      })
    })
  )

  /**
   * Canned vehicles by plate: a vehicle is found in the registry, `null` or a plate not listed is
   * found nowhere, and `SourceUnavailable` is the source down.
   */
  static readonly Test = (vehicles: Readonly<Record<string, VehicleFacts | null | SourceUnavailable>>) => {
    const lookup = (plate: string): Lookup | SourceUnavailable => {
      const canned = vehicles[plate] ?? null
      if (canned instanceof SourceUnavailable) return canned
      return canned === null
        ? { facts: Option.none(), source: "none", cache: "miss", lookupMs: 0 }
        : { facts: Option.some(canned), source: "registry", cache: "hit", lookupMs: 0 }
    }
    const lookupEffect = (plate: string): Effect.Effect<Lookup, SourceUnavailable> => {
      const looked = lookup(plate)
      return looked instanceof SourceUnavailable ? Effect.fail(looked) : Effect.succeed(looked)
    }
    return Layer.succeed(VehicleSource, {
      findLocally: (plate) => Effect.map(lookupEffect(plate), found),
      findAtOnce: (plate) => {
        const looked = lookup(plate)
        return looked instanceof SourceUnavailable ? undefined : found(looked)
      },
      search: lookupEffect
    })
  }
}

/** Each environment's vehicle source, built once: a query picks its principal's. */
export class VehicleSources extends Context.Service<VehicleSources, PerEnvironment<typeof VehicleSource.Service>>()("vda/VehicleSources") {
  static readonly layer = <L extends PerEnvironment<Layer.Layer<VehicleSource, any, any>>>(sources: L) =>
    Layer.effect(VehicleSources, buildPerEnvironment(VehicleSource, sources))
}

const UPSTREAM_FRESH_MS = 7 * 24 * 3_600_000
const UPSTREAM_MISS_FRESH_MS = 24 * 3_600_000

const isFresh = (stored: StoredVehicle, now: number) =>
  stored.source === "registry" ||
  now - stored.fetchedAt.getTime() < (stored.found ? UPSTREAM_FRESH_MS : UPSTREAM_MISS_FRESH_MS)

const fromStore = (stored: StoredVehicle | undefined, stale: boolean, lookupMs: number): Lookup => ({
  facts: Option.fromNullishOr(stored?.facts),
  source: stored?.source ?? "none",
  cache: "hit",
  lookupMs,
  ...(stale ? { stale } : {})
})

/**
 * Asks the upstream (cache refreshed); a stale answer beats none when it is down. `retry` is
 * the request's own policy; a search leaves retries to its workflow.
 */
const fromUpstream = Effect.fnUntraced(function*(
  store: typeof VehicleStore.Service,
  upstream: typeof VehicleUpstream.Service,
  plate: string,
  stored: StoredVehicle | undefined,
  started: number,
  retry?: RetryPolicy
) {
  const answer = yield* upstream.fetch(plate, retry).pipe(
    Effect.catchTag("SourceUnavailable", (e) => (stored?.found ? Effect.succeed(undefined) : Effect.fail(e)))
  )
  const lookupMs = yield* elapsedSince(started)
  if (answer === undefined) return fromStore(stored, true, lookupMs)
  yield* store.cacheUpstream(plate, Option.getOrNull(answer), new Date(yield* Clock.currentTimeMillis))
  return { facts: answer, source: "upstream", cache: "miss", lookupMs } satisfies Lookup
})
