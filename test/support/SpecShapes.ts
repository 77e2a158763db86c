/**
 * The spec's response shapes, written down independently of the service's own schemas, so a test
 * can check a response against the contract itself: every required field, the right types, and no
 * extra properties anywhere.
 */
import { expect } from "vitest"

export type Shape = (value: unknown, path: string) => Array<string>

const fail = (path: string, expected: string, value: unknown) => [`${path || "$"}: expected ${expected}, got ${JSON.stringify(value)}`]

export const string: Shape = (v, p) => (typeof v === "string" ? [] : fail(p, "string", v))
export const boolean: Shape = (v, p) => (typeof v === "boolean" ? [] : fail(p, "boolean", v))
export const number: Shape = (v, p) => (typeof v === "number" && Number.isFinite(v) ? [] : fail(p, "number", v))
export const nonNegativeInt: Shape = (v, p) =>
  Number.isInteger(v) && (v as number) >= 0 ? [] : fail(p, "integer >= 0", v)
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
export const dateTime: Shape = (v, p) =>
  typeof v === "string" && DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)) ? [] : fail(p, "date-time", v)
export const literal = (...values: ReadonlyArray<unknown>): Shape => (v, p) =>
  values.includes(v) ? [] : fail(p, `one of ${values.join(", ")}`, v)
export const nullable = (shape: Shape): Shape => (v, p) => (v === null ? [] : shape(v, p))
export const array = (shape: Shape): Shape => (v, p) =>
  Array.isArray(v) ? v.flatMap((item, i) => shape(item, `${p}[${i}]`)) : fail(p, "array", v)
export const record = (keys: ReadonlyArray<string>, shape: Shape): Shape => (v, p) => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return fail(p, "object", v)
  return Object.entries(v).flatMap(([k, item]) =>
    keys.includes(k) ? shape(item, `${p}.${k}`) : [`${p}.${k}: unexpected key`]
  )
}
export const object = (required: Record<string, Shape>, optional: Record<string, Shape> = {}): Shape => (v, p) => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return fail(p, "object", v)
  const problems: Array<string> = []
  for (const [key, shape] of Object.entries(required)) {
    if (!(key in v)) problems.push(`${p}.${key}: missing`)
    else problems.push(...shape((v as Record<string, unknown>)[key], `${p}.${key}`))
  }
  for (const [key, value] of Object.entries(v)) {
    if (key in required) continue
    const shape = optional[key]
    if (shape === undefined) problems.push(`${p}.${key}: not in the contract`)
    else problems.push(...shape(value, `${p}.${key}`))
  }
  return problems
}

export const expectShape = (value: unknown, shape: Shape) => expect(shape(value, "")).toEqual([])

// -- the contract ------------------------------------------------------------------------------

const MODULE = literal("fines", "vtv", "tax_debt", "gnc")
const LIMIT = nullable(nonNegativeInt)

export const ErrorResponse = (code: string, withDetails = false): Shape =>
  object({
    error: object(
      {
        code: literal(code),
        message: string,
        requestId: string,
        retryable: boolean,
        ...(withDetails
          ? {
            details: object({
              meter: literal("plate_queries", "module_queries", "unique_plates", "requests"),
              limit: LIMIT,
              used: nonNegativeInt,
              resetAt: dateTime
            })
          }
          : {})
      }
    )
  })

const MeterUsage = object({ limit: LIMIT, used: nonNegativeInt, remaining: LIMIT, startsAt: dateTime, endsAt: dateTime })
const VersionUsage = object({ plateQueries: nonNegativeInt, moduleQueries: nonNegativeInt, reports: nonNegativeInt })

export const Entitlements = object({
  plan: literal("free", "basic", "growth", "scale", "custom"),
  plateQueriesMonthly: LIMIT,
  moduleQueriesMonthly: LIMIT,
  uniquePlatesDaily: LIMIT,
  requestsPerMinute: LIMIT,
  enabledModules: array(MODULE),
  timezone: string
})

export const Usage = object(
  {
    environment: literal("production", "sandbox"),
    apiVersion: literal("v2"),
    meteringPolicyVersion: string,
    entitlements: Entitlements,
    timezone: string,
    plateQueries: MeterUsage,
    moduleQueries: MeterUsage,
    uniquePlates: MeterUsage,
    requests: MeterUsage,
    byVersion: object({ v2: VersionUsage }, { v1: VersionUsage })
  },
  {
    legacyOpeningBalance: object({ plateQueries: nonNegativeInt, source: literal("owner_quotas.monthly_used") }),
    modules: record(
      ["fines", "vtv", "tax_debt", "gnc"],
      object({
        used: nonNegativeInt,
        included: nonNegativeInt,
        overage: nonNegativeInt,
        unitPriceCents: nonNegativeInt,
        currency: literal("ARS", "USD")
      })
    )
  }
)

export const UsageResponse = object({ success: literal(true), data: Usage })

export const KeyEntry = object({
  id: string,
  prefix: string,
  last4: string,
  name: nullable(string),
  status: string,
  lastUsedAt: nullable(dateTime),
  createdAt: dateTime
})

export const StatusResponse = object({
  success: literal(true),
  data: object({ owner: string, plan: string, usage: Usage, keys: array(KeyEntry) })
})

export const PlansResponse = object({
  plans: array(object({
    id: literal("free", "basic", "growth", "scale"),
    currency: literal("ARS"),
    interval: literal("month"),
    priceArs: nonNegativeInt,
    plateQueriesMonthly: LIMIT,
    moduleQueriesMonthly: LIMIT,
    uniquePlatesDaily: LIMIT,
    requestsPerMinute: LIMIT,
    enabledModules: array(MODULE),
    timezone: string
  }))
})

const LOOKUP_STATUS = literal("exact_match", "candidates", "no_match", "brand_not_found", "family_not_found")
const SPEC_CATEGORIES = array(object({ key: string, label: string, fields: array(object({ label: string, value: string })) }))

export const CodiaLookup = object({
  status: LOOKUP_STATUS,
  requestedYear: nullable(nonNegativeInt),
  bestCandidate: nullable(object({
    codia: string,
    brandName: string,
    familyName: nullable(string),
    versionName: string,
    year: nonNegativeInt
  }))
})

export const SheetLookup = object(
  {
    market: literal("AR"),
    status: LOOKUP_STATUS,
    requestedYear: nullable(nonNegativeInt),
    bestCandidate: nullable(object({ brandName: string, familyName: nullable(string), versionName: string, year: nonNegativeInt })),
    specification: nullable(object({
      market: literal("AR"),
      make: string,
      model: string,
      version: string,
      year: nonNegativeInt,
      categories: SPEC_CATEGORIES
    })),
    diagnostics: object({ reason: string }, {
      code: literal("INVALID_YEAR", "BRAND_NOT_COVERED", "CATALOG_UNAVAILABLE", "YEAR_NOT_AVAILABLE", "ATTRIBUTE_CONFLICT")
    })
  },
  {
    commonSpecification: object({ market: literal("AR"), make: string, model: string, year: nonNegativeInt, categories: SPEC_CATEGORIES })
  }
)

export const Classification = object({
  vehicleType: nullable(string),
  bodyType: nullable(string),
  vehicleCategory: literal("auto", "camioneta", "utilitario", "camion", "moto", "otro", "unknown"),
  confidence: literal("high", "medium", "low", "unavailable"),
  approximateMatch: nullable(boolean),
  description: nullable(string)
})

const anyObject: Shape = (v, p) => (typeof v === "object" && v !== null && !Array.isArray(v) ? [] : fail(p, "object", v))

export const VehicleData = object(
  {
    plate: string,
    make: string,
    model: string,
    year: nullable(nonNegativeInt),
    firstRegistered: nullable(string),
    totalOwners: nonNegativeInt,
    currentOwners: nonNegativeInt,
    currentLocation: object({ city: nullable(string), province: nullable(string) }),
    locations: array(string),
    sourceDate: string,
    modelImage: nullable(string)
  },
  {
    codia: nullable(CodiaLookup),
    sheet: nullable(SheetLookup),
    classification: Classification,
    tires: array(object({ size: string, confidence: literal("high", "medium", "low") })),
    vehicleType: string,
    sandbox: literal(true),
    scenario: string,
    debug: anyObject
  }
)

export const VehicleResponse = object({ success: literal(true), found: boolean, data: nullable(VehicleData) })

const STATUS = literal("queued", "processing", "completed", "partial", "failed")
const TEXT = nullable(string)
const AMOUNT = nullable(number)

export const FinesData = object({
  total: nonNegativeInt,
  amountTotal: number,
  currency: literal("ARS"),
  items: array(object({
    date: TEXT, amount: AMOUNT, status: string, authority: TEXT, reference: TEXT, description: TEXT,
    jurisdiction: string, dueDate: TEXT, discountedAmount: AMOUNT
  }))
})

export const VtvData = object({
  total: nonNegativeInt,
  items: array(object({
    type: string, date: TEXT, sticker: TEXT, inspectionType: literal("inspection", "reinspection", "unknown"),
    detail: TEXT, result: literal("approved", "conditional", "rejected", "expired", "unknown"), certificate: TEXT,
    jurisdiction: string, facility: TEXT, dueDate: TEXT
  }))
})

export const TaxDebtData = object({
  total: nonNegativeInt,
  amountTotal: number,
  currency: literal("ARS"),
  items: array(object({
    period: TEXT, description: TEXT, dueDate: TEXT, amount: AMOUNT, updatedAmount: AMOUNT, status: string, jurisdiction: string
  }))
})

export const GncData = object({
  total: nonNegativeInt,
  items: array(object({
    operationDate: TEXT, workshop: TEXT, workshopTaxId: TEXT, workshopCode: TEXT, sticker: TEXT, previousSticker: TEXT
  }))
})

const moduleResult = (data: Shape) =>
  object(
    {
      status: STATUS,
      data: nullable(data),
      error: nullable(object({ code: literal("module_unavailable"), message: string, retryable: boolean }))
    },
    { warnings: array(object({ code: literal("reduced_coverage"), message: string })) }
  )

export const ModulesOperation = object({
  id: string,
  kind: literal("modules"),
  status: STATUS,
  plate: string,
  createdAt: dateTime,
  updatedAt: dateTime,
  modules: object({}, {
    fines: moduleResult(FinesData),
    vtv: moduleResult(VtvData),
    tax_debt: moduleResult(TaxDebtData),
    gnc: moduleResult(GncData)
  })
})

const vehicleSearchResult: Shape = (v, p) => {
  if (v === null) return []
  if (typeof v === "object" && v !== null && "error" in v) {
    return object({ error: object({ code: string, message: string, retryable: boolean }) })(v, p)
  }
  return VehicleResponse(v, p)
}

export const VehicleOperation = object({
  id: string,
  kind: literal("vehicle"),
  status: STATUS,
  plate: string,
  createdAt: dateTime,
  updatedAt: dateTime,
  result: vehicleSearchResult
})

// -- webhooks ----------------------------------------------------------------------------------

export const WebhookConfig = object({ url: nullable(string), enabled: boolean, secret: string })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const uuid: Shape = (v, p) => (typeof v === "string" && UUID.test(v) ? [] : fail(p, "uuid", v))

const operationOrTest: Shape = (v, p) => {
  if (typeof v === "object" && v !== null && "kind" in v) {
    return (v as { kind: unknown }).kind === "vehicle" ? VehicleOperation(v, p) : ModulesOperation(v, p)
  }
  return object({ message: string })(v, p)
}

export const WebhookEvent = object({
  id: string,
  type: literal("modules.completed", "modules.failed", "vehicle.completed", "vehicle.failed", "webhook.test"),
  apiVersion: literal("v2"),
  createdAt: dateTime,
  data: operationOrTest
})

/** v1's events (DESIGN §11): flat, the event id and name beside the resource's fields. */
const V1Event = object(
  { eventId: string, event: literal("modules.completed", "modules.failed", "report.completed", "report.failed"), id: string, status: STATUS, plate: string, createdAt: dateTime, updatedAt: dateTime, completedAt: nullable(dateTime) },
  { modules: anyObject, report: anyObject }
)

const delivery = (apiVersion: "v1" | "v2") =>
  object({
    id: uuid,
    event: string,
    apiVersion: literal(apiVersion),
    status: literal("pending", "processed", "failed"),
    attempts: nonNegativeInt,
    responseStatus: nullable(number),
    nextAttemptAt: dateTime,
    createdAt: dateTime,
    payload: apiVersion === "v2" ? WebhookEvent : V1Event
  })

export const DeliveriesList = object({
  deliveries: array((v, p) =>
    (typeof v === "object" && v !== null && (v as { apiVersion?: unknown }).apiVersion === "v1" ? delivery("v1") : delivery("v2"))(v, p)),
  limit: nonNegativeInt,
  offset: nonNegativeInt
})

export const TestDeliveryAccepted = object({ id: uuid, status: literal("pending") })
