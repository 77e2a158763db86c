/** API keys of this environment: create (the secret shown once), rename, revoke, last used. */
import type { CreatedKey } from "../../accounts/Accounts.js"
import type { KeyRow } from "../../accounts/Repo.js"
import type { DateFormat } from "../Format.js"
import { html } from "../Html.js"
import { csrfField } from "../Layout.js"
import { hrefOf } from "../Routes.js"

const keyName = (key: Pick<KeyRow, "name" | "prefix" | "last4">) => key.name ?? `${key.prefix}…${key.last4}`

export const keysPage = (input: { readonly keys: ReadonlyArray<KeyRow>; readonly csrf: string; readonly date: DateFormat }) => {
  const { keys, csrf, date } = input
  const active = keys.filter((key) => key.revokedAt === null)
  const revoked = keys.filter((key) => key.revokedAt !== null)
  return html`
<section aria-labelledby="create-heading" class="card">
  <h2 id="create-heading">Create a key</h2>
  <form method="post" action="${hrefOf("createKey")}" class="inline-form">
    ${csrfField(csrf)}
    <label for="new-key-name">Name</label>
    <input id="new-key-name" name="name" maxlength="100" autocomplete="off" placeholder="e.g. billing server">
    <button type="submit">Create key</button>
  </form>
  <p class="hint">Keys are for servers only: never put one in a browser or a mobile app.</p>
</section>
<section aria-labelledby="active-heading" class="card">
  <h2 id="active-heading">Active keys</h2>
  ${
    active.length === 0
      ? html`<p>No active keys.</p>`
      : html`<div class="table-wrap"><table class="keys stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Name</th><th scope="col" role="columnheader">Key</th><th scope="col" role="columnheader">Created</th><th scope="col" role="columnheader">Last used</th><th scope="col" role="columnheader">Actions</th></tr></thead>
    <tbody role="rowgroup">${
        active.map((key) =>
          html`<tr role="row" data-key-id="${key.id}">
      <th scope="row" role="rowheader" data-label="Name">${keyName(key)}</th>
      <td role="cell" data-label="Key"><code>${key.prefix}…${key.last4}</code></td>
      <td role="cell" data-label="Created">${date(key.createdAt)}</td>
      <td role="cell" data-label="Last used">${date(key.lastUsedAt)}</td>
      <td role="cell" class="row-actions"><div class="actions">
        <form method="post" action="${hrefOf("renameKey", { id: key.id })}" class="inline-form">
          ${csrfField(csrf)}
          <label for="rename-${key.id}" class="visually-hidden">New name for ${keyName(key)}</label>
          <input id="rename-${key.id}" name="name" maxlength="100" value="${key.name ?? ""}" autocomplete="off">
          <button type="submit" class="button-quiet">Rename</button>
        </form>
        <form method="post" action="${hrefOf("revokeKey", { id: key.id })}" data-confirm="Revoke ${keyName(key)}? Requests with it fail from the next one.">
          ${csrfField(csrf)}
          <button type="submit" class="button-danger" aria-label="Revoke ${keyName(key)}">Revoke</button>
        </form>
      </div></td>
    </tr>`
        )
      }</tbody></table></div>`
  }
</section>
${
    revoked.length === 0 ? "" : html`<section aria-labelledby="revoked-heading" class="card">
  <h2 id="revoked-heading">Revoked keys</h2>
  <div class="table-wrap"><table class="keys stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Name</th><th scope="col" role="columnheader">Key</th><th scope="col" role="columnheader">Revoked</th><th scope="col" role="columnheader">Last used</th></tr></thead>
    <tbody role="rowgroup">${
      revoked.map((key) =>
        html`<tr role="row" data-key-id="${key.id}"><th scope="row" role="rowheader" data-label="Name">${keyName(key)}</th><td role="cell" data-label="Key"><code>${key.prefix}…${key.last4}</code></td><td role="cell" data-label="Revoked">${date(key.revokedAt)}</td><td role="cell" data-label="Last used">${date(key.lastUsedAt)}</td></tr>`
      )
    }</tbody></table></div>
</section>`
  }`
}

/** The one time a key's secret is ever shown. */
export const createdKeyPage = (key: CreatedKey) =>
  html`
<section aria-labelledby="secret-heading" class="card secret-card">
  <h2 id="secret-heading">Copy your new key now</h2>
  <p>This is the only time the key <strong>${key.name ?? key.prefix + "…" + key.last4}</strong> is shown. Store it in your server's secrets; if you lose it, create another and revoke this one.</p>
  <div class="secret">
    <label for="created-secret">API key</label>
    <input id="created-secret" value="${key.key}" readonly spellcheck="false" autocomplete="off">
    <button type="button" data-copy="created-secret">Copy</button>
  </div>
  <p><a href="${hrefOf("keys")}">Back to API keys</a></p>
</section>`
