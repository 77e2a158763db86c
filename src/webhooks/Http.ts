import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { currentPrincipal } from "../principal/Security.js"
import { Api, apiGroup } from "../Api.js"
import * as Errors from "../platform/http/Errors.js"
import { Webhooks } from "./Webhooks.js"

const DEFAULT_LIMIT = 25

export const WebhooksHttpLive = apiGroup(
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    return HttpApiBuilder.group(Api, "webhooks", (handlers) =>
      handlers
        .handle("getWebhookConfig", () => Effect.flatMap(currentPrincipal, webhooks.getConfig))
        .handle("updateWebhookConfig", ({ payload }) =>
          Effect.flatMap(currentPrincipal, (principal) => webhooks.updateConfig(principal, payload)).pipe(
            Effect.catchTag("InvalidWebhookConfig", (e) => Errors.invalidRequest(`Invalid webhook configuration: ${e.reason}`))
          ))
        .handle("listWebhookDeliveries", ({ query }) =>
          Effect.flatMap(currentPrincipal, (principal) =>
            webhooks.listDeliveries(principal, query.limit ?? DEFAULT_LIMIT, query.offset ?? 0)))
        .handle("sendWebhookTest", () =>
          Effect.flatMap(currentPrincipal, webhooks.sendTest).pipe(
            Effect.catchTag("WebhookNotReady", (e) => Errors.invalidRequest(e.reason))
          )))
  }))
