/**
 * Touch-ups of the generated OpenAPI document. The library documents its own decode-error body on
 * every 400, but the request pipeline always answers with our error body instead; and the probes
 * outside /v2 take no key, so they answer none of the key, plan or quota errors.
 */
type Json = Record<string, any>

const DECODE_ERROR_REF = "#/components/schemas/HttpApiDecodeError"
const UNAUTHENTICATED_ONLY = ["401", "403", "429"]

export const stripDecodeErrors = (spec: Json): Json => {
  const schemas: Json = spec.components?.schemas ?? {}
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  for (const [path, pathItem] of Object.entries<Json>(spec.paths ?? {})) {
    for (const operation of Object.values<Json>(pathItem)) {
      const responses: Json = operation?.responses ?? {}
      if (!path.startsWith("/v2")) for (const status of UNAUTHENTICATED_ONLY) delete responses[status]
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
  return spec
}
