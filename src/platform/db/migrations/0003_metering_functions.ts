import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The view of accounts with their plan's allowances resolved, which the metering functions read.
 * Was also: the metering rule as database functions (`vda_consume`, `vda_admit`); the functions
 * are installed from their sources now (src/metering/sql/), after the migrations.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // An account with the allowances of its plan resolved (standard or custom).
  yield* sql`
    create view entitled_accounts as
    select a.id, a.owner, a.plan, a.timezone, a.created_at,
      case when a.plan = 'custom' then c.plate_queries_monthly else p.plate_queries_monthly end as plate_queries_monthly,
      case when a.plan = 'custom' then c.module_queries_monthly else p.module_queries_monthly end as module_queries_monthly,
      case when a.plan = 'custom' then c.unique_plates_daily else p.unique_plates_daily end as unique_plates_daily,
      case when a.plan = 'custom' then c.requests_per_minute else p.requests_per_minute end as requests_per_minute,
      case when a.plan = 'custom' then c.enabled_modules else p.enabled_modules end as enabled_modules,
      c.module_price_ars, c.included_modules
    from accounts a
    left join plans p on p.id = a.plan
    left join custom_plans c on c.account_id = a.id`
})
