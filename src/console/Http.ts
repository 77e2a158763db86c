/**
 * The account console at `/console` on each listener: server-rendered pages for the listener's
 * environment only. Every page needs a session (cookie); every form carries the session's CSRF
 * token; every action is audited. Served beside the API (see Listeners), never through its key
 * authentication: an API key never signs in here.
 */
import { Cause, Context, Effect, Layer, Option } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerError, type HttpServerResponse } from "effect/http"
import { Accounts } from "../accounts/Accounts.js"
import { CurrentEnvironment } from "../platform/http/RequestContext.js"
import * as RequestInput from "../platform/http/RequestInput.js"
import { ConsoleGuard } from "./Guard.js"
import { makePageHandlers } from "./PagesHttp.js"
import { badAddressPage, failurePage, methodNotAllowedPage } from "./pages/SignIn.js"
import { ConsoleRepo } from "./Repo.js"
import { htmlResponse } from "./Responses.js"
import { CONSOLE_ROUTES, type ConsoleRoute } from "./Routes.js"
import { ConsoleSessions } from "./Sessions.js"
import { makeSignInHandlers } from "./SignInHttp.js"

const make = Effect.gen(function*() {
  const { request } = yield* ConsoleGuard
  const { notFound, ...pages } = yield* makePageHandlers
  const signIn = yield* makeSignInHandlers

  const handlers: Record<ConsoleRoute, Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>> = {
    ...pages,
    ...signIn
  }
  const router = yield* HttpRouter.make
  yield* router.addAll((Object.keys(CONSOLE_ROUTES) as Array<ConsoleRoute>).map((name) => {
    const { method, path } = CONSOLE_ROUTES[name]
    return HttpRouter.route(method, path, handlers[name])
  }))
  const routed = router.asHttpEffect()

  const methodsOf = RequestInput.makeRouteTable(Object.values(CONSOLE_ROUTES))

  /**
   * A URL the API's input layer would refuse (bad percent-encoding, NUL, lone surrogates) is a
   * 400 page before anything reads it; a known page asked with another method a 405 saying
   * which it takes; unknown pages are a 404 page; anything unexpected a 500 page that says
   * nothing of why.
   */
  const checked = Effect.flatMap(request, (req) => {
    if (RequestInput.checkUrl(req.url) !== undefined) {
      return Effect.map(Effect.service(CurrentEnvironment), (environment) => htmlResponse(badAddressPage(environment), 400))
    }
    const methods = methodsOf(req.url.split("?", 1)[0] ?? req.url)
    if (methods.length > 0 && !methods.includes(req.method)) {
      return Effect.map(Effect.service(CurrentEnvironment), (environment) =>
        htmlResponse(methodNotAllowedPage(environment), 405, { allow: methods.join(", ") }))
    }
    return routed
  })
  const app = checked.pipe(
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      const failure = Cause.findErrorOption(cause)
      if (Option.isSome(failure) && isRouteNotFound(failure.value)) return notFound
      return Effect.andThen(
        Effect.logError("console request failed", Cause.pretty(cause)),
        Effect.map(Effect.service(CurrentEnvironment), (environment) => htmlResponse(failurePage(environment), 500))
      )
    })
  )

  return { app }
})

const isRouteNotFound = (error: unknown) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/**
 * The console as one HTTP effect (`app`): what Listeners hands to `NodeHttpServer.makeHandler`
 * beside the API. It needs the request, its scope and the listener's CurrentEnvironment.
 */
export class ConsoleApp extends Context.Service<ConsoleApp, Effect.Success<typeof make>>()("vda/ConsoleApp", { make }) {
  static readonly layer = Layer.effect(ConsoleApp, make).pipe(
    Layer.provide([ConsoleGuard.layer, ConsoleSessions.layer, ConsoleRepo.layer, Accounts.layer])
  )
}
