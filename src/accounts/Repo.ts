/**
 * SQL for accounts, plans, custom plans and API keys.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Environment } from "../platform/http/RequestContext.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { type AccountRow, EntitledAccountRow } from "../principal/AccountRows.js"
import { allowanceFields, CUSTOM_PLAN_BASE, type PlanId, StandardPlanId } from "../principal/Domain.js"

export const PlanRow = Schema.Struct({ id: StandardPlanId, priceArs: NonNegativeInt, ...allowanceFields })
export type PlanRow = typeof PlanRow.Type

export const CustomPlanTerms = Schema.Struct({ ...allowanceFields, modulePriceArs: NonNegativeInt, includedModules: NonNegativeInt })
export type CustomPlanTerms = typeof CustomPlanTerms.Type

export const KeyRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  name: Schema.NullOr(Schema.String),
  prefix: Schema.String,
  last4: Schema.String,
  createdAt: Schema.Date,
  revokedAt: Schema.NullOr(Schema.Date),
  lastUsedAt: Schema.NullOr(Schema.Date)
})
export type KeyRow = typeof KeyRow.Type

/** Whose keys a console session may manage: one account, in one environment. */
export interface KeyOwner {
  readonly accountId: string
  readonly environment: Environment
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const entitledAccount = SqlRows.findOneOption("entitled account", EntitledAccountRow)
  const accountCount = SqlRows.single("account count", Schema.Struct({ count: NonNegativeInt }))
  const customTerms = SqlRows.findOneOption("custom plan terms", CustomPlanTerms)
  const plans = SqlRows.findAll("plans", PlanRow)
  const keys = SqlRows.findAll("account keys", KeyRow)

  const listPlans = plans(sql`
      select id, price_ars, plate_queries_monthly, module_queries_monthly, unique_plates_daily,
             requests_per_minute, enabled_modules
      from plans order by position`).pipe(Effect.orDie)

  const updateOwnKey = (owner: KeyOwner, id: string, change: Partial<Pick<KeyRow, "name" | "revokedAt">>) =>
    sql`
      update api_keys set ${sql.update(change)}
      where id = ${id} and account_id = ${owner.accountId} and environment = ${owner.environment} and revoked_at is null
      returning id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  return {
    insertAccount: (account: AccountRow) =>
      sql`insert into accounts ${sql.insert(account)}`.pipe(Effect.asVoid, Effect.orDie),

    findAccount: (id: string) =>
      entitledAccount(sql`
        select id, owner, plan, timezone, created_at, plate_queries_monthly, module_queries_monthly,
               unique_plates_daily, requests_per_minute, enabled_modules, module_price_ars, included_modules
        from entitled_accounts where id = ${id}`).pipe(Effect.orDie),

    countAccounts: accountCount(sql`select count(*)::int as count from accounts`).pipe(
      Effect.map((row) => row.count),
      Effect.orDie
    ),

    setPlan: (id: string, plan: PlanId) =>
      sql`update accounts set plan = ${plan} where id = ${id} returning id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),

    /**
     * Unless the account already has custom terms, gives it the allowances and modules of
     * CUSTOM_PLAN_BASE as the plans table holds them, with the table's default module price.
     */
    ensureCustomTerms: Effect.fnUntraced(function*(accountId: string) {
      const base = (yield* listPlans).find((plan) => plan.id === CUSTOM_PLAN_BASE)
      if (base === undefined) return yield* Effect.die(new Error(`The plans table has no ${CUSTOM_PLAN_BASE} plan`))
      const { plateQueriesMonthly, moduleQueriesMonthly, uniquePlatesDaily, requestsPerMinute, enabledModules } = base
      const terms = {
        plateQueriesMonthly,
        moduleQueriesMonthly,
        uniquePlatesDaily,
        requestsPerMinute,
        enabledModules: [...enabledModules]
      }
      yield* sql`
        insert into custom_plans ${sql.insert({ accountId, ...terms })}
        on conflict (account_id) do nothing`.pipe(Effect.orDie)
    }),

    findCustomTerms: (accountId: string) =>
      customTerms(sql`
        select plate_queries_monthly, module_queries_monthly, unique_plates_daily, requests_per_minute,
               module_price_ars, included_modules, enabled_modules
        from custom_plans where account_id = ${accountId}`).pipe(Effect.orDie),

    upsertCustomTerms: (accountId: string, terms: CustomPlanTerms) =>
      sql`
        insert into custom_plans ${sql.insert({ accountId, ...terms, enabledModules: [...terms.enabledModules] })}
        on conflict (account_id) do update set
          plate_queries_monthly = excluded.plate_queries_monthly,
          module_queries_monthly = excluded.module_queries_monthly,
          unique_plates_daily = excluded.unique_plates_daily,
          requests_per_minute = excluded.requests_per_minute,
          module_price_ars = excluded.module_price_ars,
          included_modules = excluded.included_modules,
          enabled_modules = excluded.enabled_modules`.pipe(Effect.asVoid, Effect.orDie),

    listPlans,

    insertKey: (key: KeyRow & { readonly keyHash: string }) =>
      sql`insert into api_keys ${sql.insert(key)}`.pipe(Effect.asVoid, Effect.orDie),

    listKeys: (accountId: string, environment?: Environment) =>
      keys(sql`
        select id, account_id, environment, name, prefix, last4, created_at, revoked_at, last_used_at
        from api_keys
        where account_id = ${accountId} ${environment ? sql`and environment = ${environment}` : sql``}
        order by created_at, id`).pipe(Effect.orDie),

    revokeKey: (id: string, at: Date) =>
      sql`
        update api_keys set revoked_at = coalesce(revoked_at, ${at}) where id = ${id} returning id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),

    /** Renames or revokes an active key of this account and environment only; false when there is none. */
    renameOwnKey: (owner: KeyOwner, id: string, name: string | null) => updateOwnKey(owner, id, { name }),

    revokeOwnKey: (owner: KeyOwner, id: string, at: Date) => updateOwnKey(owner, id, { revokedAt: at }),

    touchKeys: (ids: ReadonlyArray<string>, at: Date) =>
      sql`update api_keys set last_used_at = ${at} where id = any(${ids}::text[])
            and (last_used_at is null or last_used_at < ${at})`.pipe(Effect.asVoid, Effect.orDie)
  }
})

export class AccountsRepo extends Context.Service<AccountsRepo, Effect.Success<typeof make>>()("vda/AccountsRepo", { make }) {
  static readonly layer = Layer.effect(AccountsRepo, make)
}
