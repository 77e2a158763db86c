/**
 * Touch-ups of the generated OpenAPI document: the library documents its own decode-error body on
 * every 400, but the request pipeline always answers with our error body instead.
 */
type Json = Record<string, any>

export const stripDecodeErrors = (spec: Json): Json => {
  const schemas: Json = spec.components?.schemas ?? {}
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  for (const pathItem of Object.values<Json>(spec.paths ?? {})) {
    for (const operation of Object.values<Json>(pathItem)) {
      const responses: Json = operation?.responses ?? {}
      for (const response of Object.values<Json>(responses)) {
        const media = response?.content?.["application/json"]
        const anyOf: Array<Json> | undefined = media?.schema?.anyOf
        if (anyOf === undefined) continue
        const kept = anyOf.filter((s) => s.$ref !== "#/components/schemas/HttpApiDecodeError")
        media.schema = kept.length === 1 ? kept[0] : { anyOf: kept }
      }
    }
  }
  return spec
}
