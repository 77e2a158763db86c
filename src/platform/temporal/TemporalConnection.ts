/**
 * The connection options the API's client and the worker share: address, TLS with an optional
 * private CA and server name, mTLS with a client certificate, or an API key (Temporal Cloud,
 * which implies TLS). Files are read when the options are built; a file that cannot be read, or
 * half of a client certificate pair, throws a StartupError naming the setting.
 */
import * as Fs from "node:fs"
import { describeCause, startupError } from "../process/Startup.js"

export interface TemporalConnectionSettings {
  readonly address: string
  readonly tls: boolean
  readonly serverName?: string | undefined
  readonly caFile?: string | undefined
  readonly certFile?: string | undefined
  readonly keyFile?: string | undefined
  readonly apiKey?: string | undefined
}

const readPem = (setting: string, file: string) => {
  try {
    return Fs.readFileSync(file)
  } catch (error) {
    throw startupError(setting, file, `cannot read it (${describeCause(error)})`, "give the path of a readable PEM file")
  }
}

export const temporalConnectionOptions = (settings: TemporalConnectionSettings) => {
  if ((settings.certFile === undefined) !== (settings.keyFile === undefined)) {
    const [set, unset] = settings.certFile === undefined ? ["TEMPORAL_TLS_KEY_FILE", "TEMPORAL_TLS_CERT_FILE"] : ["TEMPORAL_TLS_CERT_FILE", "TEMPORAL_TLS_KEY_FILE"]
    throw startupError(unset, "unset", `${set} is set without it (mTLS needs both)`, "set both or neither")
  }
  const wantsTls = settings.tls || settings.apiKey !== undefined || settings.certFile !== undefined ||
    settings.caFile !== undefined || settings.serverName !== undefined
  const tls = wantsTls
    ? {
      ...(settings.serverName === undefined ? {} : { serverNameOverride: settings.serverName }),
      ...(settings.caFile === undefined ? {} : { serverRootCACertificate: readPem("TEMPORAL_TLS_CA_FILE", settings.caFile) }),
      ...(settings.certFile === undefined || settings.keyFile === undefined
        ? {}
        : { clientCertPair: { crt: readPem("TEMPORAL_TLS_CERT_FILE", settings.certFile), key: readPem("TEMPORAL_TLS_KEY_FILE", settings.keyFile) } })
    }
    : undefined
  return {
    address: settings.address,
    ...(tls === undefined ? {} : { tls }),
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey })
  }
}
