/**
 * What the accounts give metering: the record of a key's use, which admission writes.
 */
import { Effect, Layer } from "effect"
import { KeyUse } from "../metering/KeyUse.js"
import { AccountsRepo } from "./Repo.js"

export const AccountsForMeteringLive = Layer.effect(
  KeyUse,
  Effect.map(AccountsRepo, (repo) => KeyUse.of({ touch: repo.touchKeys }))
).pipe(Layer.provide(AccountsRepo.layer))
