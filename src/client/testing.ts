/**
 * For integrators' tests: a client of the sandbox of a local server (`npm start`), or one that
 * answers from the sandbox's generators in process (`layerTest`), so a test needs no network.
 */
import { Effect, Layer, Redacted } from "effect"
import { KEY_PREFIX } from "../principal/Domain.js"
import { type ClientOptions, makeWith, VehicleDataClient } from "./Client.js"
import { makePromiseClient, type PromiseClient, promised } from "./PromiseClient.js"
import type { RetryOptions } from "./Retry.js"
import { sandboxHttpClient } from "./Sandbox.js"

export { makeSandbox, sandboxHttpClient } from "./Sandbox.js"

/** The sandbox listener of `npm start`. */
export const LOCAL_SANDBOX_URL = "http://localhost:8081"

/** Sandbox keys are `vda_test_…`: a production key is refused before any request is made. */
const SANDBOX_KEY_PREFIX = KEY_PREFIX.sandbox

export interface LocalSandboxOptions {
  /** The sandbox key (`vda_test_…`), from the first-run banner or `vda keys create --environment sandbox`. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** Where the sandbox listens (`LOCAL_SANDBOX_URL` by default). */
  readonly baseUrl?: string | URL
  readonly retry?: RetryOptions | false
}

const sandboxOptions = (options: LocalSandboxOptions): ClientOptions => {
  const key = Redacted.isRedacted(options.apiKey) ? Redacted.value(options.apiKey) : options.apiKey
  if (!key.startsWith(SANDBOX_KEY_PREFIX)) {
    throw new Error(`A sandbox client takes a sandbox key (${SANDBOX_KEY_PREFIX}…), not a production one`)
  }
  return { baseUrl: options.baseUrl ?? LOCAL_SANDBOX_URL, apiKey: options.apiKey, ...(options.retry === undefined ? {} : { retry: options.retry }) }
}

/** `VehicleDataClient` for the sandbox of a local server, over `fetch`. */
export const layerLocalSandbox = (options: LocalSandboxOptions): Layer.Layer<VehicleDataClient> =>
  Layer.unwrap(Effect.sync(() => VehicleDataClient.layerFetch(sandboxOptions(options))))

export interface TestOptions {
  /** Off by default: the in-process sandbox answers at once, and a test's clock need not move for retries. */
  readonly retry?: RetryOptions | false
}

const inProcess = (options: TestOptions): ClientOptions => ({
  baseUrl: "http://sandbox.test",
  apiKey: `${SANDBOX_KEY_PREFIX}in_process`,
  retry: options.retry ?? false
})

/** `VehicleDataClient` answered by a fresh in-process sandbox (see `Sandbox.ts`): no network, no server. */
export const layerTest = (options: TestOptions = {}): Layer.Layer<VehicleDataClient> =>
  Layer.effect(VehicleDataClient, Effect.suspend(() => makeWith(sandboxHttpClient(), inProcess(options))))

/** The Promise client answered by a fresh in-process sandbox. */
export const makeTestPromiseClient = (options: TestOptions = {}): PromiseClient =>
  promised(Effect.runSync(makeWith(sandboxHttpClient(), inProcess(options))))

/** The Promise client for the sandbox of a local server. */
export const makeLocalSandboxPromiseClient = (options: LocalSandboxOptions): PromiseClient => makePromiseClient(sandboxOptions(options))
