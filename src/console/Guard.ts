/**
 * Who is asking and what they may do: the request's client address, the session behind its
 * cookie (with what every page shows), the CSRF check every form passes, the form's fields, and
 * the audit of what a session did.
 */
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse, UrlParams } from "effect/http"
import { Accounts } from "../accounts/Accounts.js"
import { principalFor } from "../principal/Authentication.js"
import type { Principal } from "../principal/Domain.js"
import type { Usage } from "../metering/Api.js"
import { UsageReader } from "../metering/UsageReader.js"
import { clientAddressOf, isForwardedHttps } from "../platform/http/ClientAddress.js"
import { AppConfig } from "../platform/config/Config.js"
import { CurrentEnvironment, type Environment } from "../platform/http/RequestContext.js"
import { readBodyText } from "../platform/http/RequestBody.js"
import { type DateFormat, dateFormatOf } from "./Format.js"
import type { Html } from "./Html.js"
import { type Frame, page, type Section } from "./Layout.js"
import { noticesOf } from "./Notices.js"
import { badFormPage, forbiddenFormPage, noSessionPage } from "./pages/SignIn.js"
import { type AuditAction, ConsoleRepo } from "./Repo.js"
import { DONE, type Done, htmlResponse, isCrossSite, sameToken } from "./Responses.js"
import { hrefOf } from "./Routes.js"
import { type ConsoleSession, ConsoleSessions, sessionCookieOf } from "./Sessions.js"

const FORM_MAX_BYTES = 16 * 1024

export interface SignedIn {
  readonly session: ConsoleSession
  readonly principal: Principal
  /** The account's usage, read once and only if the request renders a page (a form that redirects needs none). */
  readonly usage: Effect.Effect<Usage>
  readonly date: DateFormat
  readonly ip: string | null
}

const make = Effect.gen(function*() {
  const sessions = yield* ConsoleSessions
  const repo = yield* ConsoleRepo
  const accounts = yield* Accounts
  const usageReader = yield* UsageReader
  const config = yield* AppConfig
  const hops = config.trustedProxyHops

  const request = Effect.service(HttpServerRequest.HttpServerRequest)
  const forwardedOf = (req: HttpServerRequest.HttpServerRequest) => ({
    peer: Option.getOrUndefined(req.remoteAddress),
    forwardedFor: req.headers["x-forwarded-for"],
    forwardedProto: req.headers["x-forwarded-proto"]
  })
  const ipOf = (req: HttpServerRequest.HttpServerRequest) => clientAddressOf(forwardedOf(req), hops) ?? null

  /** `Secure` when the environment is published over https, or a trusted proxy says the client used TLS. */
  const cookieOptions = (req: HttpServerRequest.HttpServerRequest, environment: Environment, expires: Date) => ({
    httpOnly: true,
    sameSite: "strict" as const,
    path: hrefOf("overview"),
    secure: sessions.baseUrlOf(environment).startsWith("https://") || isForwardedHttps(forwardedOf(req), hops),
    expires
  })

  const audit = (who: { readonly session: ConsoleSession; readonly ip: string | null }, action: AuditAction, target: string | null = null) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      repo.audit({
        accountId: who.session.accountId,
        environment: who.session.environment,
        sessionId: who.session.publicId,
        actor: who.session.signedInAs,
        action,
        target,
        ip: who.ip,
        at: new Date(now)
      }))

  /** The session of this request, with what every page shows; none without a live session. */
  const signedIn = Effect.gen(function*() {
    const req = yield* request
    const environment = yield* CurrentEnvironment
    const secret = req.cookies[sessionCookieOf(environment)]
    if (secret === undefined || secret.length === 0) return Option.none<SignedIn>()
    const session = yield* sessions.resume(secret, environment)
    if (Option.isNone(session)) return Option.none<SignedIn>()
    const account = yield* accounts.find(session.value.accountId)
    if (Option.isNone(account)) return Option.none<SignedIn>()
    const principal = principalFor(account.value, `console:${session.value.publicId}`, environment)
    return Option.some<SignedIn>({
      session: session.value,
      principal,
      usage: yield* Effect.cached(Effect.orDie(usageReader.read(principal))),
      date: dateFormatOf(principal.timezone),
      ip: ipOf(req)
    })
  }).pipe(Effect.orDie)

  const noSession = Effect.map(Effect.service(CurrentEnvironment), (environment) => htmlResponse(noSessionPage(environment), 401))

  /** A page that needs a session. */
  const withSession = <E, R>(handler: (ctx: SignedIn) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(signedIn, Option.match({ onNone: () => noSession, onSome: handler }))

  /**
   * A form post that needs a session: refused (403, nothing done) unless it carries the
   * session's CSRF token and comes from the console's own pages.
   */
  const withForm = <E, R>(
    handler: (ctx: SignedIn, form: UrlParams.UrlParams) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    withSession(Effect.fnUntraced(function*(ctx) {
      const req = yield* request
      const form = yield* readForm
      if (Result.isFailure(form)) return htmlResponse(badFormPage(ctx.session.environment), form.failure)
      const token = Option.getOrElse(UrlParams.getFirst(form.success, "csrf"), () => "")
      if (isCrossSite(req) || !sameToken(token, ctx.session.csrfToken)) {
        yield* Effect.logWarning("console form refused: CSRF check failed")
        return htmlResponse(forbiddenFormPage(ctx.session.environment), 403)
      }
      return yield* handler(ctx, form.success)
    })
    )

  /** The form's fields, or 413 past the size limit (read to its end, so the answer is not lost to a reset). */
  const readForm = Effect.flatMap(request, (req) => readBodyText(req, FORM_MAX_BYTES)).pipe(
    Effect.map(Option.match({
      onNone: () => Result.fail(413),
      onSome: (text) => Result.succeed(UrlParams.fromInput(new URLSearchParams(text)))
    }))
  )

  const field = (form: UrlParams.UrlParams, name: string) => Option.getOrElse(UrlParams.getFirst(form, name), () => "").trim()

  /** One value of the query string, read from the request's URL. */
  const query = (name: string) =>
    Effect.map(request, (req) => {
      const at = req.url.indexOf("?")
      return at === -1 ? undefined : new URLSearchParams(req.url.slice(at + 1)).get(name) ?? undefined
    })

  const doneOf = Effect.map(query("done"), (done) => (done !== undefined && Object.hasOwn(DONE, done) ? DONE[done as Done] : undefined))

  /** A page in the console's frame: its section, the usage notices, and what the last action did. */
  const render = Effect.fnUntraced(function*(ctx: SignedIn, section: Section, title: string, content: Html, extra: { readonly alert?: string } = {}, status = 200) {
    const flash = yield* doneOf
    const frame: Frame = {
      environment: ctx.principal.environment,
      section,
      title,
      owner: ctx.principal.owner,
      accountId: ctx.principal.accountId,
      signedInAs: ctx.session.signedInAs,
      csrfToken: ctx.session.csrfToken,
      notices: noticesOf(yield* ctx.usage, ctx.date),
      ...(flash === undefined ? {} : { flash }),
      ...extra
    }
    return htmlResponse(page(frame, content), status)
  })

  const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

  return { request, ipOf, cookieOptions, audit, withSession, withForm, readForm, field, query, render, param }
})

export class ConsoleGuard extends Context.Service<ConsoleGuard, Effect.Success<typeof make>>()("vda/ConsoleGuard", { make }) {
  static readonly layer = Layer.effect(ConsoleGuard, make).pipe(
    Layer.provide([ConsoleSessions.layer, ConsoleRepo.layer, Accounts.layer])
  )
}
