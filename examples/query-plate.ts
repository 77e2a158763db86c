/**
 * Query a plate with the Effect client.
 *
 *   VDA_BASE_URL  the API's address (the sandbox's, http://localhost:8081, with a vda_test_ key)
 *   VDA_API_KEY   an API key of that environment
 *   VDA_PLATE     the plate to look up (AB123CD unless given)
 */
import { Effect } from "effect"
import { VehicleDataClient } from "vehicle-data-api/client"

const plate = process.env.VDA_PLATE ?? "AB123CD"

const program = Effect.gen(function*() {
  const api = yield* VehicleDataClient
  const answer = yield* api.vehicles.getVehicle({ params: { plate } })
  // a miss may be accepted as a search (`onMiss=search`, 202) instead of answered; not asked for here
  if (!("found" in answer)) return console.log(`${plate}: accepted as operation ${answer.id}`)
  if (answer.data === null) return console.log(`${plate}: not found`)
  const { make, model, year, currentLocation } = answer.data
  console.log(`${plate}: ${make} ${model} ${year ?? "(year unknown)"}, ${currentLocation.province ?? "province unknown"}`)
})

program.pipe(
  Effect.catchTag("VehicleDataApiError", (error) =>
    Effect.sync(() => {
      console.error(`${error.code} (${error.status ?? "no answer"}): ${error.message} [request ${error.requestId ?? "-"}]`)
      process.exitCode = 1
    })),
  Effect.provide(VehicleDataClient.layerFetch({ baseUrl: process.env.VDA_BASE_URL!, apiKey: process.env.VDA_API_KEY! })),
  Effect.runPromise
)
