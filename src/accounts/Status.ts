/**
 * The account's status as both API versions show it: owner, plan, the environment's usage and its
 * API keys (never their secrets), read in one statement (`vda_account_status`, src/accounts/sql/).
 *
 * Concurrent status reads of one account and environment share one read, as polls do: each
 * request was admitted (and counted) before the read began, so the usage it sees includes it.
 */
import { Clock, Context, Effect, Layer, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { BillingRow, CounterRow } from "../metering/UsageReader.js"
import { usageOf, type UsagePeriods, usagePeriodsOf } from "../metering/UsageReader.js"
import * as Batcher from "../platform/batching/Batcher.js"
import * as SqlRows from "../platform/db/SqlRows.js"
import { accountKey, type Principal } from "../principal/Domain.js"
import { KeyRow } from "./Repo.js"

/** A row of `vda_account_status`: a counter, the month's billing terms, or a key. */
const StatusRow = Schema.Union([
  CounterRow.mapFields(Struct.assign({ kind: Schema.Literal("counter") })),
  BillingRow.mapFields(Struct.assign({ kind: Schema.Literal("billing") })),
  KeyRow.mapFields((fields) => ({ ...Struct.omit(fields, ["accountId", "environment"]), kind: Schema.Literal("key") }))
])
type StatusRow = typeof StatusRow.Type

/**
 * Status reads by value (`statusValueOf`), any number in one statement: the values themselves,
 * then their parts (account, environment, and the month's, day's and minute's starts).
 */
export const STATUS_READ =
  "select * from vda_account_status($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])"

/** `STATUS_READ`'s parameters for `values`; a value's parts hold no "/": ids, environments and ISO instants are plain. */
export const statusReadParameters = (values: ReadonlyArray<string>) => {
  const parts = values.map((value) => value.split("/"))
  return [values, ...Array.from({ length: 5 }, (_, part) => parts.map((of) => of[part]))]
}

/** The value a row of `STATUS_READ` was read for; undefined for the row of nulls a read that found nothing gives. */
export const statusValueOfRow = (row: Readonly<Record<string, unknown>>) => (row.value == null ? undefined : String(row.value))

/** What a status read at `periods` reads: the account, its environment and the starts of the periods it counts. */
export const statusValueOf = (principal: Principal, { day, minute, month }: UsagePeriods) =>
  [principal.accountId, principal.environment, month.start.toISOString(), day.start.toISOString(), minute.start.toISOString()].join("/")

const statusOf = (principal: Principal, periods: UsagePeriods, read: ReadonlyArray<StatusRow>) => {
  const counters: Array<CounterRow> = []
  let billing: BillingRow | undefined
  const keys = []
  for (const row of read) {
    if (row.kind === "counter") counters.push(row)
    else if (row.kind === "billing") billing = row
    else {
      keys.push({
        id: row.id,
        prefix: row.prefix,
        last4: row.last4,
        name: row.name,
        status: row.revokedAt === null ? "active" as const : "revoked" as const,
        lastUsedAt: row.lastUsedAt,
        createdAt: row.createdAt
      })
    }
  }
  return { owner: principal.owner, plan: principal.entitlements.plan, usage: usageOf(principal, periods, counters, billing), keys }
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // decoded once per read, which concurrent status requests of the account share
  const statusRows = SqlRows.findAll("vda_account_status", StatusRow)
  const readNow = Effect.fnUntraced(function*(principal: Principal) {
    const periods = usagePeriodsOf(principal, yield* Clock.currentTimeMillis)
    const rows = yield* statusRows(sql.unsafe(STATUS_READ, statusReadParameters([statusValueOf(principal, periods)])))
    return statusOf(principal, periods, rows)
  }, Effect.orDie)
  return {
    /** The status; the same object for the reads that shared it. */
    read: yield* Batcher.sharedReads({ key: accountKey, read: readNow })
  }
})

export class AccountStatus extends Context.Service<AccountStatus, Effect.Success<typeof make>>()("vda/AccountStatus", { make }) {
  static readonly layer = Layer.effect(AccountStatus, make)
}
