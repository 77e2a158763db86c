/**
 * A read made in another statement's round trip: the feature that reads defines it, and the
 * statement's owner (admission, for polls and reuse checks) runs it beside its own work and hands
 * each request the rows of its value.
 */

/** A row a `ReadAlong` read, its column names as the SQL client gives them. */
export type ReadRow = Readonly<Record<string, unknown>>

export interface ReadAlong {
  /** Requests with different reads are batched apart. */
  readonly name: string
  /** A set-returning SQL expression reading the batch's distinct values, its parameters from `$n` on. */
  readonly from: (parameter: number) => string
  /** `from`'s parameters, for the batch's distinct values. */
  readonly parameters: (values: ReadonlyArray<string>) => ReadonlyArray<unknown>
  /** The value a row was read for; undefined for the row of nulls a read that found nothing gives. */
  readonly valueOf: (row: ReadRow) => string | undefined
}

/** A read along whose rows decode to `A`. */
export interface DecodedReadAlong<A> extends ReadAlong {
  readonly decode: (row: ReadRow) => A
}

/**
 * For a read whose value is made of plain parts joined by "/" (no part holds one): a call of
 * `fn` with one array parameter per part, `types` its parts' SQL types, from `$parameter` on.
 */
export const arrayArguments = (fn: string, types: ReadonlyArray<string>) => (parameter: number) =>
  `${fn}(${types.map((type, i) => `$${parameter + i}::${type}[]`).join(", ")})`

/** `values` split into their `count` "/"-joined parts: one array per part, in order. */
export const partsOf = (values: ReadonlyArray<string>, count: number): ReadonlyArray<ReadonlyArray<string | undefined>> => {
  const split = values.map((value) => value.split("/"))
  return Array.from({ length: count }, (_, part) => split.map((parts) => parts[part]))
}
