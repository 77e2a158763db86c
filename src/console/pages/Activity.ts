/** The audit trail of this environment's console: who did what, when, from where. */
import type { DateFormat } from "../Format.js"
import { html } from "../Html.js"
import type { AuditEntry } from "../Repo.js"

export const activityPage = (input: { readonly entries: ReadonlyArray<AuditEntry>; readonly date: DateFormat }) =>
  html`
<section class="card" aria-label="Console activity">
  ${
    input.entries.length === 0 ? html`<p>No console activity yet.</p>` : html`<div class="table-wrap"><table class="activity stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">When</th><th scope="col" role="columnheader">Who</th><th scope="col" role="columnheader">What</th><th scope="col" role="columnheader">On</th><th scope="col" role="columnheader">From</th></tr></thead>
    <tbody role="rowgroup">${
      input.entries.map((entry) =>
        html`<tr role="row" data-action="${entry.action}"><td role="cell" data-label="When">${input.date(entry.at)}</td><td role="cell" data-label="Who">${entry.actor}</td><td role="cell" data-label="What"><code>${entry.action}</code></td><td role="cell" data-label="On">${
          entry.target === null ? "—" : html`<code class="id">${entry.target}</code>`
        }</td><td role="cell" data-label="From">${entry.ip ?? "—"}</td></tr>`
      )
    }</tbody></table></div>`
  }
</section>`
