/**
 * Contract of the usage endpoint and the Usage object (also embedded in the status object).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { API_ERRORS } from "../platform/http/Errors.js"
import { Entitlements } from "../principal/Domain.js"
import { Environment } from "../platform/http/RequestContext.js"
import { DateTimeUtc, Limit, NonNegativeInt } from "../platform/contract/Schemas.js"

export const MeterUsage = Schema.Struct({
  limit: Limit,
  used: NonNegativeInt,
  remaining: Limit,
  startsAt: DateTimeUtc,
  endsAt: DateTimeUtc
}).annotate({ identifier: "MeterUsage" })
export type MeterUsage = typeof MeterUsage.Type

export const VersionUsage = Schema.Struct({
  plateQueries: NonNegativeInt,
  moduleQueries: NonNegativeInt,
  reports: NonNegativeInt
}).annotate({ identifier: "VersionUsage" })

export const ModuleUsage = Schema.Struct({
  used: NonNegativeInt,
  included: NonNegativeInt,
  overage: NonNegativeInt,
  unitPriceCents: NonNegativeInt,
  currency: Schema.Literals(["ARS", "USD"])
}).annotate({ identifier: "ModuleUsage" })
export type ModuleUsage = typeof ModuleUsage.Type

export const Usage = Schema.Struct({
  environment: Environment,
  apiVersion: Schema.Literal("v2"),
  meteringPolicyVersion: Schema.String,
  entitlements: Entitlements,
  timezone: Schema.String,
  plateQueries: MeterUsage,
  moduleQueries: MeterUsage,
  uniquePlates: MeterUsage,
  requests: MeterUsage,
  byVersion: Schema.Struct({ v1: Schema.optional(VersionUsage), v2: VersionUsage }),
  legacyOpeningBalance: Schema.optional(Schema.Struct({
    plateQueries: NonNegativeInt,
    source: Schema.Literal("owner_quotas.monthly_used")
  })),
  modules: Schema.optional(Schema.Struct({
    fines: Schema.optional(ModuleUsage),
    vtv: Schema.optional(ModuleUsage),
    tax_debt: Schema.optional(ModuleUsage),
    gnc: Schema.optional(ModuleUsage)
  }))
}).annotate({ identifier: "Usage" })
export type Usage = typeof Usage.Type

export const UsageResponse = Schema.Struct({
  success: Schema.Literal(true),
  data: Usage
}).annotate({ identifier: "UsageResponse" })

export class MeteringApi extends HttpApiGroup.make("metering")
  .add(
    HttpApiEndpoint.get("getUsage", "/v2/usage", { success: UsageResponse, error: API_ERRORS })
      .annotate(OpenApi.Summary, "Usage of the current periods")
      .annotate(
        OpenApi.Description,
        "Allowances and consumption of the account in this environment: plate and module queries this month, unique plates today, requests this minute (all in the account timezone), split by API version. Consumes only RPM."
      )
  )
  .annotate(OpenApi.Title, "Usage")
{}
