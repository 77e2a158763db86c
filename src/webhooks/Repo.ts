/**
 * SQL for webhook configurations and deliveries.
 */
import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { PRESENCE_PREFIX } from "../platform/db/Presence.js"
import { Environment } from "../platform/http/RequestContext.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import * as SqlRows from "../platform/db/SqlRows.js"

export const ConfigRow = Schema.Struct({
  url: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  secret: Schema.String
})
export type ConfigRow = typeof ConfigRow.Type

/** The configuration as stored, with when it last changed. */
export const StoredConfig = ConfigRow.mapFields(Struct.assign({ updatedAt: Schema.Date }))
export type StoredConfig = typeof StoredConfig.Type

const DeliveryStatus = Schema.Literals(["pending", "processed", "failed"])

export const DeliveryRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  apiVersion: Schema.Literals(["v1", "v2"]),
  eventType: Schema.String,
  operationId: Schema.NullOr(Schema.String),
  body: Schema.String,
  /** v1's test event: sent even while the webhook is disabled. */
  sendsWhenDisabled: Schema.Boolean,
  status: DeliveryStatus,
  /** Its attempt series: 1 for the original, one more per resend. */
  series: Schema.Int,
  /** Attempts of the current series. */
  attempts: NonNegativeInt,
  responseStatus: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.Date,
  startedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  /** The W3C traceparent of what recorded the event (null when tracing was off). */
  traceParent: Schema.NullOr(Schema.String)
})
export type DeliveryRow = typeof DeliveryRow.Type

export type NewDelivery = Pick<
  DeliveryRow,
  | "id"
  | "accountId"
  | "environment"
  | "apiVersion"
  | "eventType"
  | "operationId"
  | "body"
  | "sendsWhenDisabled"
  | "createdAt"
> & { readonly traceParent?: string | null }

export interface AttemptRecord {
  /** The series the attempt belongs to: an attempt of an earlier series records nothing. */
  readonly series: number
  readonly attempts: number
  readonly status: DeliveryRow["status"]
  readonly responseStatus: number | null
  readonly lastError: string | null
  readonly nextAttemptAt: Date
  readonly at: Date
}

/** Delivery ids are UUIDs: anything else names no delivery (and would fail the column's cast). */
const isDeliveryId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

/** Deliveries whose attempt series is over, and so may start another (a resend). */
export const SETTLED_STATUSES: ReadonlyArray<DeliveryRow["status"]> = ["failed", "processed"]

const DELIVERY_COLUMNS =
  "id::text as id, account_id, environment, api_version, event_type, operation_id, body, sends_when_disabled, status, series, attempts, response_status, last_error, next_attempt_at, started_at, created_at, trace_parent"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** Free, ours, lapsed, or held by a process whose presence session is gone (it died). */
  const claimOpenTo = (holder: string) =>
    sql`(claimed_by is null or claimed_by = ${holder} or claimed_until < now()
      or not exists (select 1 from pg_stat_activity where application_name = ${PRESENCE_PREFIX} || claimed_by))`
  const columns = sql.literal(DELIVERY_COLUMNS)
  const storedConfig = SqlRows.findOneOption("webhook configuration", StoredConfig)
  const committedConfig = SqlRows.single("webhook configuration", StoredConfig)
  const lockedConfig = SqlRows.single("webhook configuration, locked", ConfigRow)
  const config = SqlRows.findOneOption("webhook configuration", ConfigRow)
  const DeliveryId = Schema.Struct({ id: Schema.String })
  const insertedId = SqlRows.findOneOption("webhook delivery inserted", DeliveryId)
  const existingId = SqlRows.single("webhook delivery of the operation", DeliveryId)
  const pendingSummary = SqlRows.single(
    "pending webhook deliveries",
    Schema.Struct({ pending: NonNegativeInt, oldest: Schema.NullOr(Schema.Date) })
  )
  const delivery = SqlRows.findOneOption("webhook delivery", DeliveryRow)
  const deliveries = SqlRows.findAll("webhook deliveries", DeliveryRow)

  const ensureConfig = (accountId: string, environment: Environment, secret: string, at: Date) =>
    sql`
      insert into webhook_configs (account_id, environment, url, enabled, secret, updated_at)
      values (${accountId}, ${environment}, null, false, ${secret}, ${at})
      on conflict (account_id, environment) do nothing`

  return {
    /** The configuration, created (disabled, with this secret) on first use. */
    config: Effect.fnUntraced(function*(accountId: string, environment: Environment, secret: string, at: Date) {
      // one round trip: the row as it is, or as this statement creates it (a row another
      // transaction created after this one's snapshot is read by a second statement)
      const row = yield* storedConfig(sql`
        with created as (
          insert into webhook_configs (account_id, environment, url, enabled, secret, updated_at)
          values (${accountId}, ${environment}, null, false, ${secret}, ${at})
          on conflict (account_id, environment) do nothing
          returning url, enabled, secret, updated_at)
        select url, enabled, secret, updated_at from created
        union all
        select url, enabled, secret, updated_at from webhook_configs
        where account_id = ${accountId} and environment = ${environment} and not exists (select from created)`)
      if (Option.isSome(row)) return row.value
      return yield* committedConfig(sql`
        select url, enabled, secret, updated_at from webhook_configs where account_id = ${accountId} and environment = ${environment}`)
    }, Effect.orDie),

    /**
     * Changes the configuration (created first with `secret` if missing) under its row lock, so
     * concurrent changes apply one after the other; `change` may refuse, and then nothing changes.
     */
    updateConfig: Effect.fnUntraced(function*<E>(
      accountId: string,
      environment: Environment,
      secret: string,
      at: Date,
      change: (current: ConfigRow) => Effect.Effect<ConfigRow, E>
    ) {
      yield* ensureConfig(accountId, environment, secret, at).pipe(Effect.orDie)
      const current = yield* lockedConfig(sql`
        select url, enabled, secret from webhook_configs
        where account_id = ${accountId} and environment = ${environment} for update`).pipe(Effect.orDie)
      const next = yield* change(current)
      yield* sql`
        update webhook_configs set url = ${next.url}, enabled = ${next.enabled}, secret = ${next.secret}, updated_at = ${at}
        where account_id = ${accountId} and environment = ${environment}`.pipe(Effect.orDie)
      return { ...next, updatedAt: at } satisfies StoredConfig
    }, sql.withTransaction, Effect.catchIf(SqlError.isSqlError, Effect.die)),

    findConfig: (accountId: string, environment: Environment) =>
      config(sql`
        select url, enabled, secret from webhook_configs where account_id = ${accountId} and environment = ${environment}`).pipe(
        Effect.orDie
      ),

    /** Inserts unless the operation already has its delivery; the delivery's id either way. */
    insertDelivery: Effect.fnUntraced(function*(delivery: NewDelivery) {
      const inserted = yield* insertedId(sql`
        insert into webhook_deliveries (id, account_id, environment, api_version, event_type, operation_id, body,
          sends_when_disabled, status, attempts, next_attempt_at, created_at, updated_at, trace_parent)
        values (${delivery.id}, ${delivery.accountId}, ${delivery.environment}, ${delivery.apiVersion}, ${delivery.eventType},
          ${delivery.operationId}, ${delivery.body}, ${delivery.sendsWhenDisabled}, 'pending', 0, ${delivery.createdAt},
          ${delivery.createdAt}, ${delivery.createdAt}, ${delivery.traceParent ?? null})
        on conflict (operation_id) do nothing
        returning id::text as id`)
      if (Option.isSome(inserted)) return inserted.value.id
      const existing = yield* existingId(sql`
        select id::text as id from webhook_deliveries where operation_id = ${delivery.operationId}`)
      return existing.id
    }, Effect.orDie),

    /** How many deliveries are pending, and when the oldest of them was created. */
    pendingSummary: pendingSummary(sql`
      select count(*)::int as pending, min(created_at) as oldest from webhook_deliveries where status = 'pending'`).pipe(
      Effect.orDie
    ),

    findDelivery: (id: string) =>
      !isDeliveryId(id)
        ? Effect.succeedNone
        : delivery(sql`select ${columns} from webhook_deliveries where id = ${id}::uuid`).pipe(Effect.orDie),

    /**
     * Records an attempt; an attempt already recorded (a retried activity) does not count twice.
     * False when nothing was recorded: the delivery was no longer pending in that series.
     */
    recordAttempt: (id: string, attempt: AttemptRecord) =>
      sql`
        update webhook_deliveries set attempts = greatest(attempts, ${attempt.attempts}), status = ${attempt.status},
          response_status = ${attempt.responseStatus}, last_error = ${attempt.lastError},
          next_attempt_at = ${attempt.nextAttemptAt}, started_at = coalesce(started_at, ${attempt.at}), updated_at = ${attempt.at}
        where id = ${id}::uuid and status = 'pending' and series = ${attempt.series}
        returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

    markStarted: (id: string, at: Date) =>
      sql`update webhook_deliveries set started_at = coalesce(started_at, ${at}) where id = ${id}::uuid`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    list: (accountId: string, environment: Environment, limit: number, offset: number) =>
      deliveries(sql`
        select ${columns} from webhook_deliveries
        where account_id = ${accountId} and environment = ${environment}
        order by created_at desc, id desc
        limit ${limit} offset ${offset}`).pipe(Effect.orDie),

    /**
     * Ends a delivery still pending in `series` `failed`, with the reason kept for operators;
     * false if it was settled (or resent since).
     */
    settle: (id: string, series: number, reason: string, at: Date) =>
      sql`
        update webhook_deliveries set status = 'failed', last_error = ${reason}, next_attempt_at = ${at}, updated_at = ${at}
        where id = ${id}::uuid and status = 'pending' and series = ${series}
        returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

    /**
     * Starts a new attempt series of a settled delivery of this account and environment: pending
     * again, attempts from zero, due `at`, not started by any engine yet and held by no process.
     * The same row (so the same id and body); none when there is no such settled delivery.
     */
    resend: (id: string, accountId: string, environment: Environment, at: Date) =>
      !isDeliveryId(id)
        ? Effect.succeedNone
        : delivery(sql`
          update webhook_deliveries set status = 'pending', series = series + 1, attempts = 0, response_status = null,
            last_error = null, next_attempt_at = ${at}, started_at = null, claimed_by = null, claimed_until = null,
            updated_at = ${at}
          where id = ${id}::uuid and account_id = ${accountId} and environment = ${environment}
            and status = any(${[...SETTLED_STATUSES]}::text[])
          returning ${columns}`).pipe(Effect.orDie),

    /** Started deliveries still pending whose next attempt was due before `dueBefore` (oldest first). */
    overdue: (dueBefore: Date, limit: number) =>
      deliveries(sql`
        select ${columns} from webhook_deliveries
        where status = 'pending' and started_at is not null and next_attempt_at < ${dueBefore}
        order by next_attempt_at limit ${limit}`).pipe(Effect.orDie),

    /** Claims a pending delivery for `holder` (the inline engine of one process); false if another holds it. */
    claim: (id: string, holder: string, ttlMs: number) =>
      sql`
        update webhook_deliveries set claimed_by = ${holder}, claimed_until = now() + ${ttlMs} * interval '1 millisecond'
        where id = ${id}::uuid and status = 'pending'
          and ${claimOpenTo(holder)}
        returning id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),

    /** Pending deliveries nobody holds a live claim on, by planned attempt time. */
    claimable: (holder: string) =>
      deliveries(sql`
        select ${columns} from webhook_deliveries
        where status = 'pending' and ${claimOpenTo(holder)}
        order by next_attempt_at`).pipe(Effect.orDie),

    renewClaims: (holder: string, ttlMs: number) =>
      sql`update webhook_deliveries set claimed_until = now() + ${ttlMs} * interval '1 millisecond'
          where claimed_by = ${holder} and status = 'pending'`.pipe(Effect.asVoid, Effect.orDie),

    releaseClaims: (holder: string) =>
      sql`update webhook_deliveries set claimed_until = now() where claimed_by = ${holder} and status = 'pending'`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    /** Pending deliveries (`unstartedBefore`: only those never handed to an engine). */
    pending: (options: { readonly unstartedBefore?: Date } = {}) =>
      deliveries(sql`
        select ${columns} from webhook_deliveries where status = 'pending'
          ${options.unstartedBefore ? sql`and started_at is null and created_at < ${options.unstartedBefore}` : sql``}
        order by next_attempt_at`).pipe(Effect.orDie)
  }
})

export class WebhooksRepo extends Context.Service<WebhooksRepo, Effect.Success<typeof make>>()("vda/WebhooksRepo", { make }) {
  static readonly layer = Layer.effect(WebhooksRepo, make)
}
