/**
 * What the API's Temporal client and the worker share: how to connect (TLS, mTLS, API key) and
 * the data converter (payloads encrypted, see TemporalSecrets).
 */
import type { DataConverter } from "@temporalio/common"
import { Option, Redacted } from "effect"
import type { AppConfigShape } from "../config/Config.js"
import type { TemporalSecretsShape } from "./TemporalSecrets.js"
import { temporalConnectionOptions } from "./TemporalConnection.js"

type TemporalConfig = AppConfigShape["temporal"]

export const connectionOptionsOf = (temporal: TemporalConfig) =>
  temporalConnectionOptions({
    address: temporal.address,
    tls: temporal.connection.tls,
    serverName: Option.getOrUndefined(temporal.connection.serverName),
    caFile: Option.getOrUndefined(temporal.connection.caFile),
    certFile: Option.getOrUndefined(temporal.connection.certFile),
    keyFile: Option.getOrUndefined(temporal.connection.keyFile),
    apiKey: Option.getOrUndefined(Option.map(temporal.connection.apiKey, Redacted.value))
  })

export const dataConverterOf = (secrets: TemporalSecretsShape): DataConverter =>
  Option.match(secrets.codec, { onNone: () => ({}), onSome: (codec) => ({ payloadCodecs: [codec] }) })
