/**
 * The worker's activities (`worker/Activities.ts`) as the worker registers them, on a runtime of
 * the services they are built with, and what their tests set up: accounts, operations and
 * webhook deliveries in the database those services use.
 */
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { Accounts } from "../../src/accounts/Accounts.js"
import { OperationActivities } from "../../src/operations/Activities.js"
import type { OperationInput } from "../../src/operations/Repo.js"
import type { Environment } from "../../src/platform/http/RequestContext.js"
import { WebhookDeliveries } from "../../src/webhooks/Deliveries.js"
import { WebhooksRepo } from "../../src/webhooks/Repo.js"
import { modulesKey, type WorkflowActivities } from "../../workflows/shared.js"
import { createActivities } from "../../worker/Activities.js"
import { insertOperation as insertRow } from "./Operations.js"

export class WorkerActivities extends Context.Service<WorkerActivities, WorkflowActivities>()("test/WorkerActivities") {
  /** On one ManagedRuntime of the services (as `worker/main.ts` makes it), disposed with the layer. */
  static readonly layer = Layer.effect(
    WorkerActivities,
    Effect.gen(function*() {
      const services = yield* Effect.context<OperationActivities>()
      const runtime = yield* Effect.acquireRelease(
        Effect.sync(() => ManagedRuntime.make(Layer.succeedContext(services))),
        (runtime) => Effect.promise(() => runtime.dispose())
      )
      return createActivities(runtime)
    })
  )
}

/** What an activity's promise was rejected with; the test fails if it resolves. */
export const rejection = (run: () => Promise<unknown>) =>
  Effect.tryPromise({ try: run, catch: (error) => error }).pipe(
    Effect.matchEffect({ onFailure: Effect.succeed, onSuccess: () => Effect.die(new Error("expected a rejection")) })
  )

export const newAccount = Effect.flatMap(Accounts, (accounts) =>
  accounts.create({ owner: "Worker", plan: "growth", timezone: "America/Argentina/Buenos_Aires" })).pipe(
    Effect.map((account) => account.id)
  )

/** A queued operation of `accountId` (no engine runs it: the test calls its activities); its id. */
export const insertOperation = (accountId: string, environment: Environment, plate: string, input: OperationInput) =>
  Effect.gen(function*() {
    const id = `op_worker_${randomUUID().replaceAll("-", "")}`
    yield* insertRow({
      id,
      accountId,
      environment,
      kind: input.kind,
      apiVersion: "v2",
      plate,
      modulesKey: input.kind === "modules" ? modulesKey(input.modules) : null,
      input,
      createdAt: new Date()
    }).pipe(Effect.orDie)
    return id
  })

const SECRET = "whsec_worker"

/** `accountId`'s production webhook, enabled and pointing at `url`. */
export const webhookTo = (accountId: string, url: string) =>
  Effect.flatMap(WebhooksRepo, (repo) =>
    repo.updateConfig(accountId, "production", SECRET, new Date(), (current) => Effect.succeed({ ...current, url, enabled: true, secret: SECRET })))

/** A pending test event of `accountId` in production, its webhook pointing at `url`; the delivery id. */
export const deliveryTo = (accountId: string, url: string) =>
  Effect.andThen(webhookTo(accountId, url), Effect.flatMap(WebhookDeliveries, (deliveries) => deliveries.recordTest(accountId, "production")))
