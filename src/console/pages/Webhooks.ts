/** The webhook: URL and activation, secret rotation, a test event, and the deliveries log. */
import type { Delivery } from "../../webhooks/Api.js"
import { SETTLED_STATUSES, type StoredConfig } from "../../webhooks/Repo.js"
import type { DateFormat } from "../Format.js"
import { html } from "../Html.js"
import { csrfField } from "../Layout.js"
import { hrefOf } from "../Routes.js"

const isResendable = (delivery: Pick<Delivery, "status">) => SETTLED_STATUSES.includes(delivery.status)

const STATUS_LABEL: Record<Delivery["status"], string> = { pending: "Pending", processed: "Delivered", failed: "Failed" }

export const webhooksPage = (input: {
  readonly config: StoredConfig
  readonly deliveries: ReadonlyArray<Delivery>
  readonly csrf: string
  readonly date: DateFormat
  readonly page: { readonly offset: number; readonly limit: number }
}) => {
  const { config, csrf, date, deliveries, page } = input
  return html`
<section aria-labelledby="endpoint-heading" class="card">
  <h2 id="endpoint-heading">Endpoint</h2>
  <form method="post" action="${hrefOf("saveWebhook")}" class="stack-form">
    ${csrfField(csrf)}
    <label for="webhook-url">Endpoint URL</label>
    <input id="webhook-url" name="url" type="url" inputmode="url" value="${config.url ?? ""}" placeholder="https://example.com/webhooks" maxlength="2048" autocomplete="off">
    <div class="check">
      <input id="webhook-enabled" name="enabled" type="checkbox" value="true"${config.enabled ? html` checked` : ""}>
      <label for="webhook-enabled">Send events to this URL</label>
    </div>
    <button type="submit">Save</button>
  </form>
  <p class="status-line">Status: <strong>${config.url === null ? "not configured" : config.enabled ? "enabled" : "disabled"}</strong>
    · Signing secret <code>whsec_…${config.secret.slice(-4)}</code></p>
  <div class="button-row">
    <form method="post" action="${hrefOf("rotateSecret")}" data-confirm="Rotate the signing secret? Every later delivery, retries included, is signed with the new one.">
      ${csrfField(csrf)}<button type="submit" class="button-quiet">Rotate secret</button>
    </form>
    <form method="post" action="${hrefOf("sendTest")}">
      ${csrfField(csrf)}<button type="submit" class="button-quiet">Send test event</button>
    </form>
  </div>
</section>
<section aria-labelledby="deliveries-heading" class="card">
  <h2 id="deliveries-heading">Deliveries</h2>
  ${
    deliveries.length === 0 && page.offset === 0
      ? html`<p>No deliveries yet.</p>`
      : html`<div class="table-wrap"><table class="deliveries stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Event</th><th scope="col" role="columnheader">Status</th><th scope="col" role="columnheader">Attempts</th><th scope="col" role="columnheader">Response</th><th scope="col" role="columnheader">Created</th><th scope="col" role="columnheader">Delivery</th><th scope="col" role="columnheader"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody role="rowgroup">${
        deliveries.map((delivery) =>
          html`<tr role="row" data-delivery-id="${delivery.id}" data-status="${delivery.status}">
      <th scope="row" role="rowheader" data-label="Event">${delivery.apiVersion}.${delivery.event}</th>
      <td role="cell" data-label="Status"><span class="badge badge-${delivery.status}">${STATUS_LABEL[delivery.status]}</span></td>
      <td role="cell" data-label="Attempts">${delivery.attempts}</td>
      <td role="cell" data-label="Response">${delivery.responseStatus ?? "—"}</td>
      <td role="cell" data-label="Created">${date(delivery.createdAt)}</td>
      <td role="cell" data-label="Delivery"><code class="id">${delivery.id}</code></td>
      <td role="cell" class="row-actions">${
            isResendable(delivery)
              ? html`<form method="post" action="${hrefOf("resend", { id: delivery.id })}">${csrfField(csrf)}<button type="submit" class="button-quiet" aria-label="Resend delivery ${delivery.id}">Resend</button></form>`
              : ""
          }</td>
    </tr>`
        )
      }</tbody></table></div>
  <nav class="pager" aria-label="Deliveries pages">
    ${page.offset > 0 ? html`<a href="${hrefOf("webhooks", {}, { offset: String(Math.max(0, page.offset - page.limit)) })}">Newer</a>` : ""}
    ${deliveries.length === page.limit ? html`<a href="${hrefOf("webhooks", {}, { offset: String(page.offset + page.limit) })}">Older</a>` : ""}
  </nav>`
  }
</section>`
}

/** The one time a rotated secret is shown. */
export const rotatedSecretPage = (secret: string) =>
  html`
<section aria-labelledby="secret-heading" class="card secret-card">
  <h2 id="secret-heading">Copy your new signing secret now</h2>
  <p>Every delivery from now on, retries included, is signed with this secret. Update your endpoint's verification before the next event.</p>
  <div class="secret">
    <label for="rotated-secret">Signing secret</label>
    <input id="rotated-secret" value="${secret}" readonly spellcheck="false" autocomplete="off">
    <button type="button" data-copy="rotated-secret">Copy</button>
  </div>
  <p><a href="${hrefOf("webhooks")}">Back to webhooks</a></p>
</section>`
