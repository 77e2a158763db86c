/**
 * The probes: `/healthz` (the process is up) and `/readyz` (each dependency, with its state).
 */
import { Clock, Duration, Effect, Fiber, Option, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { Api, apiGroup } from "./Api.js"
import { WorkflowEngine } from "./operations/WorkflowEngine.js"
import { LIVE, Readiness } from "./platform/http/HealthApi.js"

/** How long the database may take to answer a readiness check. */
const DATABASE_DEADLINE = Duration.seconds(1)

const encodeReadiness = Schema.encodeSync(Readiness)

export const HealthHttpLive = apiGroup(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const engine = yield* WorkflowEngine

    const database = Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      // disconnected: at the deadline the probe answers, whatever cancelling the query takes
      const answered = yield* Effect.forkDetach(sql`select 1`).pipe(
        Effect.flatMap(Fiber.join),
        Effect.timeoutOption(DATABASE_DEADLINE),
        Effect.option,
        Effect.map(Option.flatten)
      )
      if (Option.isNone(answered)) return { status: "down" as const }
      return { status: "up" as const, latencyMs: (yield* Clock.currentTimeMillis) - started }
    })

    return HttpApiBuilder.group(Api, "health", (handlers) =>
      handlers
        .handle("healthz", () => Effect.succeed(LIVE))
        .handle("readyz", () =>
          Effect.map(Effect.all([database, engine.readiness], { concurrency: "unbounded" }), ([db, workflow]) => {
            const ready = db.status === "up" && workflow.up
            const readiness: Readiness = {
              status: ready ? "ready" : "not_ready",
              checks: {
                database: db,
                workflowEngine: {
                  status: workflow.up ? "up" : "down",
                  engine: workflow.engine,
                  ...(workflow.detail === undefined ? {} : { detail: workflow.detail })
                }
              }
            }
            return HttpServerResponse.jsonUnsafe(encodeReadiness(readiness), {
              status: ready ? 200 : 503,
              headers: ready ? {} : { "retry-after": "5" }
            })
          })))
  }))
