/**
 * Settled webhook deliveries (processed or failed) are kept for WEBHOOK_DELIVERY_RETENTION_DAYS
 * (default 30), then removed; pending ones are never removed.
 */
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../platform/config/Config.js"
import { cutoff, retentionJob } from "../platform/db/Retention.js"

export const pruneDeliveries = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const days = (yield* AppConfig).webhookDeliveryRetentionDays
  const removed = yield* sql`
    delete from webhook_deliveries
    where status <> 'pending' and updated_at < ${yield* cutoff(Duration.days(days))} returning 1`
  return removed.length
})

export const DeliveriesRetentionLive = retentionJob("webhook-deliveries", pruneDeliveries)
