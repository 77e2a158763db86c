/**
 * The whole HTTP contract: every group, the API-wide errors (raised by the request pipeline before
 * routing, so every endpoint may answer them) and the OpenAPI metadata. Shared with typed clients.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AccountsApi } from "./accounts/Api.js"
import { MeteringApi } from "./metering/Api.js"
import { OperationsApi } from "./operations/Api.js"
import * as Errors from "./platform/Errors.js"
import { HealthApi } from "./platform/HealthApi.js"
import { VehiclesApi } from "./vehicles/Api.js"
import { V1Api } from "./v1/Api.js"
import { WebhooksApi } from "./webhooks/Api.js"
import { stripDecodeErrors } from "./platform/OpenApiDocs.js"

export class Api extends HttpApi.make("vehicle-data-api")
  .add(VehiclesApi)
  .add(OperationsApi)
  .add(WebhooksApi)
  .add(AccountsApi)
  .add(MeteringApi)
  .add(HealthApi)
  .add(V1Api)
  .addError(Errors.BadRequestJson)
  .addError(Errors.UnauthorizedJson)
  .addError(Errors.ForbiddenJson)
  .addError(Errors.NotFoundJson)
  .addError(Errors.TooManyRequestsJson)
  .addError(Errors.InternalErrorJson)
  .addError(Errors.UnavailableJson)
  .annotateContext(OpenApi.annotations({
    title: "Vehicle Data API",
    version: "2.0.0",
    description:
      "Vehicle information for Argentine license plates, asynchronous record lookups and account metering. Production and sandbox share these paths on separate base addresses.",
    transform: stripDecodeErrors
  }))
{}
