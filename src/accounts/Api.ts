/**
 * Contract of the account endpoints: status and plans.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { Usage } from "../metering/Api.js"
import { DateTimeUtc, NonNegativeInt } from "../platform/contract/Schemas.js"
import { allowanceFields, StandardPlanId } from "../principal/Domain.js"

export const KeyEntry = Schema.Struct({
  id: Schema.String,
  prefix: Schema.String,
  last4: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literals(["active", "revoked"]),
  lastUsedAt: Schema.NullOr(DateTimeUtc),
  createdAt: DateTimeUtc
}).annotate({ identifier: "KeyEntry" })

export const StatusResponse = Schema.Struct({
  success: Schema.Literal(true),
  data: Schema.Struct({
    owner: Schema.String,
    plan: Schema.String,
    usage: Usage,
    keys: Schema.Array(KeyEntry)
  })
}).annotate({ identifier: "Status" })

export const Plan = Schema.Struct({
  id: StandardPlanId,
  currency: Schema.Literal("ARS"),
  interval: Schema.Literal("month"),
  priceArs: NonNegativeInt,
  ...allowanceFields,
  timezone: Schema.String
}).annotate({ identifier: "Plan" })

export const PlansResponse = Schema.Struct({ plans: Schema.Array(Plan) }).annotate({ identifier: "Plans" })

export class AccountsApi extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("getStatus", "/v2/status", { success: StatusResponse, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Account status")
      .annotate(
        OpenApi.Description,
        "Owner, plan, usage of this environment and the environment's API keys (never their secrets). Consumes only RPM."
      )
  )
  .add(
    HttpApiEndpoint.get("listPlans", "/v2/plans", { success: PlansResponse, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Plans")
      .annotate(
        OpenApi.Description,
        "The standard plans with their monthly price and allowances; `timezone` is the account timezone in which monthly and daily allowances reset. Consumes only RPM."
      )
  )
  .annotate(OpenApi.Title, "Account")
{}
