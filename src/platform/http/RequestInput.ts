/**
 * The one input layer every request passes before routing (DESIGN §12), whatever its route:
 *
 * - the path must be a route of the contract exactly: case-sensitive, no trailing slash (404);
 * - `HEAD` is not served (405 with `Allow`): a metered route must never run for a header read;
 * - path and query may hold no NUL and no lone surrogate (400);
 * - a body must be JSON (`application/json`, optional `charset=utf-8`; else 415), at most 64 KiB
 *   (else 413, the connection kept), nested at most 32 levels, with no NUL or lone surrogate in
 *   any string or key (400). Both limits are settings (BodyLimits).
 *
 * Pure functions over what Node gives; the request pipeline turns a refusal into the response.
 */
import { IncomingMessage } from "node:http"

/**
 * A request's headers as Node parsed them: names in lower case, a repeated header as Node keeps it
 * (the first `content-type` or `content-length`, most others joined with ", "; `set-cookie` in an
 * array, which no check reads). Effect's `request.headers` copies Node's record into one of its
 * own, entry by entry, the first time it is read (0.25 µs a request).
 */
export const headersOf = (request: { readonly source: unknown; readonly headers: Readonly<Record<string, string>> }) =>
  (request.source instanceof IncomingMessage ? request.source.headers : request.headers) as Readonly<Record<string, string | undefined>>

/** The connection a request came on: Node's socket, when Node serves it. */
export const connectionOf = (request: { readonly source: unknown }): object | null | undefined =>
  request.source instanceof IncomingMessage ? request.source.socket : undefined

export interface BodyLimits {
  readonly maxBytes: number
  readonly maxDepth: number
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBytes: 64 * 1024, maxDepth: 32 }

/** A size as people read it: "64 KiB", "1.5 KiB", "100 bytes". */
const sizeOf = (bytes: number) => (bytes >= 1024 ? `${Math.round((bytes / 1024) * 10) / 10} KiB` : `${bytes} bytes`)

export type Refusal =
  | { readonly status: 400; readonly message: string }
  | { readonly status: 404; readonly message: string }
  | { readonly status: 405; readonly message: string; readonly allow: string }
  | { readonly status: 413; readonly message: string }
  | { readonly status: 415; readonly message: string }

/** A route of the contract: its method and path template (`/v2/operations/:id`). */
export interface RouteTemplate {
  readonly method: string
  readonly path: string
}

const segmentPattern = (segment: string) =>
  segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A path's routes: its template as metrics, traces and the access log name it, and its routes by method. */
export interface PathRoutes<R extends RouteTemplate> {
  /** The template with `{param}`s: `/v2/vehicles/{plate}`. */
  readonly template: string
  readonly methods: ReadonlyArray<string>
  readonly byMethod: ReadonlyMap<string, R>
}

/**
 * Recognises the contract's paths exactly (case-sensitive, no trailing slash): the routes of the
 * template a path matches, a template without parameters first (as the router prefers it), or
 * undefined. Made once; a request's lookup allocates nothing.
 */
export const makePathIndex = <R extends RouteTemplate>(routes: ReadonlyArray<R>) => {
  const byTemplate = new Map<string, Array<R>>()
  for (const route of routes) byTemplate.set(route.path, [...(byTemplate.get(route.path) ?? []), route])
  const literal = new Map<string, PathRoutes<R>>()
  const parameterised: Array<{ readonly pattern: RegExp; readonly routes: PathRoutes<R> }> = []
  for (const [path, sameTemplate] of byTemplate) {
    const byMethod = new Map(sameTemplate.map((route) => [route.method.toUpperCase(), route] as const))
    const routes: PathRoutes<R> = {
      template: path.split("/").map((s) => s.startsWith(":") ? `{${s.slice(1)}}` : s).join("/"),
      methods: [...byMethod.keys()],
      byMethod
    }
    if (path.includes(":")) parameterised.push({ pattern: new RegExp(`^${path.split("/").map(segmentPattern).join("/")}$`), routes })
    else literal.set(path, routes)
  }
  return (path: string): PathRoutes<R> | undefined => {
    const known = literal.get(path)
    if (known !== undefined) return known
    for (const route of parameterised) if (route.pattern.test(path)) return route.routes
    return undefined
  }
}

/**
 * The path parameters of a path of `template`'s (`/v2/vehicles/:plate`) when each is ASCII letters
 * and digits, or undefined. The router passes such a parameter on as it is (it decodes only
 * percent-escapes). Made once per template.
 */
export const makeAlphanumericParams = (template: string) => {
  const names: Array<string> = []
  const pattern = new RegExp(`^${
    template.split("/").map((segment) => {
      if (!segment.startsWith(":")) return segmentPattern(segment)
      names.push(segment.slice(1))
      return "([A-Za-z0-9]+)"
    }).join("/")
  }$`)
  return (path: string): Record<string, string> | undefined => {
    const match = pattern.exec(path)
    if (match === null) return undefined
    const params: Record<string, string> = {}
    for (let i = 0; i < names.length; i++) params[names[i]!] = match[i + 1]!
    return params
  }
}

/** A request URL's path: what comes before its query. */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The methods a path answers to (empty: no such route). */
export const makeRouteTable = (routes: ReadonlyArray<RouteTemplate>) => {
  const index = makePathIndex(routes)
  return (path: string): ReadonlyArray<string> => index(path)?.methods ?? []
}

/** What metrics, traces and the access log call a route: its template with `{param}`s. */
export const UNMATCHED_ROUTE = "unmatched"

/**
 * The template a request's path matches (`/v2/vehicles/{plate}`), whatever its method, or
 * UNMATCHED_ROUTE: the label stays one of a known few whatever clients send.
 */
export const makeRouteResolver = (routes: ReadonlyArray<RouteTemplate>) => {
  const index = makePathIndex(routes)
  return (url: string): string => index(pathOf(url))?.template ?? UNMATCHED_ROUTE
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const hasForbiddenCharacter = (text: string) => text.includes("\u0000") || LONE_SURROGATE.test(text)

/** Printable ASCII without `%` or `+`: nothing to decode, so nothing forbidden (most URLs). */
const PLAIN_URL = /^[\x21-\x24\x26-\x2a\x2c-\x7e]*$/

/** Path and query, decoded: a NUL or a lone surrogate anywhere is refused. */
export const checkUrl = (url: string): Refusal | undefined => {
  if (PLAIN_URL.test(url)) return undefined
  const [path = "", query = ""] = url.split("?", 2)
  let decoded: Array<string>
  try {
    decoded = [
      ...path.split("/").map(decodeURIComponent),
      ...query.split("&").flatMap((pair) => pair.split("=").map((part) => decodeURIComponent(part.replace(/\+/g, " "))))
    ]
  } catch {
    return { status: 400, message: "Invalid request: the URL is not valid percent-encoded UTF-8" }
  }
  return decoded.some(hasForbiddenCharacter)
    ? { status: 400, message: "Invalid request: the URL contains a NUL character or a lone surrogate" }
    : undefined
}

/** The route's answer to the method and path, before anything else is looked at. */
export const checkRoute = (
  methodsOf: (path: string) => ReadonlyArray<string>,
  method: string,
  url: string
): Refusal | undefined => {
  const path = pathOf(url)
  return checkMethods(methodsOf(path), method, path)
}

/** `checkRoute` for a path whose route's methods are known. */
export const checkMethods = (methods: ReadonlyArray<string>, method: string, path: string): Refusal | undefined => {
  if (methods.length === 0) return { status: 404, message: `No route for ${method} ${path}` }
  if (method === "HEAD") {
    return { status: 405, message: `HEAD is not supported: use ${methods.join(" or ")}`, allow: methods.join(", ") }
  }
  return undefined
}

/** Whether the request says it carries a body. */
export const hasBody = (headers: Record<string, string | Array<string> | undefined>) =>
  headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0")

const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i

/** Whether a `Content-Type` header declares JSON (UTF-8, the only charset taken). */
export const isJsonMediaType = (type: string | Array<string> | undefined): type is string =>
  typeof type === "string" && JSON_MEDIA_TYPE.test(type.trim())

/** The body's declared type and length, before a byte of it is read. */
export const checkBodyHeaders = (
  headers: Record<string, string | Array<string> | undefined>,
  limits: BodyLimits = DEFAULT_BODY_LIMITS
): Refusal | undefined => {
  if (!isJsonMediaType(headers["content-type"])) {
    return { status: 415, message: "Unsupported content type: send the body as application/json" }
  }
  const length = Number(headers["content-length"] ?? 0)
  if (length > limits.maxBytes) return tooLarge(limits)
  return undefined
}

export const tooLarge = (limits: BodyLimits = DEFAULT_BODY_LIMITS): Refusal => ({
  status: 413,
  message: `The body is larger than ${sizeOf(limits.maxBytes)}`
})

/** Nesting depth of a JSON text, counted without parsing (no recursion, whatever the input). */
export const jsonDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}

/** Every string and key of a parsed JSON value, visited without recursion. */
const someString = (value: unknown, test: (s: string) => boolean) => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    if (typeof next === "string") {
      if (test(next)) return true
    } else if (Array.isArray(next)) stack.push(...next)
    else if (next !== null && typeof next === "object") {
      for (const [key, inner] of Object.entries(next)) {
        if (test(key)) return true
        stack.push(inner)
      }
    }
  }
  return false
}

/** The body's text parsed: JSON within the depth limit, with no NUL or lone surrogate; else its refusal. */
export const parseJsonText = (
  text: string,
  limits: BodyLimits = DEFAULT_BODY_LIMITS
): { readonly value: unknown } | { readonly refusal: Refusal } => {
  if (jsonDepth(text) > limits.maxDepth) {
    return { refusal: { status: 400, message: `Invalid request: JSON nested deeper than ${limits.maxDepth} levels` } }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { refusal: { status: 400, message: `Malformed request body: expected JSON of at most ${sizeOf(limits.maxBytes)}` } }
  }
  if (someString(value, hasForbiddenCharacter)) {
    return { refusal: { status: 400, message: "Invalid request: the body contains a NUL character or a lone surrogate" } }
  }
  return { value }
}

/** The refusal of a body's text, if `parseJsonText` refuses it. */
export const checkJsonText = (text: string, limits: BodyLimits = DEFAULT_BODY_LIMITS): Refusal | undefined => {
  const parsed = parseJsonText(text, limits)
  return "refusal" in parsed ? parsed.refusal : undefined
}
