/**
 * What every Operation resource has, whichever feature's endpoint answers it: the modules
 * operation (`operations/Api.ts`) and the vehicle search (`vehicles/SearchOperation.ts`), each
 * answered 202 when accepted.
 */
import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { OPERATION_STATUSES } from "../../workflows/shared.js"
import { DateTimeUtc } from "../platform/contract/Schemas.js"

export const OperationStatus = Schema.Literals(OPERATION_STATUSES)

/** The fields of every kind of operation. */
export const operationFields = {
  id: Schema.String,
  status: OperationStatus,
  plate: Schema.String,
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}

/**
 * An accepted operation as a success of its endpoint: 202, documented under its class's name (a
 * class's encoded side is otherwise `…Encoded`).
 */
export const acceptedSuccess = <S extends Schema.Top & { readonly identifier: string }>(operation: S) =>
  operation.pipe(Schema.annotateEncoded({ identifier: operation.identifier }), HttpApiSchema.status(202))
