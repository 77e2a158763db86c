/**
 * SQL for the console: sign-in links, sessions and the audit trail.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Environment } from "../platform/http/RequestContext.js"
import * as SqlRows from "../platform/db/SqlRows.js"

export const LinkRow = Schema.Struct({
  tokenHash: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  signsInAs: Schema.String,
  createdAt: Schema.Date,
  expiresAt: Schema.Date,
  usedAt: Schema.NullOr(Schema.Date)
})
export type LinkRow = typeof LinkRow.Type

export const SessionRow = Schema.Struct({
  idHash: Schema.String,
  publicId: Schema.String,
  accountId: Schema.String,
  environment: Environment,
  signedInAs: Schema.String,
  csrfToken: Schema.String,
  createdAt: Schema.Date,
  lastSeenAt: Schema.Date,
  expiresAt: Schema.Date
})
export type SessionRow = typeof SessionRow.Type

/** Everything the console audits, by name. */
export const AuditAction = Schema.Literals([
  "session.sign_in",
  "session.sign_out",
  "key.create",
  "key.rename",
  "key.revoke",
  "webhook.update",
  "webhook.rotate_secret",
  "webhook.test",
  "delivery.resend"
])
export type AuditAction = typeof AuditAction.Type

export const AuditEntry = Schema.Struct({
  accountId: Schema.String,
  environment: Environment,
  sessionId: Schema.NullOr(Schema.String),
  actor: Schema.String,
  action: AuditAction,
  target: Schema.NullOr(Schema.String),
  ip: Schema.NullOr(Schema.String),
  at: Schema.Date
})
export type AuditEntry = typeof AuditEntry.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const link = SqlRows.findOneOption("console link", LinkRow)
  const session = SqlRows.findOneOption("console session", SessionRow)
  const auditEntries = SqlRows.findAll("console audit", AuditEntry)

  return {
    insertLink: (link: Omit<LinkRow, "usedAt">) =>
      sql`insert into console_links ${sql.insert(link)}`.pipe(Effect.asVoid, Effect.orDie),

    findLink: (tokenHash: string) =>
      link(sql`select * from console_links where token_hash = ${tokenHash}`).pipe(Effect.orDie),

    /** Marks the link used if it still can be; the link as it was when this call won, if it did. */
    useLink: (tokenHash: string, environment: Environment, at: Date) =>
      link(sql`
        update console_links set used_at = ${at}
        where token_hash = ${tokenHash} and environment = ${environment} and used_at is null and expires_at > ${at}
        returning *`).pipe(Effect.orDie),

    insertSession: (session: SessionRow) =>
      sql`insert into console_sessions ${sql.insert(session)}`.pipe(Effect.asVoid, Effect.orDie),

    /** The live session with this hash on `environment`, its idle clock restarted. */
    touchSession: (idHash: string, environment: Environment, at: Date, idleMs: number) =>
      session(sql`
        update console_sessions set last_seen_at = ${at}
        where id_hash = ${idHash} and environment = ${environment} and ended_at is null
          and expires_at > ${at} and last_seen_at > ${new Date(at.getTime() - idleMs)}
        returning id_hash, public_id, account_id, environment, signed_in_as, csrf_token, created_at, last_seen_at, expires_at`).pipe(
        Effect.orDie
      ),

    endSession: (idHash: string, at: Date) =>
      sql`update console_sessions set ended_at = coalesce(ended_at, ${at}) where id_hash = ${idHash}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    audit: (entry: AuditEntry) => sql`insert into console_audit ${sql.insert(entry)}`.pipe(Effect.asVoid, Effect.orDie),

    recentAudit: (accountId: string, environment: Environment, limit: number) =>
      auditEntries(sql`
        select account_id, environment, session_id, actor, action, target, ip, at from console_audit
        where account_id = ${accountId} and environment = ${environment}
        order by at desc, id desc limit ${limit}`).pipe(Effect.orDie)
  }
})

export class ConsoleRepo extends Context.Service<ConsoleRepo, Effect.Success<typeof make>>()("vda/ConsoleRepo", { make }) {
  static readonly layer = Layer.effect(ConsoleRepo, make)
}
