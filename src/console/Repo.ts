/**
 * SQL for the console: sign-in links, sessions and the audit trail.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../platform/RequestContext.js"

export type LinkRow = {
  readonly tokenHash: string
  readonly accountId: string
  readonly environment: Environment
  readonly signsInAs: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly usedAt: Date | null
}

export type SessionRow = {
  readonly idHash: string
  readonly publicId: string
  readonly accountId: string
  readonly environment: Environment
  readonly signedInAs: string
  readonly csrfToken: string
  readonly createdAt: Date
  readonly lastSeenAt: Date
  readonly expiresAt: Date
}

/** Everything the console audits, by name. */
export type AuditAction =
  | "session.sign_in"
  | "session.sign_out"
  | "key.create"
  | "key.rename"
  | "key.revoke"
  | "webhook.update"
  | "webhook.rotate_secret"
  | "webhook.test"
  | "delivery.resend"

export type AuditEntry = {
  readonly accountId: string
  readonly environment: Environment
  readonly sessionId: string | null
  readonly actor: string
  readonly action: AuditAction
  readonly target: string | null
  readonly ip: string | null
  readonly at: Date
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  return {
    insertLink: (link: Omit<LinkRow, "usedAt">) =>
      sql`insert into console_links ${sql.insert(link)}`.pipe(Effect.asVoid, Effect.orDie),

    findLink: (tokenHash: string) =>
      sql<LinkRow>`select * from console_links where token_hash = ${tokenHash}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.orDie
      ),

    /** Marks the link used if it still can be; the link as it was when this call won, if it did. */
    useLink: (tokenHash: string, environment: Environment, at: Date) =>
      sql<LinkRow>`
        update console_links set used_at = ${at}
        where token_hash = ${tokenHash} and environment = ${environment} and used_at is null and expires_at > ${at}
        returning *`.pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])), Effect.orDie),

    insertSession: (session: SessionRow) =>
      sql`insert into console_sessions ${sql.insert(session)}`.pipe(Effect.asVoid, Effect.orDie),

    /** The live session with this hash on `environment`, its idle clock restarted. */
    touchSession: (idHash: string, environment: Environment, at: Date, idleMs: number) =>
      sql<SessionRow>`
        update console_sessions set last_seen_at = ${at}
        where id_hash = ${idHash} and environment = ${environment} and ended_at is null
          and expires_at > ${at} and last_seen_at > ${new Date(at.getTime() - idleMs)}
        returning id_hash, public_id, account_id, environment, signed_in_as, csrf_token, created_at, last_seen_at, expires_at`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.orDie
      ),

    endSession: (idHash: string, at: Date) =>
      sql`update console_sessions set ended_at = coalesce(ended_at, ${at}) where id_hash = ${idHash}`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),

    audit: (entry: AuditEntry) => sql`insert into console_audit ${sql.insert(entry)}`.pipe(Effect.asVoid, Effect.orDie),

    recentAudit: (accountId: string, environment: Environment, limit: number) =>
      sql<AuditEntry>`
        select account_id, environment, session_id, actor, action, target, ip, at from console_audit
        where account_id = ${accountId} and environment = ${environment}
        order by at desc, id desc limit ${limit}`.pipe(Effect.orDie)
  }
})

export class ConsoleRepo extends Context.Service<ConsoleRepo, Effect.Success<typeof make>>()("vda/ConsoleRepo", { make }) {
  static readonly layer = Layer.effect(ConsoleRepo, make)
}
