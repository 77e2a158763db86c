/**
 * Liveness and readiness probes (unauthenticated). Readiness reports each dependency with its
 * state, so an operator sees which one holds the process back.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

const DependencyStatus = Schema.Literal("up", "down")

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready", "not_ready"),
  checks: Schema.Struct({
    database: Schema.Struct({
      status: DependencyStatus,
      /** How long `select 1` took, when it answered. */
      latencyMs: Schema.optional(Schema.Number)
    }),
    workflowEngine: Schema.Struct({
      status: DependencyStatus,
      engine: Schema.Literal("inline", "temporal"),
      detail: Schema.optional(Schema.String)
    })
  })
}).annotations({ identifier: "Readiness" })
export type Readiness = typeof Readiness.Type

/** The liveness probe's answer: the process is up. */
export const Liveness = Schema.Struct({ status: Schema.Literal("ok") })
export const LIVE: typeof Liveness.Type = { status: "ok" }

export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz")
      .addSuccess(Liveness)
      .annotate(OpenApi.Summary, "The process is up")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Readiness)
      .addError(Readiness, { status: 503 })
      .annotate(OpenApi.Summary, "Every dependency (database, workflow engine) is up: 200; otherwise 503, saying which is down")
  )
  .annotate(OpenApi.Title, "Health")
{}
