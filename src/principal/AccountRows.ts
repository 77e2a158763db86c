/**
 * The account rows a caller is made of: an account, and the account with its plan's allowances
 * resolved (standard or custom), as the accounts read it and as the admission of a key returns it.
 */
import { Schema } from "effect"
import { Environment } from "../platform/http/RequestContext.js"
import { NonNegativeInt } from "../platform/contract/Schemas.js"
import { allowanceFields, PlanId } from "./Domain.js"

export const AccountRow = Schema.Struct({
  id: Schema.String,
  owner: Schema.String,
  plan: PlanId,
  timezone: Schema.String,
  createdAt: Schema.Date
})
export type AccountRow = typeof AccountRow.Type

/** An account with the allowances of its plan resolved (standard or custom); the custom terms are null on other plans. */
export const EntitledAccountRow = AccountRow.mapFields((fields) => ({
  ...fields,
  ...allowanceFields,
  modulePriceArs: Schema.NullOr(NonNegativeInt),
  includedModules: Schema.NullOr(NonNegativeInt)
}))
export type EntitledAccountRow = typeof EntitledAccountRow.Type

/** An active key with its account's allowances. */
export const KeyLookupRow = EntitledAccountRow.mapFields(({ createdAt: _, ...fields }) => ({
  ...fields,
  keyId: Schema.String,
  keyEnvironment: Environment
}))
export type KeyLookupRow = typeof KeyLookupRow.Type
