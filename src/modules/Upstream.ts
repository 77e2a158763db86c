/**
 * Optional upstream sources per module (`FINES_UPSTREAM_URL`, `VTV_UPSTREAM_URL`,
 * `TAX_DEBT_UPSTREAM_URL`, `GNC_UPSTREAM_URL`). Contract:
 *
 *   GET {URL}/{PLATE}
 *   200 {"items":[…the module's items…], "coverage":"full"|"reduced"}   (coverage optional, full)
 *   404: no records
 *
 * A request times out after 5 s; timeouts, network errors and 5xx are retryable failures (the
 * workflow retries them), anything else is not. Five failures in a row open a circuit breaker
 * for 30 s.
 */
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { Data, Effect, Option, Schema } from "effect"
import type { ModuleName } from "../../workflows/shared.js"
import * as CircuitBreaker from "../platform/CircuitBreaker.js"
import { AppConfig } from "../platform/Config.js"
import { FineItem, finesData, GncItem, gncData, TaxDebtItem, taxDebtData, VtvItem, vtvData } from "./Records.js"

export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{ readonly message: string; readonly retryable: boolean }> {}

export interface UpstreamAnswer {
  readonly data: unknown
  readonly reducedCoverage: boolean
}

const answer = <I>(item: Schema.Schema<I, any>) =>
  Schema.Struct({ items: Schema.Array(item), coverage: Schema.optional(Schema.Literal("full", "reduced")) })

const DECODERS = {
  fines: { schema: answer(FineItem), data: finesData },
  vtv: { schema: answer(VtvItem), data: vtvData },
  tax_debt: { schema: answer(TaxDebtItem), data: taxDebtData },
  gnc: { schema: answer(GncItem), data: gncData }
} as const

export class ModuleUpstream extends Effect.Service<ModuleUpstream>()("vda/ModuleUpstream", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const client = yield* HttpClient.HttpClient
    const breakers = {
      fines: yield* CircuitBreaker.make({ threshold: 5, cooldown: "30 seconds" }),
      vtv: yield* CircuitBreaker.make({ threshold: 5, cooldown: "30 seconds" }),
      tax_debt: yield* CircuitBreaker.make({ threshold: 5, cooldown: "30 seconds" }),
      gnc: yield* CircuitBreaker.make({ threshold: 5, cooldown: "30 seconds" })
    }

    const fetch = (module: ModuleName, base: string, plate: string) => {
      const { data, schema } = DECODERS[module]
      return client.get(`${base.replace(/\/+$/, "")}/${encodeURIComponent(plate)}`, { headers: { accept: "application/json" } }).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new UpstreamFailure({ message: "the source timed out", retryable: true }) }),
        Effect.catchTags({
          RequestError: () => Effect.fail(new UpstreamFailure({ message: "the source could not be reached", retryable: true })),
          ResponseError: () => Effect.fail(new UpstreamFailure({ message: "the source's answer could not be read", retryable: true }))
        }),
        Effect.flatMap((response): Effect.Effect<UpstreamAnswer, UpstreamFailure> => {
          if (response.status === 404) return Effect.succeed({ data: data([] as never), reducedCoverage: false })
          if (response.status !== 200) {
            return Effect.fail(new UpstreamFailure({ message: `the source answered ${response.status}`, retryable: response.status >= 500 }))
          }
          return HttpClientResponse.schemaBodyJson(schema as Schema.Schema<{ items: ReadonlyArray<any>; coverage?: "full" | "reduced" }>)(response).pipe(
            Effect.map((body) => ({ data: data(body.items as never), reducedCoverage: body.coverage === "reduced" })),
            Effect.mapError(() => new UpstreamFailure({ message: "the source gave an unexpected answer", retryable: false }))
          )
        }),
        Effect.scoped,
        breakers[module],
        Effect.catchTag("CircuitOpen", () =>
          Effect.fail(new UpstreamFailure({ message: "the source is failing; not called for a while", retryable: true })))
      )
    }

    return {
      /** None when no upstream is configured for the module. */
      lookup: (module: ModuleName, plate: string): Option.Option<Effect.Effect<UpstreamAnswer, UpstreamFailure>> =>
        Option.map(config.moduleUpstreamUrls[module], (base) => fetch(module, base, plate))
    }
  })
}) {}
