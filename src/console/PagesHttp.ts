/**
 * The console's pages and the actions on them: overview, API keys, webhooks (test, rotate,
 * resend), operations, activity, and the static assets.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { HttpServerResponse, type UrlParams } from "effect/http"
import { Accounts } from "../accounts/Accounts.js"
import { AccountsRepo } from "../accounts/Repo.js"
import { byDay } from "../metering/Meters.js"
import { UsageReader } from "../metering/UsageReader.js"
import { daysOf, monthOf, type Period } from "../metering/Periods.js"
import { OperationStatus } from "../contract/Operation.js"
import { OperationsRepo } from "../operations/Repo.js"
import { METER } from "../platform/contract/MeterNames.js"
import { CurrentEnvironment } from "../platform/http/RequestContext.js"
import { Webhooks } from "../webhooks/Webhooks.js"
import { loadAssets } from "./Assets.js"
import { ConsoleGuard, type SignedIn } from "./Guard.js"
import { activityPage } from "./pages/Activity.js"
import { createdKeyPage, keysPage } from "./pages/Keys.js"
import { operationPage, operationsPage } from "./pages/Operations.js"
import { type DailyPoint, overviewPage } from "./pages/Overview.js"
import { notFoundPage } from "./pages/SignIn.js"
import { rotatedSecretPage, webhooksPage } from "./pages/Webhooks.js"
import { ConsoleRepo } from "./Repo.js"
import { doneAt, htmlResponse, seeOther } from "./Responses.js"

const LIST_LIMIT = 25

export const makePageHandlers = Effect.gen(function*() {
  const { audit, field, param, query, render, withForm, withSession } = yield* ConsoleGuard
  const repo = yield* ConsoleRepo
  const usageReader = yield* UsageReader
  const accounts = yield* Accounts
  const accountsRepo = yield* AccountsRepo
  const webhooks = yield* Webhooks
  const operations = yield* OperationsRepo
  const assets = loadAssets()

  /** Every day of the current month up to today, with its plate and module queries. */
  const dailyOf = Effect.fnUntraced(function*(ctx: SignedIn) {
    const now = yield* Clock.currentTimeMillis
    const { timezone } = ctx.principal
    const month = monthOf(now, timezone)
    const rows = yield* usageReader.daily(ctx.principal.accountId, ctx.principal.environment, month.start)
    // a day's counters are found by the day they fall in, so days counted under another timezone still show
    const count = (meter: string, day: Period) =>
      rows.filter((row) => row.meter === meter && row.periodStart >= day.start && row.periodStart < day.end)
        .reduce((sum, row) => sum + row.used, 0)
    return daysOf(month, timezone, now).map((day): DailyPoint => ({
      day: day.start,
      plateQueries: count(byDay(METER.plate_queries), day),
      moduleQueries: count(byDay(METER.module_queries), day)
    }))
  })

  const overview = withSession(Effect.fnUntraced(function*(ctx) {
    const [usage, daily] = yield* Effect.all([ctx.usage, dailyOf(ctx)], { concurrency: 2 })
    return yield* render(ctx, "overview", "Overview", overviewPage({ usage, daily, date: ctx.date }))
  })
  )

  const keysView = (ctx: SignedIn, extra: { readonly alert?: string } = {}, status = 200) =>
    Effect.flatMap(accountsRepo.listKeys(ctx.principal.accountId, ctx.principal.environment), (list) =>
      render(ctx, "keys", "API keys", keysPage({ keys: list, csrf: ctx.session.csrfToken, date: ctx.date }), extra, status))

  const keys = withSession((ctx) => keysView(ctx))

  const keyNameOf = (form: UrlParams.UrlParams) => {
    const name = field(form, "name").slice(0, 100)
    return name.length === 0 ? null : name
  }

  const createKey = withForm(Effect.fnUntraced(function*(ctx, form) {
    const created = yield* accounts.createKey({ accountId: ctx.principal.accountId, environment: ctx.principal.environment, name: keyNameOf(form) })
    yield* audit(ctx, "key.create", created.id)
    return yield* render(ctx, "keys", "New API key", createdKeyPage(created), {}, 201)
  }, Effect.orDie)
  )

  const keyNotFound = (ctx: SignedIn) => keysView(ctx, { alert: "There is no such key." }, 404)

  const renameKey = withForm(Effect.fnUntraced(function*(ctx, form) {
    const id = yield* param("id")
    yield* accounts.renameOwnKey(ctx.principal, id, keyNameOf(form))
    yield* audit(ctx, "key.rename", id)
    return seeOther(doneAt("keys", "key-renamed"))
  }, (effect, ctx) => effect.pipe(Effect.catchTag("KeyNotFound", () => keyNotFound(ctx)))))

  const revokeKey = withForm(Effect.fnUntraced(function*(ctx) {
    const id = yield* param("id")
    yield* accounts.revokeOwnKey(ctx.principal, id)
    yield* audit(ctx, "key.revoke", id)
    return seeOther(doneAt("keys", "key-revoked"))
  }, (effect, ctx) => effect.pipe(Effect.catchTag("KeyNotFound", () => keyNotFound(ctx)))))

  const offsetOf = Effect.map(query("offset"), (raw) => (raw !== undefined && /^\d{1,6}$/.test(raw) ? Number(raw) : 0))

  const webhooksView = Effect.fnUntraced(function*(ctx: SignedIn, extra: { readonly alert?: string } = {}, status = 200) {
    const offset = yield* offsetOf
    const [webhook, list] = yield* Effect.all([
      webhooks.getConfig(ctx.principal),
      webhooks.listDeliveries(ctx.principal, LIST_LIMIT, offset)
    ], { concurrency: 2 })
    return yield* render(
      ctx,
      "webhooks",
      "Webhooks",
      webhooksPage({ config: webhook, deliveries: list.deliveries, csrf: ctx.session.csrfToken, date: ctx.date, page: { offset, limit: LIST_LIMIT } }),
      extra,
      status
    )
  })

  const webhooksShow = withSession((ctx) => webhooksView(ctx))

  const webhooksSave = withForm(Effect.fnUntraced(function*(ctx, form) {
    const url = field(form, "url")
    const enabled = field(form, "enabled") === "true"
    yield* webhooks.updateConfig(ctx.principal, { url: url.length === 0 ? null : url, enabled: url.length === 0 ? false : enabled })
    yield* audit(ctx, "webhook.update")
    return seeOther(doneAt("webhooks", "webhook-saved"))
  }, (effect, ctx) => effect.pipe(Effect.catchTag("InvalidWebhookConfig", (invalid) => webhooksView(ctx, { alert: `Not saved: ${invalid.reason}.` }, 400)))))

  const rotateSecret = withForm(Effect.fnUntraced(function*(ctx) {
    const updated = yield* webhooks.updateConfig(ctx.principal, { rotateSecret: true })
    yield* audit(ctx, "webhook.rotate_secret")
    return yield* render(ctx, "webhooks", "New signing secret", rotatedSecretPage(updated.secret))
  }, (effect, ctx) => effect.pipe(Effect.catchTag("InvalidWebhookConfig", (invalid) => webhooksView(ctx, { alert: `Not rotated: ${invalid.reason}.` }, 400)))))

  const sendTest = withForm(Effect.fnUntraced(function*(ctx) {
    const sent = yield* webhooks.sendTest(ctx.principal)
    yield* audit(ctx, "webhook.test", sent.id)
    return seeOther(doneAt("webhooks", "test-sent"))
  }, (effect, ctx) => effect.pipe(Effect.catchTag("WebhookNotReady", () =>
      Effect.flatMap(webhooks.getConfig(ctx.principal), (webhook) =>
        webhooksView(ctx, { alert: webhook.url === null ? "Set an endpoint URL before sending a test." : "Enable the webhook before sending a test." }, 409))
    ))))

  const resend = withForm(Effect.fnUntraced(function*(ctx) {
    const id = yield* param("id")
    yield* webhooks.resend(ctx.principal, id)
    yield* audit(ctx, "delivery.resend", id)
    return seeOther(doneAt("webhooks", "delivery-resent"))
  }, (effect, ctx) => effect.pipe(Effect.catchTags({
      DeliveryNotFound: () => webhooksView(ctx, { alert: "There is no such delivery." }, 404),
      DeliveryInProgress: () => webhooksView(ctx, { alert: "That delivery is still being attempted; resend it once it has failed or been delivered." }, 409)
    }))))

  const statusOf = Effect.map(query("status"), (raw) => (Schema.is(OperationStatus)(raw) ? raw : undefined))

  const operationsList = withSession(Effect.fnUntraced(function*(ctx) {
    const status = yield* statusOf
    const before = Option.filter(Option.fromNullishOr(yield* query("before")), (id) => id.length <= 64)
    const list = yield* operations.recent(ctx.principal.accountId, ctx.principal.environment, status, LIST_LIMIT, before)
    return yield* render(ctx, "operations", "Operations", operationsPage({ operations: list, status, limit: LIST_LIMIT, date: ctx.date }))
  })
  )

  const operationDetail = withSession(Effect.fnUntraced(function*(ctx) {
    const id = yield* param("id")
    const [found] = yield* operations.findManyWithModules([id])
    if (found === undefined || found.row.accountId !== ctx.principal.accountId || found.row.environment !== ctx.principal.environment) {
      return yield* render(ctx, "operations", "Operation not found", operationsPage({ operations: [], status: undefined, limit: LIST_LIMIT, date: ctx.date }), { alert: "There is no such operation in this environment." }, 404)
    }
    return yield* render(ctx, "operations", `Operation ${id}`, operationPage({ row: found.row, modules: found.modules, date: ctx.date }))
  })
  )

  const activity = withSession((ctx) =>
    Effect.flatMap(repo.recentAudit(ctx.principal.accountId, ctx.principal.environment, 100), (entries) =>
      render(ctx, "activity", "Activity", activityPage({ entries, date: ctx.date })))
  )

  const asset = Effect.gen(function*() {
    const found = assets.get(yield* param("name"))
    if (found === undefined) return yield* notFound
    return HttpServerResponse.uint8Array(found.body, {
      contentType: found.contentType,
      headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
    })
  })

  const notFound = Effect.map(Effect.service(CurrentEnvironment), (environment) => htmlResponse(notFoundPage(environment), 404))

  return {
    overview,
    keys,
    createKey,
    renameKey,
    revokeKey,
    webhooks: webhooksShow,
    saveWebhook: webhooksSave,
    rotateSecret,
    sendTest,
    resend,
    operations: operationsList,
    operation: operationDetail,
    activity,
    asset,
    notFound
  }
})
