/**
 * What every error answer must look like, for the fuzz and fault suites: the contract's codes and
 * shape, and nothing internal (stack frames, file paths, SQL, exception names).
 */
import { expect } from "vitest"
import { ErrorCode } from "../../src/platform/http/Errors.js"

export const INTERNAL_DETAIL =
  /\n\s+at |node_modules|\/src\/|\/tmp\/|\/work\/|select |insert |update |SqlError|FiberFailure|Cause|TypeError|RangeError/

/** Asserts the error body's shape and returns it parsed. */
export const expectErrorBody = (text: string, requestId: string | null | undefined, label: string) => {
  expect(text, label).not.toMatch(INTERNAL_DETAIL)
  const body = JSON.parse(text)
  expect(Object.keys(body), label).toEqual(["error"])
  expect(ErrorCode.literals.filter((code) => code !== "internal_error"), label).toContain(body.error.code)
  expect(typeof body.error.message, label).toBe("string")
  expect(typeof body.error.retryable, label).toBe("boolean")
  expect(body.error.requestId, label).toBe(requestId)
  return body.error as { code: string; message: string; retryable: boolean; requestId: string }
}
