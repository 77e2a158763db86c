import { OpenApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/Api.js"

const spec = OpenApi.fromApi(Api) as unknown as Record<string, any>

describe("OpenAPI document", () => {
  it("documents every endpoint of the contract", () => {
    expect(spec.openapi).toBe("3.1.0")
    const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`)
    )
    expect(operations.sort()).toEqual([
      "GET /healthz",
      "GET /readyz",
      "GET /v1/status",
      "GET /v1/vehicles/basic",
      "GET /v1/vehicles/modules/{id}",
      "GET /v1/webhooks/config",
      "GET /v1/webhooks/deliveries",
      "PATCH /v1/webhooks/config",
      "POST /v1/reports",
      "GET /v1/reports/{id}",
      "POST /v1/vehicles/modules",
      "POST /v1/webhooks/test",
      "GET /v2/operations/{id}",
      "GET /v2/plans",
      "GET /v2/status",
      "GET /v2/usage",
      "GET /v2/vehicles/{plate}",
      "GET /v2/webhooks/config",
      "GET /v2/webhooks/deliveries",
      "PATCH /v2/webhooks/config",
      "POST /v2/vehicles/{plate}/modules",
      "POST /v2/webhooks/test"
    ].sort())
  })

  it("documents the test event's 202 and the deliveries' paging parameters", () => {
    expect(Object.keys(spec.paths["/v2/webhooks/test"].post.responses)).toContain("202")
    const parameters = spec.paths["/v2/webhooks/deliveries"].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)
    expect(parameters.sort()).toEqual(["query:limit", "query:offset"])
  })

  it("documents the 202 of every endpoint that accepts an operation, v1's too", () => {
    for (const [path, method] of [["/v2/vehicles/{plate}", "get"], ["/v2/vehicles/{plate}/modules", "post"], ["/v1/vehicles/modules", "post"], ["/v1/reports", "post"]] as const) {
      expect(Object.keys(spec.paths[path][method].responses), path).toEqual(expect.arrayContaining(["200", "202"]))
    }
    expect(spec.paths["/v1/reports"].post.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AcceptedV1Report" })
  })

  it("declares the x-api-key scheme on /v2 endpoints only", () => {
    expect(spec.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" })
    expect(spec.paths["/v2/usage"].get.security).toEqual([{ apiKey: [] }])
    expect(spec.paths["/healthz"].get.security ?? []).toEqual([])
    expect(Object.keys(spec.paths["/healthz"].get.responses)).not.toContain("401")
  })

  it("describes errors with the one error body, never the library's decode error", () => {
    const text = JSON.stringify(spec)
    expect(text).not.toContain("HttpApiDecodeError")
    const responses = spec.paths["/v2/status"].get.responses
    expect(Object.keys(responses).sort()).toEqual(["200", "400", "401", "403", "404", "429", "500", "503"])
    expect(responses["400"].description).toBe("Invalid request, plate, module or parameters")
    const body = spec.components.schemas.ErrorBody
    expect(Object.keys(body.properties).sort()).toEqual(["code", "details", "message", "requestId", "retryable"])
    expect(body.required.sort()).toEqual(["code", "message", "requestId", "retryable"])
  })

  it("puts v1 under its own tag, its errors in v1's envelope", () => {
    const operation = spec.paths["/v1/status"].get
    expect(operation.tags).toEqual(["v1 compatibility"])
    expect(operation.security).toEqual([{ apiKey: [] }])
    for (const status of ["400", "401", "429", "503"]) {
      expect(operation.responses[status].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/V1Error" })
    }
    expect(spec.paths["/v2/status"].get.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Unauthorized" })
    expect(spec.components.schemas.V1Error.properties.error).toEqual({ $ref: "#/components/schemas/ErrorBody" })
  })

  it("documents the Retry-After header of every 429 and 503 of /v1 and /v2", () => {
    let checked = 0
    for (const [path, item] of Object.entries<Record<string, any>>(spec.paths)) {
      if (!path.startsWith("/v1") && !path.startsWith("/v2")) continue
      for (const operation of Object.values<any>(item)) {
        for (const status of ["429", "503"]) {
          expect(Object.keys(operation.responses[status].headers ?? {}), `${path} ${status}`).toEqual(["retry-after"])
          checked++
        }
      }
    }
    expect(checked).toBe(2 * 20)
  })

  it("documents the probes' own answers only: they take no key and answer none of the API's errors", () => {
    expect(Object.keys(spec.paths["/healthz"].get.responses)).toEqual(["200"])
    expect(Object.keys(spec.paths["/readyz"].get.responses).sort()).toEqual(["200", "503"])
    expect(spec.paths["/readyz"].get.responses["503"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Readiness" })
  })

  it("describes date-times as RFC 3339 strings", () => {
    expect(spec.components.schemas.DateTime).toMatchObject({ type: "string", format: "date-time" })
  })
})
