/**
 * What the API's Temporal client and the worker share: how to connect (TLS, mTLS, API key) and
 * the data converter (payloads encrypted when TEMPORAL_CODEC_KEYS is set).
 */
import type { DataConverter } from "@temporalio/common"
import { Option, Redacted } from "effect"
import type { AppConfig } from "./Config.js"
import { makeAesGcmCodec, parseKeyRing } from "./TemporalCodec.js"
import { temporalConnectionOptions } from "./TemporalConnection.js"

type TemporalConfig = AppConfig["temporal"]

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

/** The payload codec of TEMPORAL_CODEC_KEYS, if set. */
export const payloadCodecOf = (temporal: TemporalConfig) =>
  Option.map(temporal.codecKeys, (keys) => makeAesGcmCodec(parseKeyRing(Redacted.value(keys))))

export const dataConverterOf = (temporal: TemporalConfig): DataConverter =>
  Option.match(payloadCodecOf(temporal), { onNone: () => ({}), onSome: (codec) => ({ payloadCodecs: [codec] }) })
