/**
 * The record modules by name, as the contract's schema: the one list is `MODULES`
 * (workflows/shared.ts), which the workflows share.
 */
import { Schema } from "effect"
import { MODULES, type ModuleName } from "../../workflows/shared.js"

export const Module = Schema.Literals(MODULES)
export type Module = ModuleName
