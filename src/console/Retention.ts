/**
 * Sign-in links and sessions past their use: links a day after they expired, sessions a day after
 * they ended or expired. The audit trail is kept.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { cutoff, retentionJob } from "../platform/db/Retention.js"

export const pruneConsole = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dayAgo = yield* cutoff("1 day")
  const links = yield* sql`delete from console_links where expires_at < ${dayAgo} returning 1`
  const sessions = yield* sql`
    delete from console_sessions
    where coalesce(ended_at, expires_at) < ${dayAgo} returning 1`
  return links.length + sessions.length
})

export const ConsoleRetentionLive = retentionJob("console", pruneConsole)
