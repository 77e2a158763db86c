/**
 * The whole HTTP contract: every group, and the OpenAPI metadata, the `x-api-key` scheme of every
 * /v1 and /v2 operation with it. Each /v1 and /v2 endpoint declares the API-wide errors
 * (`Errors.API_ERRORS`), which the request pipeline raises before routing. Shared with typed clients.
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { AccountsApi } from "./accounts/Api.js"
import { MeteringApi } from "./metering/Api.js"
import { OperationsApi } from "./operations/Api.js"
import { HealthApi } from "./platform/http/HealthApi.js"
import { VehiclesApi } from "./vehicles/Api.js"
import { V1Api } from "./v1/Api.js"
import { WebhooksApi } from "./webhooks/Api.js"
import { isVersioned, stripDecodeErrors, withSecurityScheme } from "./platform/http/OpenApiDocs.js"
import { builtApart } from "./platform/http/HttpGroup.js"
import { API_KEY_SCHEME } from "./principal/Security.js"

export const Api = HttpApi.make("vehicle-data-api")
  .add(VehiclesApi, OperationsApi, WebhooksApi, AccountsApi, MeteringApi, HealthApi, V1Api)
  .annotateMerge(OpenApi.annotations({
    title: "Vehicle Data API",
    version: "2.0.0",
    description:
      "Vehicle information for Argentine license plates, asynchronous record lookups and account metering. Production and sandbox share these paths on separate base addresses.",
    transform: (spec) => withSecurityScheme(stripDecodeErrors(spec), API_KEY_SCHEME, isVersioned)
  }))

/** A group of the API's handlers, made by an effect that takes their services: see `builtApart`. */
export const apiGroup = builtApart
