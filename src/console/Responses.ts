/**
 * What every console answer shares: its security headers, HTML and redirect responses, the
 * confirmations an action's redirect carries, and the checks a form must pass.
 */
import { timingSafeEqual } from "node:crypto"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { Html } from "./Html.js"
import { hrefOf } from "./Routes.js"

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
export const DONE = {
  "key-renamed": "The key was renamed.",
  "key-revoked": "The key was revoked: requests with it fail from the next one.",
  "webhook-saved": "The webhook settings were saved.",
  "test-sent": "A webhook.test event is on its way: it appears in the deliveries below.",
  "delivery-resent": "The delivery was sent again, as a new series of attempts with the same event id."
} as const
export type Done = keyof typeof DONE

export const htmlResponse = (body: Html, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body.value, { status, contentType: "text/html; charset=utf-8", headers: { ...SECURITY_HEADERS, ...headers } })

export const seeOther = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: SECURITY_HEADERS })

/** A page that confirms what an action did (post, redirect, get). */
export const doneAt = (page: "keys" | "webhooks", done: Done) => hrefOf(page, {}, { done })

export const sameToken = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * A form sent from another site (older browsers ignore SameSite): refused whatever it carries.
 * Browsers that say where a request comes from (`Sec-Fetch-Site`) are believed; for the others
 * the `Origin` must be this host.
 */
export const isCrossSite = (request: HttpServerRequest.HttpServerRequest) => {
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
