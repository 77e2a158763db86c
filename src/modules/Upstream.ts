/**
 * Optional upstream sources per module (`FINES_UPSTREAM_URL`, `VTV_UPSTREAM_URL`,
 * `TAX_DEBT_UPSTREAM_URL`, `GNC_UPSTREAM_URL`). Contract:
 *
 *   GET {URL}/{PLATE}
 *   200 {"items":[…the module's items…], "coverage":"full"|"reduced"}   (coverage optional, full)
 *   404: no records
 *
 * A request has 8 s in all (connection, headers and body; at most 1 MiB; MODULE_UPSTREAM_TIMEOUT_MS,
 * UPSTREAM_MAX_BODY_BYTES); timeouts, network
 * errors and 5xx are retryable failures (the workflow retries them), anything else is not. Five
 * failures in a row open a circuit breaker for 30 s, then one trial call decides.
 */
import { Context, Data, Duration, Effect, Layer, Option, Schema } from "effect"
import { HttpClient } from "effect/http"
import type { ModuleName } from "../../workflows/shared.js"
import * as CircuitBreaker from "../platform/upstream/CircuitBreaker.js"
import { AppConfig } from "../platform/config/Config.js"
import * as UpstreamCall from "../platform/upstream/UpstreamCall.js"
import { FineItem, finesData, GncItem, gncData, TaxDebtItem, taxDebtData, VtvItem, vtvData } from "./Records.js"

export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{ readonly message: string; readonly retryable: boolean }> {}

export interface UpstreamAnswer {
  readonly data: unknown
  readonly reducedCoverage: boolean
}

const answer = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ items: Schema.Array(item), coverage: Schema.optional(Schema.Literals(["full", "reduced"])) })

const DECODERS = {
  fines: { schema: answer(FineItem), data: finesData },
  vtv: { schema: answer(VtvItem), data: vtvData },
  tax_debt: { schema: answer(TaxDebtItem), data: taxDebtData },
  gnc: { schema: answer(GncItem), data: gncData }
} as const

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const client = yield* HttpClient.HttpClient
  const { upstream } = config
  const breakers = {
    fines: yield* CircuitBreaker.fromSettings(upstream),
    vtv: yield* CircuitBreaker.fromSettings(upstream),
    tax_debt: yield* CircuitBreaker.fromSettings(upstream),
    gnc: yield* CircuitBreaker.fromSettings(upstream)
  }

  const MESSAGES = {
    timeout: "the source timed out",
    unreachable: "the source could not be reached",
    too_large: "the source's answer is too large",
    unreadable: "the source gave an unexpected answer"
  } as const

  const fetch = (module: ModuleName, base: string, plate: string) => {
    const { data, schema } = DECODERS[module]
    const decode = Schema.decodeUnknownEffect(schema)
    return UpstreamCall.getJson(client, `${base.replace(/\/+$/, "")}/${encodeURIComponent(plate)}`, {
      deadline: Duration.millis(upstream.moduleTimeoutMs),
      maxBytes: upstream.maxBodyBytes
    }).pipe(
      Effect.mapError((e) => new UpstreamFailure({ message: MESSAGES[e.reason], retryable: e.retryable })),
      Effect.flatMap((reply): Effect.Effect<UpstreamAnswer, UpstreamFailure> => {
        if (reply.status === 404) return Effect.succeed({ data: data([] as never), reducedCoverage: false })
        if (reply.status !== 200) {
          return Effect.fail(new UpstreamFailure({ message: `the source answered ${reply.status}`, retryable: reply.status >= 500 }))
        }
        return decode(reply.body).pipe(
          Effect.map((body) => ({ data: data(body.items as never), reducedCoverage: body.coverage === "reduced" })),
          Effect.mapError(() => new UpstreamFailure({ message: MESSAGES.unreadable, retryable: false }))
        )
      }),
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

export class ModuleUpstream extends Context.Service<ModuleUpstream, Effect.Success<typeof make>>()("vda/ModuleUpstream", { make }) {
  static readonly layer = Layer.effect(ModuleUpstream, make)
}
