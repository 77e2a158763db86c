/** Pages seen without a session: a link's confirmation, a refused link, signed out, no session. */
import type { Environment } from "../../platform/http/RequestContext.js"
import { html } from "../Html.js"
import { bare } from "../Layout.js"
import { hrefOf } from "../Routes.js"
import type { LinkRefused } from "../Sessions.js"

const NEW_LINK = html`<p>Ask your operator for a new link: <code>vda console link --account ACCOUNT_ID</code>.</p>`

/**
 * Opening a link only shows this form: the link is used when it is submitted, so a mail scanner
 * or a browser preloading the URL cannot spend it.
 */
export const confirmSignInPage = (environment: Environment, token: string, signsInAs: string) =>
  bare(
    environment,
    "Sign in to the console",
    html`<p>This link signs <strong>${signsInAs}</strong> in to the ${environment} console. It works once.</p>
<form method="post" action="${hrefOf("signIn")}">
  <input type="hidden" name="token" value="${token}">
  <button type="submit">Sign in</button>
</form>`
  )

const REFUSALS: Record<LinkRefused["reason"], { readonly status: number; readonly title: string; readonly text: string }> = {
  unknown: { status: 404, title: "This sign-in link is not valid", text: "Check that the whole link was copied." },
  expired: { status: 410, title: "This sign-in link has expired", text: "Sign-in links work for a short while only." },
  used: { status: 410, title: "This sign-in link was already used", text: "Each link signs in once." },
  other_environment: {
    status: 404,
    title: "This sign-in link is for the other environment",
    text: "Production and sandbox consoles are separate: open the link on the address it was issued for."
  }
}

export const refusedLinkPage = (environment: Environment, reason: LinkRefused["reason"]) => {
  const refusal = REFUSALS[reason]
  return { status: refusal.status, body: bare(environment, refusal.title, html`<p>${refusal.text}</p>${NEW_LINK}`) }
}

export const signedOutPage = (environment: Environment) =>
  bare(environment, "You are signed out", html`<p>Your console session has ended.</p>${NEW_LINK}`)

export const noSessionPage = (environment: Environment) =>
  bare(environment, "Sign in to the console", html`<p>The console signs in with one-time links, never with an API key or a password.</p>${NEW_LINK}`)

export const tooManyAttemptsPage = (environment: Environment, retryAfter: number) =>
  bare(environment, "Too many sign-in attempts", html`<p>Wait ${retryAfter} seconds, then open your link again.</p>`)

export const forbiddenFormPage = (environment: Environment) =>
  bare(
    environment,
    "This form has expired",
    html`<p>The form was not sent from this console's own pages in your current session. Nothing was changed.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`
  )

export const badAddressPage = (environment: Environment) =>
  bare(environment, "This address is not valid", html`<p>Check the address and try again.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`)

export const methodNotAllowedPage = (environment: Environment) =>
  bare(environment, "This page cannot do that", html`<p>The console's pages are opened with links and changed with their own forms.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`)

export const badFormPage = (environment: Environment) =>
  bare(environment, "This form could not be read", html`<p>Nothing was changed. Go back and send it again.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`)

export const notFoundPage = (environment: Environment) =>
  bare(environment, "Page not found", html`<p>There is no such console page.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`)

export const failurePage = (environment: Environment) =>
  bare(environment, "Something went wrong", html`<p>The console could not answer this time. Nothing else was affected; try again shortly.</p><p><a href="${hrefOf("overview")}">Back to the console</a></p>`)
