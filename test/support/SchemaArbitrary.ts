/**
 * Values of a schema's type, derived from the schema by Effect's `Arbitrary`, as a fast-check
 * arbitrary: fast-check draws the seed and the size, so its runs (and their seeds, replayed with
 * `fc.assert`'s `seed`) decide the values.
 */
import { Arbitrary, Effect, type Schema } from "effect"
import fc from "fast-check"

export const fromSchema = <S extends Schema.Top>(schema: S): fc.Arbitrary<S["Type"]> => {
  const arbitrary = Arbitrary.schema(schema)
  return fc.record({ seed: fc.nat(), size: fc.integer({ min: 0, max: 20 }) }).map(({ seed, size }) =>
    Effect.runSync(Arbitrary.sampleEffect(arbitrary, { count: 1, seed, size }))[0]!)
}
