import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../accounts/Domain.js"
import { Api } from "../Api.js"
import * as Errors from "../platform/Errors.js"
import { Webhooks } from "./Webhooks.js"

const DEFAULT_LIMIT = 25

export const WebhooksHttpLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return handlers
      .handle("getWebhookConfig", () => Effect.flatMap(CurrentPrincipal, webhooks.getConfig))
      .handle("updateWebhookConfig", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => webhooks.updateConfig(principal, payload)).pipe(
          Effect.catchTag("InvalidWebhookConfig", (e) => Errors.invalidRequest(`Invalid webhook configuration: ${e.reason}`))
        ))
      .handle("listWebhookDeliveries", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          webhooks.listDeliveries(principal, urlParams.limit ?? DEFAULT_LIMIT, urlParams.offset ?? 0)))
      .handle("sendWebhookTest", () =>
        Effect.flatMap(CurrentPrincipal, webhooks.sendTest).pipe(
          Effect.catchTag("WebhookNotReady", (e) => Errors.invalidRequest(e.reason))
        ))
  }))
