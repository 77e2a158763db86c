/**
 * Every console route, defined once: the router is built from these, and metrics, traces and the
 * access log name requests by them (so a sign-in token in a path is never recorded).
 */
import { makeRouteResolver } from "../platform/RequestInput.js"

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

/** The console's pages, served beside the API (not through its key authentication). */
export const isConsolePath = (url: string | undefined) =>
  url !== undefined && url.startsWith("/console") && (url.length === 8 || url[8] === "/" || url[8] === "?")

export const consoleRouteOf = makeRouteResolver(Object.values(CONSOLE_ROUTES))
