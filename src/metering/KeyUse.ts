/**
 * What admission records of a key: that it was used (its `lastUsedAt`). The accounts own the keys
 * and implement this (`accounts/ForMetering.ts`), so metering knows no table of theirs.
 */
import { Context, type Effect } from "effect"

export class KeyUse extends Context.Service<KeyUse, {
  /** The keys `ids` were used at `at`; a later recorded use is kept. */
  readonly touch: (ids: ReadonlyArray<string>, at: Date) => Effect.Effect<void>
}>()("vda/KeyUse") {}
