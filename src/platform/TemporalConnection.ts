/**
 * The connection options the API's client and the worker share: address, TLS with an optional
 * private CA and server name, mTLS with a client certificate, or an API key (Temporal Cloud,
 * which implies TLS). Files are read when the options are built.
 */
import * as Fs from "node:fs"

export interface TemporalConnectionSettings {
  readonly address: string
  readonly tls: boolean
  readonly serverName?: string | undefined
  readonly caFile?: string | undefined
  readonly certFile?: string | undefined
  readonly keyFile?: string | undefined
  readonly apiKey?: string | undefined
}

export const temporalConnectionOptions = (settings: TemporalConnectionSettings) => {
  if ((settings.certFile === undefined) !== (settings.keyFile === undefined)) {
    throw new Error("TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together (mTLS): set both or neither")
  }
  const wantsTls = settings.tls || settings.apiKey !== undefined || settings.certFile !== undefined ||
    settings.caFile !== undefined || settings.serverName !== undefined
  const tls = wantsTls
    ? {
      ...(settings.serverName === undefined ? {} : { serverNameOverride: settings.serverName }),
      ...(settings.caFile === undefined ? {} : { serverRootCACertificate: Fs.readFileSync(settings.caFile) }),
      ...(settings.certFile === undefined || settings.keyFile === undefined
        ? {}
        : { clientCertPair: { crt: Fs.readFileSync(settings.certFile), key: Fs.readFileSync(settings.keyFile) } })
    }
    : undefined
  return {
    address: settings.address,
    ...(tls === undefined ? {} : { tls }),
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey })
  }
}
