import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal } from "../accounts/Domain.js"
import { Api } from "../Api.js"
import { preEncoded } from "../platform/PreEncoded.js"
import { UsageResponse } from "./Api.js"
import { UsageReader } from "./UsageReader.js"

export const MeteringHttpLive = HttpApiBuilder.group(Api, "metering", (handlers) =>
  Effect.gen(function*() {
    const usage = yield* UsageReader
    return handlers.handle("getUsage", () =>
      CurrentPrincipal.use((principal) =>
        Effect.map(usage.read(principal), (data) => preEncoded(UsageResponse, { success: true, data }))))
  }))
