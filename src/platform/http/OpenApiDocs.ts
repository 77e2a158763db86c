/**
 * Touch-ups of the generated OpenAPI document. The library documents its own decode-error body on
 * every 400, but the request pipeline always answers with our error body instead; v1's errors
 * come in v1's envelope (`V1Error`); and the API key's scheme is declared here, not by a middleware.
 */
type Json = Record<string, any>

const DECODE_ERROR_REF = "#/components/schemas/HttpApiDecodeError"
const V1_ERROR: Json = {
  type: "object",
  required: ["success", "error"],
  properties: { success: { type: "boolean", enum: [false] }, error: { $ref: "#/components/schemas/ErrorBody" } },
  additionalProperties: false,
  description: "v1's error envelope: the same error body as v2's, beside `success: false`"
}

/** Whether a path is one of the API's versions (/v1, /v2), whose requests carry a key. */
export const isVersioned = (path: string) => path.startsWith("/v2") || path.startsWith("/v1")

/**
 * Declares the security scheme `name` and requires it on the operations of the paths `covers`
 * picks (what an HttpApi security middleware would document, without the middleware).
 */
export const withSecurityScheme = (
  spec: Json,
  { name, scheme }: { readonly name: string; readonly scheme: Json },
  covers: (path: string) => boolean
): Json => {
  spec.components ??= {}
  spec.components.securitySchemes = { ...spec.components.securitySchemes, [name]: { ...scheme } }
  for (const [path, pathItem] of Object.entries<Json>(spec.paths ?? {})) {
    if (!covers(path)) continue
    for (const operation of Object.values<Json>(pathItem)) operation.security = [{ [name]: [] }]
  }
  return spec
}

export const stripDecodeErrors = (spec: Json): Json => {
  const schemas: Json = spec.components?.schemas ?? {}
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  for (const pathItem of Object.values<Json>(spec.paths ?? {})) {
    for (const operation of Object.values<Json>(pathItem)) {
      const responses: Json = operation?.responses ?? {}
      const badRequest = responses["400"]
      if (badRequest === undefined) continue
      badRequest.description = "Invalid request, plate, module or parameters"
      const media = badRequest.content?.["application/json"]
      const anyOf: Array<Json> | undefined = media?.schema?.anyOf
      if (anyOf === undefined) continue
      const kept = anyOf.filter((s) => s.$ref !== DECODE_ERROR_REF)
      media.schema = kept.length === 1 ? kept[0] : { anyOf: kept }
    }
  }
  schemas.V1Error = V1_ERROR
  for (const [path, pathItem] of Object.entries<Json>(spec.paths ?? {})) {
    if (!path.startsWith("/v1")) continue
    for (const operation of Object.values<Json>(pathItem)) {
      for (const [status, response] of Object.entries<Json>(operation?.responses ?? {})) {
        const media = response.content?.["application/json"]
        if (Number(status) >= 400 && media !== undefined) media.schema = { $ref: "#/components/schemas/V1Error" }
      }
    }
  }
  return spec
}
