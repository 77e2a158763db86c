/**
 * The record modules by name, as the contract's schema: the one list is `MODULES`
 * (workflows/shared.ts), which the workflows share. And the rule a request's list of modules
 * follows, wherever one is answered.
 */
import { Data, Result, Schema } from "effect"
import { MODULES, MODULES_IN_WORDS, type ModuleName } from "../../workflows/shared.js"

export const Module = Schema.Literals(MODULES)
export type Module = ModuleName

export class UnsupportedModule extends Data.TaggedError("UnsupportedModule")<{ readonly modules: ReadonlyArray<string> }> {}
export class DuplicateModule extends Data.TaggedError("DuplicateModule")<{ readonly modules: ReadonlyArray<string> }> {}

const isModule = (name: string): name is ModuleName => (MODULES as ReadonlyArray<string>).includes(name)

/** The modules `requested` names, in the spec's order; refused if it names one that does not exist, or one twice. */
export const requestedModules = (
  requested: ReadonlyArray<string>
): Result.Result<ReadonlyArray<ModuleName>, UnsupportedModule | DuplicateModule> => {
  const unknown = requested.filter((m) => !isModule(m))
  if (unknown.length > 0) return Result.fail(new UnsupportedModule({ modules: unknown }))
  const repeated = requested.filter((m, i) => requested.indexOf(m) !== i)
  if (repeated.length > 0) return Result.fail(new DuplicateModule({ modules: [...new Set(repeated)] }))
  return Result.succeed(MODULES.filter((m) => requested.includes(m)))
}

/** Modules as a refusal names them. */
export const listed = (modules: ReadonlyArray<string>) => modules.join(", ")

/** What the `unsupported_module` and `duplicate_module` refusals say. */
export const refusalMessage = (refusal: UnsupportedModule | DuplicateModule) =>
  refusal._tag === "UnsupportedModule"
    ? `Unsupported module ${listed(refusal.modules)}: use ${MODULES_IN_WORDS}`
    : `Module requested more than once: ${listed(refusal.modules)}`
