/**
 * The account console at `/console` on each listener: server-rendered pages for the listener's
 * environment only. Every page needs a session (cookie); every form carries the session's CSRF
 * token; every action is audited. Served beside the API (see Listeners), never through its key
 * authentication: an API key never signs in here.
 */
import { HttpRouter, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { Accounts } from "../accounts/Accounts.js"
import { CurrentEnvironment } from "../platform/RequestContext.js"
import * as RequestInput from "../platform/RequestInput.js"
import { ConsoleGuard } from "./Guard.js"
import { makePageHandlers } from "./PagesHttp.js"
import { badAddressPage, failurePage, methodNotAllowedPage } from "./pages/SignIn.js"
import { ConsoleRepo } from "./Repo.js"
import { htmlResponse } from "./Responses.js"
import { CONSOLE_ROUTES, type ConsoleRoute } from "./Routes.js"
import { ConsoleSessions } from "./Sessions.js"
import { makeSignInHandlers } from "./SignInHttp.js"

export class ConsoleApp extends Effect.Service<ConsoleApp>()("vda/ConsoleApp", {
  effect: Effect.gen(function*() {
    const { request } = yield* ConsoleGuard
    const { notFound, ...pages } = yield* makePageHandlers
    const signIn = yield* makeSignInHandlers

    const handlers: Record<ConsoleRoute, Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>> = {
      ...pages,
      ...signIn
    }
    let router: HttpRouter.HttpRouter = HttpRouter.empty
    for (const name of Object.keys(CONSOLE_ROUTES) as Array<ConsoleRoute>) {
      const { method, path } = CONSOLE_ROUTES[name]
      router = router.pipe(HttpRouter.route(method)(path, handlers[name]))
    }

    const methodsOf = RequestInput.makeRouteTable(Object.values(CONSOLE_ROUTES))

    /**
     * A URL the API's input layer would refuse (bad percent-encoding, NUL, lone surrogates) is a
     * 400 page before anything reads it; a known page asked with another method a 405 saying
     * which it takes; unknown pages are a 404 page; anything unexpected a 500 page that says
     * nothing of why.
     */
    const checked = Effect.flatMap(request, (req) => {
      if (RequestInput.checkUrl(req.url) !== undefined) {
        return Effect.map(CurrentEnvironment, (environment) => htmlResponse(badAddressPage(environment), 400))
      }
      const methods = methodsOf(req.url.split("?", 1)[0] ?? req.url)
      if (methods.length > 0 && !methods.includes(req.method)) {
        return Effect.map(CurrentEnvironment, (environment) =>
          htmlResponse(methodNotAllowedPage(environment), 405, { allow: methods.join(", ") }))
      }
      return router
    })
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
  dependencies: [ConsoleGuard.Default, ConsoleSessions.Default, ConsoleRepo.Default, Accounts.Default]
}) {}
