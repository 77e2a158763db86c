/**
 * The account console at `/console` on each listener: server-rendered pages for the listener's
 * environment only. Every page needs a session (cookie); every form carries the session's CSRF
 * token; every action is audited. Served beside the API (see Listeners), never through its key
 * authentication: an API key never signs in here.
 */
import { timingSafeEqual } from "node:crypto"
import {
  HttpRouter,
  HttpServerRequest,
  HttpServerResponse,
  UrlParams
} from "@effect/platform"
import { Cause, Clock, Effect, Either, Option, Schema } from "effect"
import { Accounts } from "../accounts/Accounts.js"
import type { Principal } from "../accounts/Domain.js"
import { AccountsRepo, entitlementsOf, modulePricingOf } from "../accounts/Repo.js"
import type { Usage } from "../metering/Api.js"
import { dayOf, monthOf, type Period } from "../metering/Periods.js"
import { UsageReader } from "../metering/UsageReader.js"
import { byDay } from "../metering/Meters.js"
import { OperationStatus } from "../operations/Api.js"
import { OperationsRepo } from "../operations/Repo.js"
import { clientAddressOf, isForwardedHttps } from "../platform/ClientAddress.js"
import { AppConfig } from "../platform/Config.js"
import { CurrentEnvironment, type Environment } from "../platform/RequestContext.js"
import { readBodyText } from "../platform/RequestBody.js"
import * as RequestInput from "../platform/RequestInput.js"
import { HostResolver } from "../webhooks/UrlPolicy.js"
import { Webhooks } from "../webhooks/Webhooks.js"
import { loadAssets } from "./Assets.js"
import { type DateFormat, dateFormatOf } from "./Format.js"
import type { Html } from "./Html.js"
import { type Frame, page, type Section } from "./Layout.js"
import { noticesOf } from "./Notices.js"
import { activityPage } from "./pages/Activity.js"
import { createdKeyPage, keysPage } from "./pages/Keys.js"
import { operationPage, operationsPage } from "./pages/Operations.js"
import { type DailyPoint, overviewPage } from "./pages/Overview.js"
import {
  badAddressPage,
  badFormPage,
  confirmSignInPage,
  failurePage,
  forbiddenFormPage,
  noSessionPage,
  notFoundPage,
  refusedLinkPage,
  signedOutPage,
  tooManyAttemptsPage
} from "./pages/SignIn.js"
import { rotatedSecretPage, webhooksPage } from "./pages/Webhooks.js"
import { type AuditAction, ConsoleRepo } from "./Repo.js"
import { CONSOLE_ROUTES, type ConsoleRoute, hrefOf } from "./Routes.js"
import { type ConsoleSession, ConsoleSessions, LinkRefused, sessionCookieOf } from "./Sessions.js"
import { makeThrottle } from "./Throttle.js"

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // not no-referrer: under it a browser sends `Origin: null` on the console's own forms
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

/** What each action's confirmation says, by the `done` code its redirect carries. */
const DONE = {
  "key-renamed": "The key was renamed.",
  "key-revoked": "The key was revoked: requests with it fail from the next one.",
  "webhook-saved": "The webhook settings were saved.",
  "test-sent": "A webhook.test event is on its way: it appears in the deliveries below.",
  "delivery-resent": "The delivery was sent again, as a new series of attempts with the same event id."
} as const
type Done = keyof typeof DONE

const FORM_MAX_BYTES = 16 * 1024
const LIST_LIMIT = 25

const htmlResponse = (body: Html, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body.value, { status, contentType: "text/html; charset=utf-8", headers: { ...SECURITY_HEADERS, ...headers } })

const seeOther = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: SECURITY_HEADERS })

/** A page that confirms what an action did (post, redirect, get). */
const doneAt = (page: "keys" | "webhooks", done: Done) => hrefOf(page, {}, { done })

const sameToken = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * A form sent from another site (older browsers ignore SameSite): refused whatever it carries.
 * Browsers that say where a request comes from (`Sec-Fetch-Site`) are believed; for the others
 * the `Origin` must be this host.
 */
const isCrossSite = (request: HttpServerRequest.HttpServerRequest) => {
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) return site !== "same-origin" && site !== "none"
  const origin = request.headers["origin"]
  if (origin === undefined || origin === "null") return origin === "null"
  try {
    return new URL(origin).host !== request.headers["host"]
  } catch {
    return true
  }
}

interface SignedIn {
  readonly session: ConsoleSession
  readonly principal: Principal
  readonly usage: Usage
  readonly date: DateFormat
  readonly ip: string | null
  readonly frame: (section: Section, title: string, extra?: { readonly flash?: string; readonly alert?: string }) => Frame
}

export class ConsoleApp extends Effect.Service<ConsoleApp>()("vda/ConsoleApp", {
  effect: Effect.gen(function*() {
    const sessions = yield* ConsoleSessions
    const repo = yield* ConsoleRepo
    const accounts = yield* Accounts
    const accountsRepo = yield* AccountsRepo
    const usageReader = yield* UsageReader
    const webhooks = yield* Webhooks
    const operations = yield* OperationsRepo
    const config = yield* AppConfig
    const resolver = yield* HostResolver
    const throttle = makeThrottle(config.console.signInFailuresPerMinute)
    const assets = loadAssets()
    const hops = config.trustedProxyHops

    const request = HttpServerRequest.HttpServerRequest
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
      const principal: Principal = {
        accountId: account.value.id,
        owner: account.value.owner,
        keyId: `console:${session.value.publicId}`,
        environment,
        timezone: account.value.timezone,
        entitlements: entitlementsOf(account.value),
        modulePricing: modulePricingOf(account.value)
      }
      const usage = yield* usageReader.read(principal)
      const date = dateFormatOf(principal.timezone)
      const notices = noticesOf(usage, date)
      return Option.some<SignedIn>({
        session: session.value,
        principal,
        usage,
        date,
        ip: ipOf(req),
        frame: (section, title, extra = {}) => ({
          environment,
          section,
          title,
          owner: principal.owner,
          accountId: principal.accountId,
          signedInAs: session.value.signedInAs,
          csrfToken: session.value.csrfToken,
          notices,
          ...extra
        })
      })
    }).pipe(Effect.orDie)

    const noSession = Effect.map(CurrentEnvironment, (environment) => htmlResponse(noSessionPage(environment), 401))

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
      withSession((ctx) =>
        Effect.gen(function*() {
          const req = yield* request
          const form = yield* readForm
          if (Either.isLeft(form)) return htmlResponse(badFormPage(ctx.session.environment), form.left)
          const token = Option.getOrElse(UrlParams.getFirst(form.right, "csrf"), () => "")
          if (isCrossSite(req) || !sameToken(token, ctx.session.csrfToken)) {
            yield* Effect.logWarning("console form refused: CSRF check failed")
            return htmlResponse(forbiddenFormPage(ctx.session.environment), 403)
          }
          return yield* handler(ctx, form.right)
        })
      )

    /** The form's fields, or 413 past the size limit (read to its end, so the answer is not lost to a reset). */
    const readForm = Effect.flatMap(request, (req) => readBodyText(req, FORM_MAX_BYTES)).pipe(
      Effect.map(Option.match({
        onNone: () => Either.left(413),
        onSome: (text) => Either.right(UrlParams.fromInput(new URLSearchParams(text)))
      }))
    )

    const field = (form: UrlParams.UrlParams, name: string) => Option.getOrElse(UrlParams.getFirst(form, name), () => "").trim()

    /** One value of the query string (the router's own parsed search params are not typed as provided). */
    const query = (name: string) =>
      Effect.map(request, (req) => {
        const at = req.url.indexOf("?")
        return at === -1 ? undefined : new URLSearchParams(req.url.slice(at + 1)).get(name) ?? undefined
      })

    const doneOf = Effect.map(query("done"), (done) => (done !== undefined && Object.hasOwn(DONE, done) ? DONE[done as Done] : undefined))

    const render = (ctx: SignedIn, section: Section, title: string, content: Html, extra: { readonly alert?: string } = {}, status = 200) =>
      Effect.map(doneOf, (flash) => htmlResponse(page(ctx.frame(section, title, { ...(flash === undefined ? {} : { flash }), ...extra }), content), status))

    const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

    // --- sign-in ------------------------------------------------------------------------------

    /**
     * Sign-in attempts from an address that has failed too often are refused until its window
     * ends; link pages and submissions that fail (unknown, expired, used, elsewhere) count.
     */
    const throttled = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.gen(function*() {
        const req = yield* request
        const retryAfter = throttle.check(ipOf(req) ?? "unknown", yield* Clock.currentTimeMillis)
        if (retryAfter === undefined) return yield* handler
        const environment = yield* CurrentEnvironment
        return htmlResponse(tooManyAttemptsPage(environment, retryAfter), 429, { "retry-after": String(retryAfter) })
      })

    const refused = (environment: Environment) => (refusal: LinkRefused) =>
      Effect.gen(function*() {
        throttle.recordFailure(ipOf(yield* request) ?? "unknown", yield* Clock.currentTimeMillis)
        const { body, status } = refusedLinkPage(environment, refusal.reason)
        return htmlResponse(body, status)
      })

    const showLink = throttled(Effect.gen(function*() {
      const environment = yield* CurrentEnvironment
      const token = yield* param("token")
      return yield* sessions.checkLink(token, environment).pipe(
        Effect.map((link) => htmlResponse(confirmSignInPage(environment, token, link.signsInAs))),
        Effect.catchTag("LinkRefused", refused(environment))
      )
    }))

    /** A link's form submitted: refused from another site (login CSRF); replaces this browser's session. */
    const signIn = throttled(Effect.gen(function*() {
      const environment = yield* CurrentEnvironment
      const req = yield* request
      if (isCrossSite(req)) return htmlResponse(forbiddenFormPage(environment), 403)
      const form = yield* readForm
      if (Either.isLeft(form)) return htmlResponse(badFormPage(environment), form.left)
      return yield* sessions.redeem(field(form.right, "token"), environment).pipe(
        Effect.flatMap(({ secret, session }) =>
          Effect.gen(function*() {
            const previous = req.cookies[sessionCookieOf(environment)]
            if (previous !== undefined && previous.length > 0) yield* sessions.endSecret(previous)
            yield* audit({ session, ip: ipOf(req) }, "session.sign_in")
            return seeOther(hrefOf("overview")).pipe(
              HttpServerResponse.unsafeSetCookie(sessionCookieOf(environment), secret, cookieOptions(req, environment, session.expiresAt))
            )
          })
        ),
        Effect.catchTag("LinkRefused", refused(environment))
      )
    }))

    const signOut = withForm((ctx) =>
      Effect.gen(function*() {
        const req = yield* request
        yield* sessions.end(ctx.session)
        yield* audit(ctx, "session.sign_out")
        return htmlResponse(signedOutPage(ctx.session.environment)).pipe(
          HttpServerResponse.unsafeSetCookie(sessionCookieOf(ctx.session.environment), "", cookieOptions(req, ctx.session.environment, new Date(0)))
        )
      })
    )

    // --- pages --------------------------------------------------------------------------------

    /** Every day of the current month up to today, with its plate and module queries. */
    const dailyOf = (ctx: SignedIn) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const { timezone } = ctx.principal
        const month = monthOf(now, timezone)
        const rows = yield* repo.dailyUsage(ctx.principal.accountId, ctx.principal.environment, month.start)
        // a day's counters are found by the day they fall in, so days counted under another timezone still show
        const count = (meter: string, day: Period) =>
          rows.filter((row) => row.meter === meter && row.periodStart >= day.start && row.periodStart < day.end)
            .reduce((sum, row) => sum + row.used, 0)
        const points: Array<DailyPoint> = []
        for (let at = month.start.getTime(); at <= now;) {
          const day = dayOf(at, timezone)
          points.push({ day: day.start, plateQueries: count(byDay("plate_queries"), day), moduleQueries: count(byDay("module_queries"), day) })
          at = day.end.getTime()
        }
        return points
      })

    const overview = withSession((ctx) =>
      Effect.flatMap(dailyOf(ctx), (daily) => render(ctx, "overview", "Overview", overviewPage({ usage: ctx.usage, daily, date: ctx.date })))
    )

    const keysOf = (ctx: SignedIn) => accountsRepo.listKeys(ctx.principal.accountId, ctx.principal.environment)

    const keys = withSession((ctx) =>
      Effect.flatMap(keysOf(ctx), (list) => render(ctx, "keys", "API keys", keysPage({ keys: list, csrf: ctx.session.csrfToken, date: ctx.date })))
    )

    const keyNameOf = (form: UrlParams.UrlParams) => {
      const name = field(form, "name").slice(0, 100)
      return name.length === 0 ? null : name
    }

    const createKey = withForm((ctx, form) =>
      Effect.gen(function*() {
        const created = yield* accounts.createKey({ accountId: ctx.principal.accountId, environment: ctx.principal.environment, name: keyNameOf(form) })
        yield* audit(ctx, "key.create", created.id)
        return htmlResponse(page(ctx.frame("keys", "New API key"), createdKeyPage(created)), 201)
      }).pipe(Effect.orDie)
    )

    const keyNotFound = (ctx: SignedIn) =>
      Effect.flatMap(keysOf(ctx), (list) =>
        render(ctx, "keys", "API keys", keysPage({ keys: list, csrf: ctx.session.csrfToken, date: ctx.date }), { alert: "There is no such key." }, 404))

    const renameKey = withForm((ctx, form) =>
      Effect.gen(function*() {
        const id = yield* param("id")
        yield* accounts.renameOwnKey(ctx.principal, id, keyNameOf(form))
        yield* audit(ctx, "key.rename", id)
        return seeOther(doneAt("keys", "key-renamed"))
      }).pipe(Effect.catchTag("KeyNotFound", () => keyNotFound(ctx)))
    )

    const revokeKey = withForm((ctx) =>
      Effect.gen(function*() {
        const id = yield* param("id")
        yield* accounts.revokeOwnKey(ctx.principal, id)
        yield* audit(ctx, "key.revoke", id)
        return seeOther(doneAt("keys", "key-revoked"))
      }).pipe(Effect.catchTag("KeyNotFound", () => keyNotFound(ctx)))
    )

    const offsetOf = Effect.map(query("offset"), (raw) => (raw !== undefined && /^\d{1,6}$/.test(raw) ? Number(raw) : 0))

    const webhooksView = (ctx: SignedIn, extra: { readonly alert?: string } = {}, status = 200) =>
      Effect.gen(function*() {
        const offset = yield* offsetOf
        const [webhook, list] = yield* Effect.all([
          webhooks.getConfig(ctx.principal),
          webhooks.listDeliveries(ctx.principal, LIST_LIMIT, offset)
        ], { concurrency: 2 })
        return yield* render(
          ctx,
          "webhooks",
          "Webhooks",
          webhooksPage({ config: webhook, deliveries: list.deliveries, csrf: ctx.session.csrfToken, date: ctx.date, page: { offset, limit: LIST_LIMIT } }),
          extra,
          status
        )
      })

    const webhooksShow = withSession((ctx) => webhooksView(ctx))

    const webhooksSave = withForm((ctx, form) =>
      Effect.gen(function*() {
        const url = field(form, "url")
        const enabled = field(form, "enabled") === "true"
        yield* webhooks.updateConfig(ctx.principal, { url: url.length === 0 ? null : url, enabled: url.length === 0 ? false : enabled }).pipe(
          Effect.provideService(HostResolver, resolver)
        )
        yield* audit(ctx, "webhook.update")
        return seeOther(doneAt("webhooks", "webhook-saved"))
      }).pipe(Effect.catchTag("InvalidWebhookConfig", (invalid) => webhooksView(ctx, { alert: `Not saved: ${invalid.reason}.` }, 400)))
    )

    const rotateSecret = withForm((ctx) =>
      Effect.gen(function*() {
        const updated = yield* webhooks.updateConfig(ctx.principal, { rotateSecret: true }).pipe(Effect.provideService(HostResolver, resolver))
        yield* audit(ctx, "webhook.rotate_secret")
        return htmlResponse(page(ctx.frame("webhooks", "New signing secret"), rotatedSecretPage(updated.secret)))
      }).pipe(Effect.catchTag("InvalidWebhookConfig", (invalid) => webhooksView(ctx, { alert: `Not rotated: ${invalid.reason}.` }, 400)))
    )

    const sendTest = withForm((ctx) =>
      Effect.gen(function*() {
        const sent = yield* webhooks.sendTest(ctx.principal)
        yield* audit(ctx, "webhook.test", sent.id)
        return seeOther(doneAt("webhooks", "test-sent"))
      }).pipe(Effect.catchTag("WebhookNotReady", () =>
        Effect.flatMap(webhooks.getConfig(ctx.principal), (webhook) =>
          webhooksView(ctx, { alert: webhook.url === null ? "Set an endpoint URL before sending a test." : "Enable the webhook before sending a test." }, 409))
      ))
    )

    const resend = withForm((ctx) =>
      Effect.gen(function*() {
        const id = yield* param("id")
        yield* webhooks.resend(ctx.principal, id)
        yield* audit(ctx, "delivery.resend", id)
        return seeOther(doneAt("webhooks", "delivery-resent"))
      }).pipe(Effect.catchTags({
        DeliveryNotFound: () => webhooksView(ctx, { alert: "There is no such delivery." }, 404),
        DeliveryInProgress: () => webhooksView(ctx, { alert: "That delivery is still being attempted; resend it once it has failed or been delivered." }, 409)
      }))
    )

    const statusOf = Effect.map(query("status"), (raw) => (Schema.is(OperationStatus)(raw) ? raw : undefined))

    const operationsList = withSession((ctx) =>
      Effect.gen(function*() {
        const status = yield* statusOf
        const before = Option.filter(Option.fromNullable(yield* query("before")), (id) => id.length <= 64)
        const list = yield* repo.recentOperations(ctx.principal.accountId, ctx.principal.environment, status ? [status] : [], LIST_LIMIT, before)
        return yield* render(ctx, "operations", "Operations", operationsPage({ operations: list, status, limit: LIST_LIMIT, date: ctx.date }))
      })
    )

    const operationDetail = withSession((ctx) =>
      Effect.gen(function*() {
        const id = yield* param("id")
        const row = yield* operations.find(id)
        if (Option.isNone(row) || row.value.accountId !== ctx.principal.accountId || row.value.environment !== ctx.principal.environment) {
          return yield* render(ctx, "operations", "Operation not found", operationsPage({ operations: [], status: undefined, limit: LIST_LIMIT, date: ctx.date }), { alert: "There is no such operation in this environment." }, 404)
        }
        const modules = yield* operations.modules(id)
        return yield* render(ctx, "operations", `Operation ${id}`, operationPage({ row: row.value, modules, date: ctx.date }))
      })
    )

    const activity = withSession((ctx) =>
      Effect.flatMap(repo.recentAudit(ctx.principal.accountId, ctx.principal.environment, 100), (entries) =>
        render(ctx, "activity", "Activity", activityPage({ entries, date: ctx.date })))
    )

    const asset = Effect.gen(function*() {
      const found = assets.get(yield* param("name"))
      if (found === undefined) return yield* notFound
      return HttpServerResponse.uint8Array(found.body, {
        contentType: found.contentType,
        headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
      })
    })

    const notFound = Effect.map(CurrentEnvironment, (environment) => htmlResponse(notFoundPage(environment), 404))

    const handlers: Record<ConsoleRoute, Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>> = {
      overview,
      keys,
      createKey,
      renameKey,
      revokeKey,
      webhooks: webhooksShow,
      saveWebhook: webhooksSave,
      rotateSecret,
      sendTest,
      resend,
      operations: operationsList,
      operation: operationDetail,
      activity,
      showLink,
      signIn,
      signOut,
      asset
    }
    let router: HttpRouter.HttpRouter = HttpRouter.empty
    for (const name of Object.keys(CONSOLE_ROUTES) as Array<ConsoleRoute>) {
      const { method, path } = CONSOLE_ROUTES[name]
      router = router.pipe(HttpRouter.route(method)(path, handlers[name]))
    }

    /**
     * A URL the API's input layer would refuse (bad percent-encoding, NUL, lone surrogates) is a
     * 400 page before anything reads it; unknown pages are a 404 page; anything unexpected a 500
     * page that says nothing of why.
     */
    const checked = Effect.flatMap(request, (req) =>
      RequestInput.checkUrl(req.url) === undefined
        ? router
        : Effect.map(CurrentEnvironment, (environment) => htmlResponse(badAddressPage(environment), 400)))
    const app = checked.pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure) && (failure.value as { _tag?: string })._tag === "RouteNotFound") return notFound
        return Effect.zipRight(
          Effect.logError("console request failed", Cause.pretty(cause)),
          Effect.map(CurrentEnvironment, (environment) => htmlResponse(failurePage(environment), 500))
        )
      })
    )

    return { app }
  }),
  dependencies: [ConsoleSessions.Default, ConsoleRepo.Default, Accounts.Default]
}) {}
