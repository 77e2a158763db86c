/**
 * A success answered as the JSON its schema would encode, without the schema's encoding pass.
 *
 * For schemas whose encoded form is what `JSON.stringify` writes of their values: strings,
 * numbers, booleans, null, arrays, plain structs, optional keys, and dates as ISO strings (a
 * date's `toJSON`). The encoding walks every field of every answer through Effect; on the busiest
 * routes that walk costs more than the rest of the handler. `PRE_ENCODED` lists the schemas
 * answered this way: a test checks, on values drawn from each, that the two give the same JSON.
 */
import type { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { perObject } from "../caching/PerObject.js"

/** `value`, a value of `schema`'s type, answered as JSON (200). */
export const preEncoded = <S extends Schema.Top>(_schema: S, value: S["Type"]): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(value)

/**
 * `preEncoded`, once per object `answer` is given: the requests that share one batched read (a
 * status, a usage, an operation) share its encoded answer. Answers are immutable (headers are
 * added to copies), so one can be sent any number of times.
 */
export const preEncodedPerObject = <S extends Schema.Top, K extends object>(schema: S, answer: (key: K) => S["Type"]) =>
  perObject((key: K) => preEncoded(schema, answer(key)))
