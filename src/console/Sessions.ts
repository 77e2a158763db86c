/**
 * Signing in to the console without passwords: an operator issues a one-time link (`vda console
 * link`), opening it starts a session, and every request carries the session's cookie. Links and
 * sessions are stored by hash; a link works once, before it expires, on its own environment only.
 */
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../accounts/Accounts.js"
import { AppConfig } from "../platform/config/Config.js"
import { randomBase62, sha256Hex } from "../platform/ids/Ids.js"
import type { Environment } from "../platform/http/RequestContext.js"
import { ConsoleRepo, type SessionRow } from "./Repo.js"
import { hrefOf } from "./Routes.js"

/** Why a link cannot sign in: each has its own page. */
export class LinkRefused extends Data.TaggedError("LinkRefused")<{
  readonly reason: "unknown" | "expired" | "used" | "other_environment"
}> {}

export interface IssuedLink {
  readonly url: string
  readonly expiresAt: Date
  readonly environment: Environment
}

/** A signed-in session as the pages see it (the cookie's secret is not kept). */
export type ConsoleSession = Omit<SessionRow, "createdAt" | "lastSeenAt">

/** Cookies do not isolate by port: each environment's console has a cookie of its own. */
export const sessionCookieOf = (environment: Environment) => `vda_console_${environment}`

const make = Effect.gen(function*() {
  const repo = yield* ConsoleRepo
  const sql = yield* SqlClient.SqlClient
  const accounts = yield* Accounts
  const config = yield* AppConfig
  const settings = config.console
  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  const baseUrlOf = (environment: Environment) =>
    environment === "production"
      ? Option.getOrElse(settings.publicUrl, () => `http://localhost:${config.port}`)
      : Option.getOrElse(settings.sandboxPublicUrl, () => `http://localhost:${config.sandboxPort}`)

  /** A one-time link for `accountId` on `environment`; `signsInAs` names the person in the audit (the owner by default). */
  const issueLink = Effect.fnUntraced(function*(input: { readonly accountId: string; readonly environment: Environment; readonly signsInAs?: string | undefined }) {
    const account = yield* accounts.require(input.accountId)
    const token = randomBase62(43)
    const createdAt = yield* now
    const expiresAt = new Date(createdAt.getTime() + settings.linkTtlMs)
    yield* repo.insertLink({
      tokenHash: sha256Hex(token),
      accountId: input.accountId,
      environment: input.environment,
      signsInAs: (input.signsInAs ?? account.owner).slice(0, 200),
      createdAt,
      expiresAt
    })
    return { url: `${baseUrlOf(input.environment).replace(/\/+$/, "")}${hrefOf("showLink", { token })}`, expiresAt, environment: input.environment } satisfies IssuedLink
  })

  /** Whether a link could sign in on `environment` now, without using it. */
  const checkLink = Effect.fnUntraced(function*(token: string, environment: Environment) {
    const link = yield* repo.findLink(sha256Hex(token))
    if (Option.isNone(link)) return yield* new LinkRefused({ reason: "unknown" })
    if (link.value.environment !== environment) return yield* new LinkRefused({ reason: "other_environment" })
    if (link.value.usedAt !== null) return yield* new LinkRefused({ reason: "used" })
    if (link.value.expiresAt.getTime() <= (yield* now).getTime()) return yield* new LinkRefused({ reason: "expired" })
    return link.value
  })

  /**
   * Uses the link (once, whoever races for it) and starts a session, both or neither; answers the
   * session with its cookie's secret.
   */
  const redeem = Effect.fnUntraced(function*(token: string, environment: Environment) {
    const at = yield* now
    const used = yield* repo.useLink(sha256Hex(token), environment, at)
    if (Option.isNone(used)) return yield* Effect.flatMap(checkLink(token, environment), () => new LinkRefused({ reason: "used" }))
    const secret = randomBase62(43)
    const row: SessionRow = {
      idHash: sha256Hex(secret),
      publicId: `cses_${randomBase62(16)}`,
      accountId: used.value.accountId,
      environment,
      signedInAs: used.value.signsInAs,
      csrfToken: randomBase62(32),
      createdAt: at,
      lastSeenAt: at,
      expiresAt: new Date(at.getTime() + settings.sessionMaxMs)
    }
    yield* repo.insertSession(row)
    return { secret, session: row }
  }, sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  /** The live session a cookie secret stands for on `environment`, kept alive by this request. */
  const resume = (secret: string, environment: Environment) =>
    Effect.flatMap(now, (at) => repo.touchSession(sha256Hex(secret), environment, at, settings.sessionIdleMs))

  const end = (session: Pick<ConsoleSession, "idHash">) => Effect.flatMap(now, (at) => repo.endSession(session.idHash, at))

  /** Ends whatever session a cookie secret stands for (signing in again replaces it). */
  const endSecret = (secret: string) => end({ idHash: sha256Hex(secret) })

  return { issueLink, checkLink, redeem, resume, end, endSecret, baseUrlOf }
})

export class ConsoleSessions extends Context.Service<ConsoleSessions, Effect.Success<typeof make>>()("vda/ConsoleSessions", { make }) {
  static readonly layer = Layer.effect(ConsoleSessions, make).pipe(Layer.provide([ConsoleRepo.layer, Accounts.layer]))
}
