/**
 * First run on an empty embedded database: a demo account (plan growth) with one production and
 * one sandbox key, so `npm start` can be tried at once. The keys are printed to the console once,
 * by the caller; they are never logged.
 */
import { Effect } from "effect"
import { DEFAULT_TIMEZONE } from "../metering/Periods.js"
import { Accounts, type CreatedKey } from "./Accounts.js"

export interface DemoAccount {
  readonly accountId: string
  readonly production: CreatedKey
  readonly sandbox: CreatedKey
}

export const createDemoAccount = Effect.gen(function*() {
  const accounts = yield* Accounts
  const account = yield* accounts.create({ owner: "Demo account", plan: "growth", timezone: DEFAULT_TIMEZONE })
  const production = yield* accounts.createKey({ accountId: account.id, environment: "production", name: "demo" })
  const sandbox = yield* accounts.createKey({ accountId: account.id, environment: "sandbox", name: "demo" })
  return { accountId: account.id, production, sandbox } satisfies DemoAccount
}).pipe(Effect.catchTag("AccountNotFound", Effect.die))

export const describeDemoAccount = (demo: DemoAccount, productionUrl: string, sandboxUrl: string) =>
  [
    "",
    "First run: created a demo account (plan growth). These keys are shown only now:",
    `  account     ${demo.accountId}`,
    `  production  ${demo.production.key}`,
    `  sandbox     ${demo.sandbox.key}`,
    "Try it:",
    `  curl -s -H 'x-api-key: ${demo.production.key}' ${productionUrl}/v2/status`,
    `  curl -s -H 'x-api-key: ${demo.sandbox.key}' ${sandboxUrl}/v2/usage`,
    ""
  ].join("\n")
