/**
 * Every console route, defined once: the router is built from these, and metrics, traces and the
 * access log name requests by them (so a sign-in token in a path is never recorded).
 */
import { makeRouteResolver } from "../platform/http/RequestInput.js"

export const CONSOLE_ROUTES = {
  overview: { method: "GET", path: "/console" },
  keys: { method: "GET", path: "/console/keys" },
  createKey: { method: "POST", path: "/console/keys" },
  renameKey: { method: "POST", path: "/console/keys/:id/rename" },
  revokeKey: { method: "POST", path: "/console/keys/:id/revoke" },
  webhooks: { method: "GET", path: "/console/webhooks" },
  saveWebhook: { method: "POST", path: "/console/webhooks" },
  rotateSecret: { method: "POST", path: "/console/webhooks/rotate-secret" },
  sendTest: { method: "POST", path: "/console/webhooks/test" },
  resend: { method: "POST", path: "/console/webhooks/deliveries/:id/resend" },
  operations: { method: "GET", path: "/console/operations" },
  operation: { method: "GET", path: "/console/operations/:id" },
  activity: { method: "GET", path: "/console/activity" },
  showLink: { method: "GET", path: "/console/sign-in/:token" },
  signIn: { method: "POST", path: "/console/sign-in" },
  signOut: { method: "POST", path: "/console/sign-out" },
  asset: { method: "GET", path: "/console/assets/:name" }
} as const satisfies Record<string, { readonly method: "GET" | "POST"; readonly path: `/console${string}` }>

export type ConsoleRoute = keyof typeof CONSOLE_ROUTES

/** The `:name` parameters of a route's path. */
type ParamsOf<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}` ? Name | ParamsOf<Rest>
  : Path extends `${string}:${infer Name}` ? Name
  : never

type PathParams<R extends ConsoleRoute> = ParamsOf<(typeof CONSOLE_ROUTES)[R]["path"]>

/** A route's address with its parameters filled in (and a query string, if given). */
export const hrefOf = <R extends ConsoleRoute>(
  route: R,
  ...[params, query]: [PathParams<R>] extends [never] ? [params?: {}, query?: Record<string, string>]
    : [params: Record<PathParams<R>, string>, query?: Record<string, string>]
) => {
  const path = CONSOLE_ROUTES[route].path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent((params as Record<string, string>)[name]!))
  const search = query === undefined ? "" : new URLSearchParams(query).toString()
  return search.length === 0 ? path : `${path}?${search}`
}

/** The console's pages, served beside the API (not through its key authentication). */
export const isConsolePath = (url: string | undefined) =>
  url !== undefined && url.startsWith("/console") && (url.length === 8 || url[8] === "/" || url[8] === "?")

export const consoleRouteOf = makeRouteResolver(Object.values(CONSOLE_ROUTES))
