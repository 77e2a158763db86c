/**
 * The rows: what each one sends to which target. Row ids are stable: a baseline file is matched
 * to a run by them.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { settings } from "./config.js"
import type { LoadSpec } from "./measure.js"
import type { Floor, Service, Target } from "./targets.js"

export type VehicleRow = "one" | "many"

export interface Row {
  readonly id: string
  readonly name: string
  readonly target: Target
  readonly vehicle?: VehicleRow
  /** The load of one run; `seed` is the same for every target in a given round. */
  readonly spec: (seed: number) => LoadSpec
}

export const ROW_IDS = {
  vehicleOne: (target: string) => `vehicle-one/${target}`,
  vehicleMany: (target: string) => `vehicle-many/${target}`,
  floor: (target: string) => `floor/${target}`,
  status: "status",
  poll: "poll",
  moduleCreation: "module-creation",
  webhookConfig: "webhook-config",
  usage: "usage",
  v1ReportPoll: "v1-report-poll"
} as const

/** A target's side of the vehicle rows: where it answers, its busy key, and its many accounts' keys. */
export interface VehicleSide {
  readonly target: Target
  readonly url: string
  readonly busyKey: string
  readonly manyKeys: ReadonlyArray<string>
}

const get = (path: string, key: string) => ({ method: "GET" as const, path, headers: { "x-api-key": key } })

export const vehicleRows = async (scratch: string, sides: ReadonlyArray<VehicleSide>, plates: ReadonlyArray<string>): Promise<Array<Row>> => {
  const platesFile = Path.join(scratch, "plates.json")
  await Fs.writeFile(platesFile, JSON.stringify(plates))
  const rows: Array<Row> = []
  for (const side of sides) {
    rows.push({
      id: ROW_IDS.vehicleOne(side.target.name),
      name: `vehicle, one account, one plate — ${side.target.name}`,
      target: side.target,
      vehicle: "one",
      spec: () => ({ url: side.url, request: get(`/v2/vehicles/${settings.onePlate}`, side.busyKey), expectFound: true })
    })
  }
  for (const side of sides) {
    const keysFile = Path.join(scratch, `keys-${side.target.name}.json`)
    await Fs.writeFile(keysFile, JSON.stringify(side.manyKeys))
    rows.push({
      id: ROW_IDS.vehicleMany(side.target.name),
      name: `vehicle, ${side.manyKeys.length} accounts, ${plates.length} plates — ${side.target.name}`,
      target: side.target,
      vehicle: "many",
      spec: (seed) => ({
        url: side.url,
        request: get("/", ""),
        draw: { kind: "key-and-plate", keysFile, platesFile, pathTemplate: "/v2/vehicles/{plate}", seed },
        expectFound: true
      })
    })
  }
  return rows
}

const FLOOR_NAMES: Record<Floor["name"], string> = {
  "node-floor": "floor: the vehicle answer as a constant — node:http",
  "effect-floor": "floor: the vehicle answer as a constant — Effect HttpApi"
}

/** The floors' rows: the one-account vehicle query, answered with no work at all. */
export const floorRows = (floors: ReadonlyArray<Floor>): Array<Row> =>
  floors.map((floor) => ({
    id: ROW_IDS.floor(floor.name),
    name: FLOOR_NAMES[floor.name],
    target: floor,
    spec: () => ({ url: floor.url, request: get(`/v2/vehicles/${settings.onePlate}`, "") })
  }))

export const serviceOnlyRows = (
  service: Service,
  busy: { readonly production: string; readonly sandbox: string },
  paths: { readonly operation: string; readonly report: string }
): Array<Row> => [
  {
    id: ROW_IDS.status, name: "GET /v2/status", target: service,
    spec: () => ({ url: service.productionUrl, request: get("/v2/status", busy.production) })
  },
  {
    id: ROW_IDS.poll, name: "GET /v2/operations/{id} (final)", target: service,
    spec: () => ({ url: service.sandboxUrl, request: get(paths.operation, busy.sandbox) })
  },
  {
    id: ROW_IDS.moduleCreation, name: "POST /v2/vehicles/{plate}/modules (new)", target: service,
    spec: (seed) => ({
      url: service.sandboxUrl,
      request: { method: "POST", path: "/", headers: { "x-api-key": busy.sandbox, "content-type": "application/json" }, body: JSON.stringify(settings.moduleQuery) },
      draw: { kind: "new-plate", pathTemplate: "/v2/vehicles/{plate}/modules", seed }
    })
  },
  {
    id: ROW_IDS.webhookConfig, name: "GET /v2/webhooks/config", target: service,
    spec: () => ({ url: service.productionUrl, request: get("/v2/webhooks/config", busy.production) })
  },
  {
    id: ROW_IDS.usage, name: "GET /v2/usage", target: service,
    spec: () => ({ url: service.productionUrl, request: get("/v2/usage", busy.production) })
  },
  {
    id: ROW_IDS.v1ReportPoll, name: "GET /v1/reports/{id} (final)", target: service,
    spec: () => ({ url: service.sandboxUrl, request: get(paths.report, busy.sandbox) })
  }
]
