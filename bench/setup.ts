/**
 * Everything before the first run: the targets started, their fixtures made, each vehicle answer
 * probed once, and the rows built.
 */
import { settings } from "./config.js"
import {
  busyServiceAccount,
  checkUnlimitedKeys,
  finalOperation,
  finalReport,
  importRegistry,
  limitedServiceAccount,
  manyServiceAccounts,
  manyVehicles,
  ONE_VEHICLE,
  seedPeer,
  type ServiceAccount
} from "./fixtures.js"
import type { Run } from "./measure.js"
import { floorRows, type Row, serviceOnlyRows, type VehicleRow, type VehicleSide, vehicleRows } from "./rows.js"
import {
  type Floor,
  FLOORS,
  installPeers,
  type Peer,
  PEERS,
  peerCommon,
  type PeerCommon,
  type Service,
  startFloor,
  startPeer,
  startService,
  type Target,
  type TargetName
} from "./targets.js"

export interface PeerSetup {
  readonly peer: Peer
  readonly common: PeerCommon
  readonly many: ReadonlyArray<{ readonly accountId: number; readonly key: string }>
  readonly limited: { readonly accountId: number; readonly key: string }
}

/** The 200 answers each target gave on the vehicle rows, every run counted: what metering must match. */
export class Answers {
  readonly ok200 = new Map<TargetName, Record<VehicleRow, number>>()

  count(target: Target, kind: VehicleRow, run: Pick<Run, "statuses">) {
    const counts = this.ok200.get(target.name) ?? { one: 0, many: 0 }
    counts[kind] += run.statuses["200"] ?? 0
    this.ok200.set(target.name, counts)
  }
}

export interface Prepared {
  readonly service: Service
  readonly busy: Required<ServiceAccount>
  readonly limited: ServiceAccount
  readonly many: ReadonlyArray<ServiceAccount>
  readonly peers: ReadonlyArray<PeerSetup>
  readonly sides: ReadonlyArray<VehicleSide>
  readonly floors: ReadonlyArray<Floor>
  /** Every process a run waits on to be idle: the service, the peers and the floors. */
  readonly targets: ReadonlyArray<Target>
  readonly rows: ReadonlyArray<Row>
  /** The size of each target's vehicle answers: the same data everywhere, so the same bytes. */
  readonly answerBytes: Record<string, { readonly one: number; readonly many: number }>
}

export const prepare = async (root: string, answers: Answers, say: (line: string) => void): Promise<Prepared> => {
  say("starting the service on its own PostgreSQL")
  const service = await startService(root)
  say(`peers: installing ${settings.peersDir} with npm ci`)
  const peersDir = await installPeers(root)
  if (peersDir === null) say(`no peers at ${settings.peersDir} (BENCH_PEERS_DIR): the service rows only; the goals that need the peers are not measured`)

  const vehicles = [ONE_VEHICLE, ...manyVehicles(settings.manyPlates)]
  const plates = vehicles.slice(1).map((v) => v.plate)
  say(`service: ${await importRegistry(service, root, vehicles)}`)
  const busy = (await busyServiceAccount(service)) as Required<ServiceAccount>
  const limited = await limitedServiceAccount(service)
  say(`service: ${settings.manyAccounts} accounts (${settings.accountsVia === "clone" ? "one by vda, the rest copied from its rows in SQL" : "every one by vda"})`)
  const many = await manyServiceAccounts(service, settings.manyAccounts)
  await checkUnlimitedKeys(service.productionUrl, many.map((a) => a.production))
  const paths = { operation: await finalOperation(service, busy.sandbox), report: await finalReport(service, busy.sandbox) }

  const sides: Array<VehicleSide> = [{ target: service, url: service.productionUrl, busyKey: busy.production, manyKeys: many.map((a) => a.production) }]
  const peers: Array<PeerSetup> = []
  if (peersDir !== null) {
    const common = await peerCommon(peersDir)
    for (const name of PEERS) {
      const peer = await startPeer(root, peersDir, name)
      const seeded = await seedPeer(peer, common, vehicles, settings.manyAccounts)
      peers.push({ peer, common, ...seeded })
      sides.push({ target: peer, url: peer.url, busyKey: peer.boot.key, manyKeys: seeded.many.map((a) => a.key) })
      say(`${name}: ${peer.url}, ${settings.manyAccounts} accounts and ${settings.manyPlates} plates seeded`)
    }
  }

  // each target's answers, probed once: their sizes, and the service's for the floors to answer
  const answerBytes: Record<string, { one: number; many: number }> = {}
  let serviceAnswer = ""
  for (const side of sides) {
    const probe = async (kind: VehicleRow, plate: string, key: string) => {
      const response = await fetch(`${side.url}/v2/vehicles/${plate}`, { headers: { "x-api-key": key } })
      const body = await response.text()
      answers.count(side.target, kind, { statuses: { [response.status]: 1 } })
      if (response.status !== 200 || !body.includes('"found":true')) throw new Error(`${side.target.name}: ${plate} answered ${response.status} ${body}`)
      return body
    }
    const one = await probe("one", settings.onePlate, side.busyKey)
    if (side.target === service) serviceAnswer = one
    answerBytes[side.target.name] = { one: Buffer.byteLength(one), many: Buffer.byteLength(await probe("many", plates[0]!, side.manyKeys[0]!)) }
  }

  const floors: Array<Floor> = []
  for (const name of FLOORS) {
    floors.push(await startFloor(name, serviceAnswer))
    say(`${name}: ${floors.at(-1)!.url}`)
  }

  const rows = [...(await vehicleRows(root, sides, plates)), ...floorRows(floors), ...serviceOnlyRows(service, busy, paths)]
  return { service, busy, limited, many, peers, sides, floors, targets: [...sides.map((side) => side.target), ...floors], rows, answerBytes }
}
