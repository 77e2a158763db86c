/**
 * The frame of every console page: the environment's banner, navigation, notices, and the
 * signed-in footer; plus the page for visitors without a session.
 */
import type { Environment } from "../platform/http/RequestContext.js"
import { type Html, html } from "./Html.js"
import type { Notice } from "./Notices.js"
import { type ConsoleRoute, hrefOf } from "./Routes.js"

export type Section = Extract<ConsoleRoute, "overview" | "keys" | "webhooks" | "operations" | "activity">

const SECTIONS: ReadonlyArray<readonly [Section, string]> = [
  ["overview", "Overview"],
  ["keys", "API keys"],
  ["webhooks", "Webhooks"],
  ["operations", "Operations"],
  ["activity", "Activity"]
]

const BANNER: Record<Environment, { readonly title: string; readonly detail: string }> = {
  production: { title: "Production", detail: "Live data: keys created here are billed." },
  sandbox: { title: "Sandbox", detail: "Test data: keys created here never touch production or billing." }
}

export interface Frame {
  readonly environment: Environment
  readonly section: Section
  readonly title: string
  readonly owner: string
  readonly accountId: string
  readonly signedInAs: string
  readonly csrfToken: string
  readonly notices: ReadonlyArray<Notice>
  /** A one-line confirmation of what the last action did. */
  readonly flash?: string | undefined
  /** What went wrong with the last action (nothing was changed). */
  readonly alert?: string | undefined
}

const head = (title: string, environment: Environment) =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${BANNER[environment].title} · Vehicle Data API console</title>
<link rel="stylesheet" href="${hrefOf("asset", { name: "console.css" })}">
</head>`

const banner = (environment: Environment) =>
  html`<div class="env-banner env-${environment}" role="note" aria-label="Environment">
<strong>${BANNER[environment].title}</strong> <span>${BANNER[environment].detail}</span>
</div>`

/** The hidden field every form posts back, checked against the session's token. */
export const csrfField = (token: string) => html`<input type="hidden" name="csrf" value="${token}">`

export const page = (frame: Frame, content: Html) =>
  html`${head(frame.title, frame.environment)}
<body class="env-${frame.environment}">
<a class="skip" href="#main">Skip to content</a>
${banner(frame.environment)}
<header class="top">
  <div class="brand"><span class="brand-name">Vehicle Data API</span> <span class="brand-account">${frame.owner}</span></div>
  <nav aria-label="Console sections">
    <ul>${SECTIONS.map(([section, label]) =>
    html`<li><a href="${hrefOf(section)}"${section === frame.section ? html` aria-current="page"` : ""}>${label}</a></li>`
  )}</ul>
  </nav>
  <form method="post" action="${hrefOf("signOut")}" class="sign-out">${csrfField(frame.csrfToken)}<button type="submit" class="button-quiet">Sign out</button></form>
</header>
<main id="main" tabindex="-1">
<h1>${frame.title}</h1>
${frame.flash === undefined ? "" : html`<p class="flash" role="status">${frame.flash}</p>`}
${frame.alert === undefined ? "" : html`<p class="alert" role="alert">${frame.alert}</p>`}
${
    frame.notices.length === 0 ? "" : html`<ul class="notices" aria-label="Usage notices">${
      frame.notices.map((notice) => html`<li class="notice notice-${notice.level}">${notice.message}</li>`)
    }</ul>`
  }
${content}
</main>
<footer class="bottom">Signed in as <strong>${frame.signedInAs}</strong> to account <code>${frame.accountId}</code>.</footer>
<script src="${hrefOf("asset", { name: "console.js" })}" defer></script>
</body>
</html>`

/** A page without a session: sign-in confirmations, refused links, signed out. */
export const bare = (environment: Environment, title: string, content: Html) =>
  html`${head(title, environment)}
<body class="env-${environment} bare">
${banner(environment)}
<main id="main" class="narrow">
<h1>${title}</h1>
${content}
</main>
</body>
</html>`
