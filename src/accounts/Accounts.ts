/**
 * Account administration: accounts, plans, custom terms and API keys (used by the CLI and the
 * first-run demo account).
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBase62, sha256Hex, ulid } from "../platform/ids/Ids.js"
import type { Environment } from "../platform/http/RequestContext.js"
import { KEY_PREFIX, KEY_SECRET_LENGTH, type PlanId } from "../principal/Domain.js"
import type { AccountRow } from "../principal/AccountRows.js"
import { AccountsRepo, type CustomPlanTerms, type KeyOwner } from "./Repo.js"

export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly id: string }> {}
export class KeyNotFound extends Data.TaggedError("KeyNotFound")<{ readonly id: string }> {}

export interface CreatedKey {
  readonly id: string
  /** The secret, returned once and never stored. */
  readonly key: string
  readonly environment: Environment
  readonly prefix: string
  readonly last4: string
  readonly name: string | null
}

/** A new secret in the form `vda_live_…`/`vda_test_…` + 32 base62 characters. */
export const generateKey = (environment: Environment) => `${KEY_PREFIX[environment]}${randomBase62(KEY_SECRET_LENGTH)}`

const make = Effect.gen(function*() {
  const repo = yield* AccountsRepo
  const sql = yield* SqlClient.SqlClient

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  const requireAccount = (id: string) =>
    repo.findAccount(id).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new AccountNotFound({ id })),
        onSome: Effect.succeed
      }))
    )

  const create = Effect.fnUntraced(function*(input: { readonly owner: string; readonly plan: PlanId; readonly timezone: string }) {
    const account: AccountRow = {
      id: `acct_${yield* ulid}`,
      owner: input.owner,
      plan: input.plan,
      timezone: input.timezone,
      createdAt: yield* now
    }
    yield* repo.insertAccount(account)
    if (input.plan === "custom") yield* repo.ensureCustomTerms(account.id)
    return account
  }, sql.withTransaction, Effect.orDie)

  const setPlan = Effect.fnUntraced(function*(id: string, plan: PlanId) {
    if (!(yield* repo.setPlan(id, plan))) return yield* Effect.fail(new AccountNotFound({ id }))
    if (plan === "custom") yield* repo.ensureCustomTerms(id)
    return yield* requireAccount(id)
  }, sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  /** Merges `changes` into the account's custom terms and moves the account to `custom`. */
  const setCustom = Effect.fnUntraced(function*(id: string, changes: Partial<CustomPlanTerms>) {
    yield* requireAccount(id)
    yield* repo.ensureCustomTerms(id)
    const current = Option.getOrThrow(yield* repo.findCustomTerms(id))
    const terms: CustomPlanTerms = { ...current, ...changes }
    yield* repo.upsertCustomTerms(id, terms)
    yield* repo.setPlan(id, "custom")
    return yield* requireAccount(id)
  }, sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const createKey = Effect.fnUntraced(function*(input: { readonly accountId: string; readonly environment: Environment; readonly name: string | null }) {
    yield* requireAccount(input.accountId)
    const key = generateKey(input.environment)
    const created: CreatedKey = {
      id: `key_${yield* ulid}`,
      key,
      environment: input.environment,
      prefix: key.slice(0, 13),
      last4: key.slice(-4),
      name: input.name
    }
    yield* repo.insertKey({
      id: created.id,
      accountId: input.accountId,
      environment: input.environment,
      name: input.name,
      keyHash: sha256Hex(key),
      prefix: created.prefix,
      last4: created.last4,
      createdAt: yield* now,
      revokedAt: null,
      lastUsedAt: null
    })
    return created
  })

  const listKeys = (accountId: string) =>
    Effect.andThen(requireAccount(accountId), repo.listKeys(accountId))

  const revokeKey = (id: string) =>
    Effect.flatMap(now, (at) => repo.revokeKey(id, at)).pipe(
      Effect.flatMap((found) => (found ? Effect.void : Effect.fail(new KeyNotFound({ id }))))
    )

  const renameOwnKey = (owner: KeyOwner, id: string, name: string | null) =>
    Effect.flatMap(repo.renameOwnKey(owner, id, name), (found) => (found ? Effect.void : Effect.fail(new KeyNotFound({ id }))))

  const revokeOwnKey = (owner: KeyOwner, id: string) =>
    Effect.flatMap(now, (at) => repo.revokeOwnKey(owner, id, at)).pipe(
      Effect.flatMap((found) => (found ? Effect.void : Effect.fail(new KeyNotFound({ id }))))
    )

  return {
    create,
    find: repo.findAccount,
    require: requireAccount,
    count: repo.countAccounts,
    setPlan,
    setCustom,
    createKey,
    listKeys,
    revokeKey,
    renameOwnKey,
    revokeOwnKey
  }
})

export class Accounts extends Context.Service<Accounts, Effect.Success<typeof make>>()("vda/Accounts", { make }) {
  static readonly layer = Layer.effect(Accounts, make).pipe(Layer.provide(AccountsRepo.layer))
}
