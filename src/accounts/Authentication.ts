/**
 * API key authentication. Keys are looked up by SHA-256 on every request (no cache, so a revoked
 * key fails on the very next request in every process); concurrent lookups share one query.
 */
import { Clock, Data, Effect, Either, FiberSet } from "effect"
import * as Batcher from "../platform/Batcher.js"
import { sha256Hex } from "../platform/Ids.js"
import type { Environment } from "../platform/RequestContext.js"
import type { Principal } from "./Domain.js"
import { AccountsRepo, entitlementsOf, type KeyLookupRow, modulePricingOf } from "./Repo.js"

export class InvalidKey extends Data.TaggedError("InvalidKey")<{
  readonly reason: "missing" | "unknown" | "other_environment"
}> {
  get explanation(): string {
    switch (this.reason) {
      case "missing":
        return "Missing x-api-key header"
      case "unknown":
        return "Invalid or revoked API key"
      case "other_environment":
        return "This API key belongs to the other environment; production keys work only on the production address and sandbox keys only on the sandbox address"
    }
  }
}

const KEY_SHAPE = /^vda_(live|test)_[0-9A-Za-z]{32}$/
const LOOKUP_LANES = 4
/** `lastUsedAt` is a recent-activity hint, written at most once a minute per key and process. */
const TOUCH_INTERVAL_MS = 60_000

export class Authentication extends Effect.Service<Authentication>()("vda/Authentication", {
  scoped: Effect.gen(function*() {
    const repo = yield* AccountsRepo
    const touches = yield* FiberSet.make()
    const lastTouched = new Map<string, number>()

    const lookups = yield* Batcher.make({
      key: (hash: string) => String(parseInt(hash.slice(0, 2), 16) % LOOKUP_LANES),
      process: (_lane, hashes) =>
        Effect.map(repo.findActiveKeys([...new Set(hashes)]), (rows) => {
          const byHash = new Map<string, KeyLookupRow>(rows.map((row) => [row.keyHash, row]))
          return hashes.map((hash) => Either.right(byHash.get(hash)))
        })
    })

    const touch = (keyId: string, now: number) =>
      Effect.suspend(() => {
        const last = lastTouched.get(keyId)
        if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return Effect.void
        lastTouched.set(keyId, now)
        return FiberSet.run(touches, repo.touchKeys([keyId], new Date(now)).pipe(Effect.ignoreLogged), {
          propagateInterruption: false
        }).pipe(Effect.asVoid)
      })

    const authenticate = (rawKey: string | undefined, environment: Environment): Effect.Effect<Principal, InvalidKey> =>
      Effect.gen(function*() {
        const key = rawKey?.trim() ?? ""
        if (key.length === 0) return yield* new InvalidKey({ reason: "missing" })
        if (!KEY_SHAPE.test(key)) return yield* new InvalidKey({ reason: "unknown" })
        const row = yield* lookups.submit(sha256Hex(key))
        if (row === undefined) return yield* new InvalidKey({ reason: "unknown" })
        if (row.environment !== environment) return yield* new InvalidKey({ reason: "other_environment" })
        yield* touch(row.keyId, yield* Clock.currentTimeMillis)
        return {
          accountId: row.id,
          owner: row.owner,
          keyId: row.keyId,
          environment: row.environment,
          timezone: row.timezone,
          entitlements: entitlementsOf(row),
          modulePricing: modulePricingOf(row)
        }
      })

    return { authenticate }
  }),
  dependencies: [AccountsRepo.Default]
}) {}
