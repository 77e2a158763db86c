/**
 * Registers the workflows' custom search attributes in the namespace, once per worker start:
 * idempotent (an attribute already there is fine). Where the connection may not manage the
 * namespace (Temporal Cloud API keys), registration is done by an operator instead and this
 * step only warns.
 */
import type { NativeConnection } from "@temporalio/worker"
// a CommonJS package without statically detectable named exports: loaded whole when external to the bundle
import proto from "@temporalio/proto"
import { SEARCH_ATTRIBUTES } from "../workflows/shared.js"

const ALREADY_EXISTS = 6

const INDEXED_TYPES = {
  Keyword: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
} as const

/** Registers each attribute; returns the names it could not register, with why. */
export const registerSearchAttributes = async (connection: NativeConnection, namespace: string) => {
  const failures: Array<string> = []
  for (const { name, type } of SEARCH_ATTRIBUTES) {
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { [name]: INDEXED_TYPES[type] } })
    } catch (error) {
      const code = (error as { code?: number }).code
      if (code !== ALREADY_EXISTS) failures.push(`${name}: ${(error as Error).message}`)
    }
  }
  return failures
}
