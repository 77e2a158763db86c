/**
 * What the clients must make of each error of the contract: every code, with each status it is
 * answered with, in v2's body and v1's envelope, and the fields the client's error reports.
 */
import { expect } from "vitest"
import { VehicleDataApiError } from "../../src/client/index.js"
import type { ErrorCode } from "../../src/platform/http/Errors.js"

/** The fields the client's error documents. */
export const fieldsOf = (error: unknown) => {
  expect(error).toBeInstanceOf(VehicleDataApiError)
  const { code, message, status, requestId, retryable, retryAfter, details } = error as VehicleDataApiError
  return { code, message, status, requestId, retryable, retryAfter, details }
}

/** Each code of the contract and the statuses it is answered with (the spec's Errors, and the pipeline's 405, 413, 415). */
export const ANSWERED_WITH: Record<ErrorCode, ReadonlyArray<number>> = {
  invalid_api_key: [401],
  access_denied: [403],
  invalid_plate: [400],
  invalid_request: [400, 404, 405, 413, 415],
  unsupported_module: [400],
  duplicate_module: [400],
  module_not_enabled: [403],
  quota_exceeded: [429],
  rate_limit_exceeded: [429],
  operation_not_found: [404],
  temporarily_unavailable: [503],
  internal_error: [500]
}

export const DETAILS = { meter: "requests", limit: 60, used: 60, resetAt: "2026-11-21T15:01:00.000Z" }

/** Every (code, status, envelope) the client must understand, with what it must report. */
export const errorCases = Object.entries(ANSWERED_WITH).flatMap(([code, statuses]) =>
  statuses.flatMap((status) =>
    [false, true].map((v1) => {
      const limited = status === 429 || status === 503
      const answer = {
        status,
        code,
        retryable: limited,
        v1,
        ...(status === 429 ? { details: DETAILS } : {}),
        ...(limited ? { retryAfter: 17 } : {})
      }
      const expected = {
        code,
        message: `refused: ${code}`,
        status,
        requestId: "req_fake",
        retryable: limited,
        retryAfter: limited ? 17 : undefined,
        details: status === 429 ? { ...DETAILS, resetAt: new Date(DETAILS.resetAt) } : undefined
      }
      return { name: `${code} ${status}${v1 ? " (v1)" : ""}`, answer, expected }
    })
  )
)

