import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { currentPrincipal } from "../principal/Security.js"
import { Api, apiGroup } from "../Api.js"
import { preEncodedPerObject } from "../platform/http/PreEncoded.js"
import { UsageResponse } from "./Api.js"
import { UsageReader } from "./UsageReader.js"

export const MeteringHttpLive = apiGroup(
  Effect.gen(function*() {
    const usage = yield* UsageReader
    const usageAnswer = preEncodedPerObject(UsageResponse, (data: typeof UsageResponse.Type["data"]) => ({ success: true as const, data }))
    return HttpApiBuilder.group(Api, "metering", (handlers) =>
      handlers.handle("getUsage", () =>
        Effect.flatMap(currentPrincipal, (principal) =>
          Effect.map(usage.read(principal), usageAnswer))))
  }))
