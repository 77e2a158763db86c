/**
 * Per-request values set by the listener and the request pipeline, read anywhere below them.
 */
import { Context, Effect, Schema } from "effect"

export const Environment = Schema.Literals(["production", "sandbox"])
export type Environment = typeof Environment.Type

/**
 * The request being served, one object per request (the request pipeline adds it): its id, which
 * its response headers, error bodies and log lines carry, and the account it runs as once it is
 * admitted (its log lines' `accountId`). One entry, not one per value: every entry a request adds
 * deepens its context, and past a depth Effect copies the context whole.
 */
export interface ServedRequest {
  readonly requestId: string
  accountId: string | undefined
}

export class CurrentRequest extends Context.Reference<ServedRequest | undefined>("vda/CurrentRequest", {
  defaultValue: () => undefined
}) {}

/** The current request's id; "unknown" outside a request. */
export const RequestId: Effect.Effect<string> = Effect.map(CurrentRequest, (request) => request?.requestId ?? "unknown")

/** Which listener the request arrived on; each listener provides its own. */
export class CurrentEnvironment extends Context.Reference<Environment>("vda/CurrentEnvironment", {
  defaultValue: (): Environment => "production"
}) {}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/

/** Echo a client's request id only when it is safe to reflect into headers and logs. */
export const saneRequestId = (value: string | undefined): string | undefined =>
  value !== undefined && SANE_REQUEST_ID.test(value) ? value : undefined
