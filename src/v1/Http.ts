/**
 * The v1 handlers: each one calls the v2 services (vehicle query, operations, account status,
 * webhooks) with `v1` as the version, and reshapes the answer.
 */
import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { currentPrincipal } from "../principal/Security.js"
import { AccountStatus } from "../accounts/Status.js"
import { Api, apiGroup } from "../Api.js"
import { type ModulesOperation, operationNotFoundMessage } from "../operations/Api.js"
import { pollHint, refuseModulesRequest } from "../operations/Http.js"
import { Operations } from "../operations/Operations.js"
import * as Errors from "../platform/http/Errors.js"
import { preEncodedPerObject } from "../platform/http/PreEncoded.js"
import type { OperationWithModules } from "../operations/Repo.js"
import { refuseVehicleQuery } from "../vehicles/Http.js"
import { VehicleQuery } from "../vehicles/VehicleQuery.js"
import type { Delivery } from "../webhooks/Api.js"
import type { StoredConfig } from "../webhooks/Repo.js"
import { v1ModulesFields } from "./Events.js"
import { Webhooks } from "../webhooks/Webhooks.js"
import { type V1ModulesOperation, V1ReportResponse } from "./Api.js"
import { toV1Report } from "../reports/Report.js"
import { toV1Status } from "./Status.js"

export const toV1ModulesOperation = (operation: ModulesOperation): V1ModulesOperation => v1ModulesFields(operation)

const toV1Config = (accountId: string, config: StoredConfig) => ({
  owner_ref: accountId,
  url: config.url,
  secret: config.secret,
  enabled: config.enabled,
  updated_at: config.updatedAt
})

const toV1Delivery = (delivery: Delivery) => ({
  id: delivery.id,
  event_type: delivery.event,
  api_version: delivery.apiVersion,
  status: delivery.status,
  attempts: delivery.attempts,
  response_status: delivery.responseStatus,
  next_attempt_at: delivery.nextAttemptAt,
  created_at: delivery.createdAt,
  payload: delivery.payload
})

/** 202 for a new v1 operation or report, with where to poll it. */
const acceptedAt = (location: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeader(HttpServerResponse.setStatus(response, 202), "location", location)))

const DEFAULT_LIMIT = 25

export const V1HttpLive = apiGroup(
  Effect.gen(function*() {
    const query = yield* VehicleQuery
    const operations = yield* Operations
    const status = yield* AccountStatus
    const webhooks = yield* Webhooks
    // a report's polls that share one read share its encoded answer
    const reportAnswer = preEncodedPerObject(V1ReportResponse, ({ modules, row }: OperationWithModules) => ({
      success: true as const,
      data: toV1Report(row, modules)
    }))
    return HttpApiBuilder.group(Api, "v1", (handlers) =>
      handlers
        .handle("v1GetBasicVehicle", Effect.fnUntraced(function*({ query: queryParams }) {
          const principal = yield* currentPrincipal
          const outcome = yield* query.run(principal, queryParams.plate ?? "", {}, "v1")
          if (outcome._tag !== "Answered") return yield* Effect.die(new Error("a v1 query never searches in the background"))
          return outcome.response
        }, refuseVehicleQuery))
        .handle("v1CreateModulesOperation", Effect.fnUntraced(function*({ payload }) {
          const principal = yield* currentPrincipal
          const { created, operation } = yield* operations.createModules(principal, payload.plate, payload.modules, "v1")
          if (created) yield* acceptedAt(`/v1/vehicles/modules/${operation.id}`)
          return { success: true as const, data: toV1ModulesOperation(operation) }
        }, refuseModulesRequest))
        .handle("v1GetModulesOperation", ({ params }) =>
          Effect.flatMap(currentPrincipal, (principal) => operations.getModules(principal, params.id, "v1")).pipe(
            Effect.tap((operation) => pollHint(operation.status)),
            Effect.map((operation) => ({ success: true as const, data: toV1ModulesOperation(operation) })),
            Effect.catchTag("OperationNotFound", (e) => Errors.notFound("operation_not_found", operationNotFoundMessage(e.id)))
          ))
        .handle("v1CreateReport", Effect.fnUntraced(function*({ payload }) {
          const principal = yield* currentPrincipal
          const { created, modules, row } = yield* operations.createReport(principal, payload.plate)
          if (created) yield* acceptedAt(`/v1/reports/${row.id}`)
          return { success: true as const, data: toV1Report(row, modules) }
        }, refuseModulesRequest))
        .handle("v1GetReport", ({ params }) =>
          Effect.flatMap(currentPrincipal, (principal) => operations.getReport(principal, params.id)).pipe(
            Effect.tap(({ row }) => pollHint(row.status)),
            Effect.map(reportAnswer),
            Effect.catchTag("OperationNotFound", (e) => Errors.notFound("operation_not_found", `No report ${e.id}`))
          ))
        .handle("v1GetStatus", () =>
          Effect.map(Effect.flatMap(currentPrincipal, status.read), (data) => ({ success: true as const, data: toV1Status(data) })))
        .handle("v1GetWebhookConfig", Effect.fnUntraced(function*() {
          const principal = yield* currentPrincipal
          return { success: true as const, data: toV1Config(principal.accountId, yield* webhooks.getConfig(principal)) }
        }))
        .handle("v1UpdateWebhookConfig", Effect.fnUntraced(function*({ payload }) {
          const principal = yield* currentPrincipal
          const config = yield* webhooks.updateConfig(principal, {
            ...(payload.url !== undefined ? { url: payload.url } : {}),
            ...(payload.enabled !== undefined ? { enabled: payload.enabled } : {}),
            ...(payload.rotate_secret !== undefined ? { rotateSecret: payload.rotate_secret } : {})
          })
          return { success: true as const, data: toV1Config(principal.accountId, config) }
        }, Effect.catchTag("InvalidWebhookConfig", (e) => Errors.invalidRequest(`Invalid webhook configuration: ${e.reason}`))))
        .handle("v1ListWebhookDeliveries", Effect.fnUntraced(function*({ query: queryParams }) {
          const principal = yield* currentPrincipal
          const list = yield* webhooks.listDeliveries(principal, queryParams.limit ?? DEFAULT_LIMIT, queryParams.offset ?? 0)
          return { success: true as const, data: { ...list, deliveries: list.deliveries.map(toV1Delivery) } }
        }))
        .handle("v1SendWebhookTest", () =>
          Effect.flatMap(currentPrincipal, webhooks.sendV1Test).pipe(
            Effect.map((delivery) => ({
              success: true as const,
              data: { id: delivery.id, event_type: "report.completed" as const, is_test: true as const, status: "pending" as const, payload: delivery.payload }
            })),
            Effect.catchTags({
              WebhookNotReady: (e) => Errors.invalidRequest(e.reason),
              PaidPlanRequired: () => Errors.forbidden("access_denied", "Test events need a paid or custom plan")
            })
          )))
  }))
