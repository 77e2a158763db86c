/**
 * API keys as credentials: their shape, their hash, and the principal an active key stands for.
 * Keys are looked up by SHA-256 on every request (no cache, so a revoked key fails on the very
 * next request in every process); `metering/Admission.ts` looks them up in batches.
 */
import { Data, Result } from "effect"
import { lastPerHolder } from "../platform/caching/PerObject.js"
import { sha256Hex } from "../platform/ids/Ids.js"
import type { Environment } from "../platform/http/RequestContext.js"
import type { EntitledAccountRow, KeyLookupRow } from "./AccountRows.js"
import { type Entitlements, KEY_PREFIX, KEY_SECRET_LENGTH, type ModulePricing, type Principal } from "./Domain.js"

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

const KEY_SHAPE = new RegExp(`^(?:${Object.values(KEY_PREFIX).join("|")})[0-9A-Za-z]{${KEY_SECRET_LENGTH}}$`)

/** The hash to look a presented key up by, unless it cannot be a key at all. */
export const keyHashOf = (raw: string | undefined): Result.Result<string, InvalidKey> => {
  const key = raw?.trim() ?? ""
  if (key.length === 0) return Result.fail(new InvalidKey({ reason: "missing" }))
  if (!KEY_SHAPE.test(key)) return Result.fail(new InvalidKey({ reason: "unknown" }))
  return Result.succeed(sha256Hex(key))
}

/**
 * `keyHashOf`, made once per connection while its client sends the same header (the key's checks
 * and hash were 2% of a vehicle query's CPU); behind a proxy that pools its connections, each
 * change of key is checked and hashed again. The last well-formed header and its hash stay on the
 * connection until it closes. The key is still looked up by its hash on every request, so a
 * revoked key fails at once; a refusal is made anew each time.
 */
export const keyHashOnConnection: (connection: object | null | undefined, raw: string | undefined) => Result.Result<string, InvalidKey> =
  lastPerHolder(keyHashOf, Result.isSuccess)

const entitlementsOf = (row: Omit<EntitledAccountRow, "createdAt">): Entitlements => ({
  plan: row.plan,
  plateQueriesMonthly: row.plateQueriesMonthly,
  moduleQueriesMonthly: row.moduleQueriesMonthly,
  uniquePlatesDaily: row.uniquePlatesDaily,
  requestsPerMinute: row.requestsPerMinute,
  enabledModules: row.enabledModules,
  timezone: row.timezone
})

const modulePricingOf = (row: Omit<EntitledAccountRow, "createdAt">): ModulePricing | null =>
  row.plan === "custom"
    ? { unitPriceCents: (row.modulePriceArs ?? 0) * 100, included: row.includedModules ?? 0 }
    : null

/** The account as a caller on `environment`, through `keyId` (a key, or a console session). */
export const principalFor = (account: Omit<EntitledAccountRow, "createdAt">, keyId: string, environment: Environment): Principal => ({
  accountId: account.id,
  owner: account.owner,
  keyId,
  environment,
  timezone: account.timezone,
  entitlements: entitlementsOf(account),
  modulePricing: modulePricingOf(account)
})

export const principalOf = (row: KeyLookupRow): Principal => principalFor(row, row.keyId, row.keyEnvironment)
