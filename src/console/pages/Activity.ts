/** The audit trail of this environment's console: who did what, when, from where. */
import type { DateFormat } from "../Format.js"
import { html } from "../Html.js"
import type { AuditEntry } from "../Repo.js"

export const activityPage = (input: { readonly entries: ReadonlyArray<AuditEntry>; readonly date: DateFormat }) =>
  html`
<section class="card" aria-label="Console activity">
  ${
    input.entries.length === 0 ? html`<p>No console activity yet.</p>` : html`<div class="table-wrap"><table class="activity stack">
    <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">On</th><th scope="col">From</th></tr></thead>
    <tbody>${
      input.entries.map((entry) =>
        html`<tr data-action="${entry.action}"><td data-label="When">${input.date(entry.at)}</td><td data-label="Who">${entry.actor}</td><td data-label="What"><code>${entry.action}</code></td><td data-label="On">${
          entry.target === null ? "—" : html`<code class="id">${entry.target}</code>`
        }</td><td data-label="From">${entry.ip ?? "—"}</td></tr>`
      )
    }</tbody></table></div>`
  }
</section>`
