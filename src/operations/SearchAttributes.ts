/**
 * Registers the workflows' custom search attributes in the namespace: at each worker start, and
 * by the API's reconciler before it starts again workflows a server lost (a server that lost its
 * state lost them too, and refuses starts that carry them). Idempotent (an attribute already
 * there is fine). Where the connection may not manage the namespace (Temporal Cloud API keys),
 * registration is done by an operator instead and this step only reports what it could not do.
 */
import type { OperatorService } from "@temporalio/client"
// a CommonJS package without statically detectable named exports: loaded whole when external to the bundle
import proto from "@temporalio/proto"
import { SEARCH_ATTRIBUTES } from "../../workflows/shared.js"

const ALREADY_EXISTS = 6

const INDEXED_TYPES = {
  Keyword: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
} as const

/** Registers each attribute; returns the names it could not register, with why. */
export const registerSearchAttributes = async (connection: { readonly operatorService: OperatorService }, namespace: string) => {
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
