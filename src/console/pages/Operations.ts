/** Recent operations with a status filter, and one operation with each module's result. */
import type { OperationStatus } from "../../../workflows/shared.js"
import { OperationStatus as OperationStatusSchema } from "../../contract/Operation.js"
import type { ModuleRow, OperationRow, OperationSummaryRow } from "../../operations/Repo.js"
import type { DateFormat } from "../Format.js"
import { html } from "../Html.js"
import { hrefOf } from "../Routes.js"


const KIND_LABEL: Record<OperationRow["kind"], string> = { modules: "Module query", vehicle: "Vehicle search", report: "Report (v1)" }

const badge = (status: OperationStatus) => html`<span class="badge badge-${status}">${status}</span>`

export const operationsPage = (input: {
  readonly operations: ReadonlyArray<OperationSummaryRow>
  readonly status: OperationStatus | undefined
  readonly limit: number
  readonly date: DateFormat
}) => {
  const { date, limit, operations, status } = input
  const last = operations.length === limit ? operations[operations.length - 1] : undefined
  const query = (extra: Record<string, string>) =>
    hrefOf("operations", {}, { ...(status === undefined ? {} : { status }), ...extra })
  return html`
<form method="get" action="${hrefOf("operations")}" class="inline-form filter">
  <label for="status-filter">Status</label>
  <select id="status-filter" name="status">
    <option value=""${status === undefined ? html` selected` : ""}>All</option>
    ${OperationStatusSchema.literals.map((s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`)}
  </select>
  <button type="submit">Filter</button>
</form>
<section class="card" aria-label="Operations">
  ${
    operations.length === 0
      ? html`<p>No operations${status === undefined ? "" : html` with status ${status}`} yet.</p>`
      : html`<div class="table-wrap"><table class="operations stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Operation</th><th scope="col" role="columnheader">Kind</th><th scope="col" role="columnheader">Plate</th><th scope="col" role="columnheader">Status</th><th scope="col" role="columnheader">Created</th><th scope="col" role="columnheader">Updated</th></tr></thead>
    <tbody role="rowgroup">${
        operations.map((operation) =>
          html`<tr role="row" data-operation-id="${operation.id}">
      <th scope="row" role="rowheader" data-label="Operation"><a href="${hrefOf("operation", { id: operation.id })}"><code class="id">${operation.id}</code></a></th>
      <td role="cell" data-label="Kind">${KIND_LABEL[operation.kind]} <span class="muted">${operation.apiVersion}</span></td>
      <td role="cell" data-label="Plate"><code>${operation.plate}</code></td>
      <td role="cell" data-label="Status">${badge(operation.status)}</td>
      <td role="cell" data-label="Created">${date(operation.createdAt)}</td>
      <td role="cell" data-label="Updated">${date(operation.updatedAt)}</td>
    </tr>`
        )
      }</tbody></table></div>`
  }
  ${last === undefined ? "" : html`<nav class="pager" aria-label="Operations pages"><a href="${query({ before: last.id })}">Older</a></nav>`}
</section>`
}

const json = (value: unknown) => html`<pre class="json"><code>${JSON.stringify(value, null, 2)}</code></pre>`

export const operationPage = (input: { readonly row: OperationRow; readonly modules: ReadonlyArray<ModuleRow>; readonly date: DateFormat }) => {
  const { date, modules, row } = input
  return html`
<p><a href="${hrefOf("operations")}">All operations</a></p>
<section class="card" aria-labelledby="summary-heading">
  <h2 id="summary-heading">Summary</h2>
  <dl class="facts">
    <dt>Operation</dt><dd><code class="id">${row.id}</code></dd>
    <dt>Kind</dt><dd>${KIND_LABEL[row.kind]} (${row.apiVersion})</dd>
    <dt>Plate</dt><dd><code>${row.plate}</code></dd>
    <dt>Status</dt><dd>${badge(row.status)}</dd>
    <dt>Created</dt><dd>${date(row.createdAt)}</dd>
    <dt>Updated</dt><dd>${date(row.updatedAt)}</dd>
  </dl>
</section>
${
    row.kind === "vehicle"
      ? html`<section class="card" aria-labelledby="result-heading"><h2 id="result-heading">Result</h2>${
        row.result === null ? html`<p>Not finished yet.</p>` : json(row.result)
      }</section>`
      : [...modules].sort((a, b) => a.module.localeCompare(b.module)).map((module) =>
        html`<section class="card module" aria-labelledby="module-${module.module}" data-module="${module.module}">
  <h2 id="module-${module.module}">${module.module} ${badge(module.status)}</h2>
  ${module.error === null ? "" : html`<p class="error-text">${module.error.message}${module.error.retryable ? " (retryable)" : ""}</p>`}
  ${(module.warnings ?? []).map((warning) => html`<p class="warning-text">${warning.message}</p>`)}
  ${module.data === null || module.data === undefined ? html`<p class="muted">No data yet.</p>` : json(module.data)}
  <p class="muted">Updated ${date(module.updatedAt)}</p>
</section>`
      )
  }`
}
