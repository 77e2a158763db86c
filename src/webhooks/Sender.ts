/**
 * One webhook delivery attempt over HTTPS: the stored body, signed now, POSTed with a total
 * deadline (10 s, WEBHOOK_TIMEOUT_MS); redirects are not followed and at most 64 KiB of the answer
 * is read (WEBHOOK_RESPONSE_MAX_BYTES). Unless private
 * networks are allowed, the connection goes to an address checked by the URL policy at this very
 * moment (the check is in the socket's DNS lookup), so DNS rebinding cannot reach inside.
 */
import * as Dns from "node:dns"
import * as Https from "node:https"
import type { LookupFunction } from "node:net"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../platform/config/Config.js"
import { hostOf, nonPublicReason } from "./UrlPolicy.js"

export interface Outgoing {
  readonly url: string
  readonly body: string
  readonly headers: Record<string, string>
}

export type Answer =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "NoAnswer"; readonly reason: string }

export interface SendOptions {
  /** Development and tests: connect to private addresses too. */
  readonly allowPrivate: boolean
  /** The whole attempt's deadline. */
  readonly timeoutMs: number
  /** How much of the answer is read. */
  readonly responseMaxBytes: number
}

/** A DNS lookup that refuses non-public addresses: the socket connects only to checked ones. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  Dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0)
    const list = addresses as unknown as Array<Dns.LookupAddress>
    const refused = list.map((a) => nonPublicReason(a.address)).find((reason) => reason !== undefined)
    if (refused !== undefined) return callback(Object.assign(new Error(`refused: ${refused}`), { code: "EADDRNOTPUBLIC" }), "", 0)
    if (options.all) return (callback as unknown as (e: null, a: Array<Dns.LookupAddress>) => void)(null, list)
    const first = list[0]
    if (first === undefined) return callback(new Error(`no address for ${hostname}`), "", 0)
    callback(null, first.address, first.family)
  })
}

export const send = (outgoing: Outgoing, { allowPrivate, responseMaxBytes, timeoutMs }: SendOptions): Effect.Effect<Answer> =>
  Effect.callback<Answer>((resume, signal) => {
    let url: URL
    try {
      url = new URL(outgoing.url)
    } catch {
      return resume(Effect.succeed({ _tag: "NoAnswer", reason: "the webhook URL is not a valid URL" }))
    }
    const literal = hostOf(url)
    const literalRefusal = allowPrivate ? undefined : nonPublicReason(literal)
    if (literalRefusal !== undefined && !literalRefusal.endsWith("is not an IP address")) {
      return resume(Effect.succeed({ _tag: "NoAnswer", reason: `refused: ${literalRefusal}` }))
    }
    let settled = false
    let deadline: NodeJS.Timeout | undefined
    const done = (answer: Answer) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      resume(Effect.succeed(answer))
    }
    const request = Https.request(url, {
      method: "POST",
      headers: { ...outgoing.headers, "content-type": "application/json", "content-length": Buffer.byteLength(outgoing.body) },
      timeout: timeoutMs,
      signal,
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup })
    }, (response) => {
      let read = 0
      response.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read > responseMaxBytes) response.destroy()
      })
      response.on("close", () => done({ _tag: "Answered", status: response.statusCode ?? 0 }))
      response.on("error", () => done({ _tag: "Answered", status: response.statusCode ?? 0 }))
    })
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)))
    // the socket timeout above is an idle timeout: an endpoint trickling bytes would reset it for
    // ever, so the whole attempt also has a deadline (a status received in time still counts)
    deadline = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs)
    request.on("error", (error) => done({ _tag: "NoAnswer", reason: error.message }))
    request.end(outgoing.body)
  })

/** Where delivery attempts go: out over HTTPS (`layer`), or recorded (`Test`). */
export class WebhookSender extends Context.Service<WebhookSender, {
  readonly send: (outgoing: Outgoing) => Effect.Effect<Answer>
}>()("vda/WebhookSender") {
  /** HTTPS under the configured deadline, answer limit and address policy. */
  static readonly layer = Layer.effect(
    WebhookSender,
    Effect.map(AppConfig, (config) => {
      const options: SendOptions = { allowPrivate: config.webhookAllowPrivateNetworks, ...config.webhookAttempt }
      return WebhookSender.of({ send: (outgoing) => send(outgoing, options) })
    })
  )

  /**
   * Sends nothing: each attempt is recorded (`SentWebhooks`) and answered by `answer`, given the
   * attempt and how many came before it; 200 unless told.
   */
  static readonly Test = (answer: (outgoing: Outgoing, before: number) => Answer = () => ({ _tag: "Answered", status: 200 })) =>
    Layer.effectContext(Effect.sync(() => {
      const sent: Array<Outgoing> = []
      return Context.make(WebhookSender, {
        send: (outgoing) =>
          Effect.sync(() => {
            const before = sent.length
            sent.push(outgoing)
            return answer(outgoing, before)
          })
      }).pipe(Context.add(SentWebhooks, { all: sent }))
    }))
}

/** What `WebhookSender.Test` was asked to send, in order. */
export class SentWebhooks extends Context.Service<SentWebhooks, { readonly all: ReadonlyArray<Outgoing> }>()("vda/SentWebhooks") {}
