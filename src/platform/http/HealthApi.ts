/**
 * Liveness and readiness probes (unauthenticated). Readiness reports each dependency with its
 * state, so an operator sees which one holds the process back.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"

const DependencyStatus = Schema.Literals(["up", "down"])

export const Readiness = Schema.Struct({
  status: Schema.Literals(["ready", "not_ready"]),
  checks: Schema.Struct({
    database: Schema.Struct({
      status: DependencyStatus,
      /** How long `select 1` took, when it answered. */
      latencyMs: Schema.optional(Schema.Number)
    }),
    workflowEngine: Schema.Struct({
      status: DependencyStatus,
      engine: Schema.Literals(["inline", "temporal"]),
      detail: Schema.optional(Schema.String)
    })
  })
}).annotate({ identifier: "Readiness" })
export type Readiness = typeof Readiness.Type

/** The liveness probe's answer: the process is up. */
export const Liveness = Schema.Struct({ status: Schema.Literal("ok") })
export const LIVE: typeof Liveness.Type = { status: "ok" }

export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", { success: Liveness })
      .annotate(OpenApi.Summary, "The process is up")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz", { success: Readiness, error: Readiness.pipe(HttpApiSchema.status(503)) })
      .annotate(OpenApi.Summary, "Every dependency (database, workflow engine) is up: 200; otherwise 503, saying which is down")
  )
  .annotate(OpenApi.Title, "Health")
{}
