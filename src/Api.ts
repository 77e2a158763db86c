/**
 * The whole HTTP contract: every group, the API-wide errors (raised by the request pipeline before
 * routing, so every endpoint may answer them) and the OpenAPI metadata. Shared with typed clients.
 */
import { Layer } from "effect"
import { HttpApi, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { AccountsApi } from "./accounts/Api.js"
import { MeteringApi } from "./metering/Api.js"
import { OperationsApi } from "./operations/Api.js"
import * as Errors from "./platform/http/Errors.js"
import { HealthApi } from "./platform/http/HealthApi.js"
import { VehiclesApi } from "./vehicles/Api.js"
import { V1Api } from "./v1/Api.js"
import { WebhooksApi } from "./webhooks/Api.js"
import { stripDecodeErrors } from "./platform/http/OpenApiDocs.js"
import { builtApart, middlewareOf } from "./platform/http/HttpGroup.js"
import type { ApiKeyAuth } from "./principal/Security.js"

/**
 * The errors every endpoint may answer, in the contract's body: declared once for the whole API
 * through a middleware, so that each handler's failures are encoded (and documented) as the
 * contract says, a 429's or 503's with its `Retry-After`.
 */
export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("vda/ApiErrors", {
  error: [
    Errors.BadRequestJson,
    Errors.UnauthorizedJson,
    Errors.ForbiddenJson,
    Errors.NotFoundJson,
    Errors.TooManyRequestsJson,
    Errors.InternalErrorJson,
    Errors.UnavailableJson
  ]
}) {}

export const ApiErrorsLive = Layer.succeed(ApiErrors, (httpEffect) => Errors.withRetryAfter(httpEffect))

export const Api = HttpApi.make("vehicle-data-api")
  .add(VehiclesApi, OperationsApi, WebhooksApi, AccountsApi, MeteringApi, HealthApi, V1Api)
  .middleware(ApiErrors)
  .annotateMerge(OpenApi.annotations({
    title: "Vehicle Data API",
    version: "2.0.0",
    description:
      "Vehicle information for Argentine license plates, asynchronous record lookups and account metering. Production and sandbox share these paths on separate base addresses.",
    transform: stripDecodeErrors
  }))

/** A group of the API's handlers, made by an effect that takes their services: see `builtApart`. */
export const apiGroup = builtApart<ApiErrors | ApiKeyAuth>(middlewareOf(Api))
