/**
 * What operations tell of themselves: an operation became final. Whoever sends events of it (the
 * webhooks, `webhooks/ForOperations.ts`) implements this, so operations know no listener.
 */
import { Context, type Effect } from "effect"

export class OperationEvents extends Context.Service<OperationEvents, {
  /**
   * The event step of an operation's workflow, once it is final: its event recorded (once, however
   * often this is called), and the delivery to start, if there is one.
   */
  readonly finalized: (operationId: string) => Effect.Effect<string | null>
}>()("vda/OperationEvents") {}
