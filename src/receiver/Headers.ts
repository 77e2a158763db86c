/**
 * A delivery's headers as a receiver has them: a fetch `Headers`, node's `IncomingHttpHeaders`, or
 * a plain record, whatever the case of its names.
 */

export type WebhookHeaders =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * The header `name` (lowercase): undefined when absent, and when it is there more than once, as
 * no one of its values can be told to be the one sent.
 */
export const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof headers.get === "function") return headers.get(name) ?? undefined
  const values = Object.keys(headers)
    .filter((key) => key.toLowerCase() === name)
    .flatMap((key) => (headers as Record<string, string | ReadonlyArray<string> | undefined>)[key] ?? [])
  return values.length === 1 ? values[0] : undefined
}
