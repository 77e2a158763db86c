/**
 * Signing in and out: a link's confirmation page, its form submitted (the session started and its
 * cookie set), and sign-out; failed attempts throttled per client address.
 */
import { Clock, Effect, Result } from "effect"
import { HttpServerResponse } from "effect/http"
import { AppConfig } from "../platform/config/Config.js"
import { CurrentEnvironment, type Environment } from "../platform/http/RequestContext.js"
import { ConsoleGuard } from "./Guard.js"
import { badFormPage, confirmSignInPage, forbiddenFormPage, refusedLinkPage, signedOutPage, tooManyAttemptsPage } from "./pages/SignIn.js"
import { htmlResponse, isCrossSite, seeOther } from "./Responses.js"
import { hrefOf } from "./Routes.js"
import { ConsoleSessions, type LinkRefused, sessionCookieOf } from "./Sessions.js"
import { makeThrottle } from "./Throttle.js"

export const makeSignInHandlers = Effect.gen(function*() {
  const { audit, cookieOptions, field, ipOf, param, readForm, request, withForm } = yield* ConsoleGuard
  const sessions = yield* ConsoleSessions
  const throttle = makeThrottle((yield* AppConfig).console.signInFailuresPerMinute)

  /**
   * Sign-in attempts from an address that has failed too often are refused until its window
   * ends; link pages and submissions that fail (unknown, expired, used, elsewhere) count.
   */
  const throttled = Effect.fnUntraced(function*<E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) {
    const req = yield* request
    const retryAfter = throttle.check(ipOf(req) ?? "unknown", yield* Clock.currentTimeMillis)
    if (retryAfter === undefined) return yield* handler
    const environment = yield* CurrentEnvironment
    return htmlResponse(tooManyAttemptsPage(environment, retryAfter), 429, { "retry-after": String(retryAfter) })
  })

  const refused = (environment: Environment) => Effect.fnUntraced(function*(refusal: LinkRefused) {
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
    if (Result.isFailure(form)) return htmlResponse(badFormPage(environment), form.failure)
    return yield* sessions.redeem(field(form.success, "token"), environment).pipe(
      Effect.flatMap(Effect.fnUntraced(function*({ secret, session }) {
        const previous = req.cookies[sessionCookieOf(environment)]
        if (previous !== undefined && previous.length > 0) yield* sessions.endSecret(previous)
        yield* audit({ session, ip: ipOf(req) }, "session.sign_in")
        return seeOther(hrefOf("overview")).pipe(
          HttpServerResponse.setCookieUnsafe(sessionCookieOf(environment), secret, cookieOptions(req, environment, session.expiresAt))
        )
      })
      ),
      Effect.catchTag("LinkRefused", refused(environment))
    )
  }))

  const signOut = withForm(Effect.fnUntraced(function*(ctx) {
    const req = yield* request
    yield* sessions.end(ctx.session)
    yield* audit(ctx, "session.sign_out")
    return htmlResponse(signedOutPage(ctx.session.environment)).pipe(
      HttpServerResponse.setCookieUnsafe(sessionCookieOf(ctx.session.environment), "", cookieOptions(req, ctx.session.environment, new Date(0)))
    )
  })
  )

  return { showLink, signIn, signOut }
})
