/**
 * Per-request values set by the listener and the request pipeline, read anywhere below them.
 */
import { Context, Schema } from "effect"

export const Environment = Schema.Literals(["production", "sandbox"])
export type Environment = typeof Environment.Type

export class RequestId extends Context.Reference<string>("vda/RequestId", {
  defaultValue: () => "unknown"
}) {}

/** Which listener the request arrived on; each listener provides its own. */
export class CurrentEnvironment extends Context.Reference<Environment>("vda/CurrentEnvironment", {
  defaultValue: (): Environment => "production"
}) {}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/

/** Echo a client's request id only when it is safe to reflect into headers and logs. */
export const saneRequestId = (value: string | undefined): string | undefined =>
  value !== undefined && SANE_REQUEST_ID.test(value) ? value : undefined
