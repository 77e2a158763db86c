import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal } from "../principal/Domain.js"
import { Api, apiGroup } from "../Api.js"
import { preEncoded } from "../platform/http/PreEncoded.js"
import { UsageResponse } from "./Api.js"
import { UsageReader } from "./UsageReader.js"

export const MeteringHttpLive = apiGroup(
  Effect.gen(function*() {
    const usage = yield* UsageReader
    return HttpApiBuilder.group(Api, "metering", (handlers) =>
      handlers.handle("getUsage", () =>
        CurrentPrincipal.use((principal) =>
          Effect.map(usage.read(principal), (data) => preEncoded(UsageResponse, { success: true, data })))))
  }))
