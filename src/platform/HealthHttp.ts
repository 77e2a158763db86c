import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as Errors from "./Errors.js"

export const HealthHttpLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" as const }))
      .handle("readyz", () =>
        sql`select 1`.pipe(
          Effect.as({ status: "ready" as const }),
          Effect.catchAll(() => Errors.temporarilyUnavailable("The database is not reachable"))
        ))
  }))
