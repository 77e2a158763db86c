/** The overview: plan, every allowance with its use and reset, and this month's daily queries. */
import type { Usage } from "../../metering/Api.js"
import { type DateFormat, dayLabelOf, formatCount } from "../Format.js"
import { html, jsonBlock } from "../Html.js"
import { ALLOWANCES } from "../Notices.js"

export interface DailyPoint {
  /** The local day's first instant. */
  readonly day: Date
  readonly plateQueries: number
  readonly moduleQueries: number
}

export const overviewPage = (input: { readonly usage: Usage; readonly daily: ReadonlyArray<DailyPoint>; readonly date: DateFormat }) => {
  const { usage, daily, date } = input
  const label = dayLabelOf(usage.timezone)
  const monthTotal = (key: "plateQueries" | "moduleQueries") => daily.reduce((sum, point) => sum + point[key], 0)
  return html`
<section aria-labelledby="plan-heading" class="card">
  <h2 id="plan-heading">Plan</h2>
  <p class="plan"><span class="plan-name">${usage.entitlements.plan}</span>
    Modules: ${usage.entitlements.enabledModules.join(", ") || "none"} · Timezone: ${usage.timezone}</p>
</section>
<section aria-labelledby="allowances-heading" class="card">
  <h2 id="allowances-heading">Allowances</h2>
  <div class="table-wrap">
  <table class="allowances stack" role="table">
    <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Allowance</th><th scope="col" role="columnheader">Used</th><th scope="col" role="columnheader">Limit</th><th scope="col" role="columnheader">Remaining</th><th scope="col" role="columnheader">Resets</th></tr></thead>
    <tbody role="rowgroup">${
    ALLOWANCES.map(([key, name]) => {
      const meter = usage[key]
      const share = meter.limit === null || meter.limit === 0 ? 0 : Math.min(1, meter.used / meter.limit)
      return html`<tr role="row" data-allowance="${key}">
      <th scope="row" role="rowheader">${name[0]!.toUpperCase() + name.slice(1)}</th>
      <td role="cell" data-label="Used"><span class="used">${formatCount(meter.used)}</span>
        ${meter.limit === null ? "" : html`<meter min="0" max="1" low="0.8" high="0.99" optimum="0" value="${share.toFixed(3)}" aria-label="${Math.round(share * 100)}% used">${Math.round(share * 100)}%</meter>`}</td>
      <td role="cell" data-label="Limit">${formatCount(meter.limit)}</td>
      <td role="cell" data-label="Remaining">${formatCount(meter.remaining)}</td>
      <td role="cell" data-label="Resets">${date(meter.endsAt)}</td>
    </tr>`
    })
  }</tbody>
  </table>
  </div>
</section>
<section aria-labelledby="daily-heading" class="card">
  <h2 id="daily-heading">Daily queries this month</h2>
  <p class="totals">${formatCount(monthTotal("plateQueries"))} plate queries and ${formatCount(monthTotal("moduleQueries"))} module queries so far.</p>
  <figure class="chart">
    <div id="usage-chart" class="chart-area" role="img" aria-label="Chart of plate and module queries per day this month; the same numbers are in the table below"></div>
    <figcaption><span class="swatch swatch-plate"></span> Plate queries <span class="swatch swatch-module"></span> Module queries</figcaption>
  </figure>
  ${
    jsonBlock("usage-data", {
      labels: daily.map((point) => label(point.day)),
      plateQueries: daily.map((point) => point.plateQueries),
      moduleQueries: daily.map((point) => point.moduleQueries)
    })
  }
  <details>
    <summary>Daily numbers</summary>
    <div class="table-wrap">
    <table class="daily" role="table">
      <thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Day</th><th scope="col" role="columnheader">Plate queries</th><th scope="col" role="columnheader">Module queries</th></tr></thead>
      <tbody role="rowgroup">${
    [...daily].reverse().map((point) =>
      html`<tr role="row"><th scope="row" role="rowheader">${label(point.day)}</th><td role="cell">${formatCount(point.plateQueries)}</td><td role="cell">${formatCount(point.moduleQueries)}</td></tr>`
    )
  }</tbody>
    </table>
    </div>
  </details>
</section>`
}
