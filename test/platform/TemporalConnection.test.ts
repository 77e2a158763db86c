/**
 * The connection options of the Temporal client and worker: plain, TLS with a private CA and
 * server name, mTLS, and Temporal Cloud's API key; a certificate without its key is refused, and
 * the API key never appears in an error.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { ConnectionOptions } from "@temporalio/client"
import type { NativeConnectionOptions } from "@temporalio/worker"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { temporalConnectionOptions } from "../../src/platform/temporal/TemporalConnection.js"

let dir: string
const file = (name: string) => Path.join(dir, name)

beforeAll(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "vda-tls-"))
  await Fs.writeFile(file("ca.pem"), "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")
  await Fs.writeFile(file("client.pem"), "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n")
  await Fs.writeFile(file("client.key"), "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n")
})
afterAll(() => Fs.rm(dir, { recursive: true, force: true }))

describe("Temporal connection options", () => {
  it("plain: the address only, accepted by the client and the worker", () => {
    const options = temporalConnectionOptions({ address: "temporal:7233", tls: false })
    expect(options).toEqual({ address: "temporal:7233" })
    const client: ConnectionOptions = options
    const worker: NativeConnectionOptions = options
    expect(client.address).toBe(worker.address)
  })

  it("TLS with a private CA and a server name", () => {
    const options = temporalConnectionOptions({ address: "t:7233", tls: true, caFile: file("ca.pem"), serverName: "temporal.internal" })
    expect(options.tls).toEqual({ serverNameOverride: "temporal.internal", serverRootCACertificate: expect.any(Buffer) })
    expect(options.tls!.serverRootCACertificate!.toString()).toContain("CA")
  })

  it("mTLS with the client's certificate and key", () => {
    const options = temporalConnectionOptions({ address: "t:7233", tls: true, certFile: file("client.pem"), keyFile: file("client.key") })
    expect(options.tls!.clientCertPair!.crt.toString()).toContain("CLIENT")
    expect(options.tls!.clientCertPair!.key.toString()).toContain("KEY")
  })

  it("a certificate without its key (or the reverse) is refused", () => {
    expect(() => temporalConnectionOptions({ address: "t:7233", tls: true, certFile: file("client.pem") })).toThrow(
      "TEMPORAL_TLS_KEY_FILE=unset: TEMPORAL_TLS_CERT_FILE is set without it (mTLS needs both); set both or neither"
    )
    expect(() => temporalConnectionOptions({ address: "t:7233", tls: true, keyFile: file("client.key") })).toThrow(
      "TEMPORAL_TLS_CERT_FILE=unset: TEMPORAL_TLS_KEY_FILE is set without it (mTLS needs both); set both or neither"
    )
  })

  it("a file that cannot be read is refused with its setting, its path and what to do", () => {
    expect(() => temporalConnectionOptions({ address: "t:7233", tls: true, caFile: file("missing.pem") })).toThrow(
      `TEMPORAL_TLS_CA_FILE=${file("missing.pem")}: cannot read it (ENOENT: no such file or directory, open '${file("missing.pem")}'); give the path of a readable PEM file`
    )
  })

  it("an API key implies TLS (Temporal Cloud) and never appears in an error", () => {
    const options = temporalConnectionOptions({ address: "ns.acct.tmprl.cloud:7233", tls: false, apiKey: "tk_secret_123" })
    expect(options).toEqual({ address: "ns.acct.tmprl.cloud:7233", tls: {}, apiKey: "tk_secret_123" })
    let message = ""
    try {
      temporalConnectionOptions({ address: "t:7233", tls: false, apiKey: "tk_secret_123", certFile: file("client.pem") })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(/mTLS needs both/)
    expect(message).not.toContain("tk_secret_123")
  })
})
