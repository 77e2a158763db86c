/**
 * A small deterministic random source: the same seed text always yields the same sequence.
 * sfc32, seeded from SHA-256 of the text.
 */
import * as Crypto from "node:crypto"

export interface Random {
  /** A float in [0, 1). */
  next(): number
  /** An integer in [min, max]. */
  int(min: number, max: number): number
  pick<A>(items: ReadonlyArray<A>): A
  weighted<A>(items: ReadonlyArray<A>, weight: (a: A) => number): A
  chance(probability: number): boolean
}

export const seededRandom = (seedText: string): Random => {
  const digest = Crypto.createHash("sha256").update(seedText, "utf8").digest()
  let a = digest.readUInt32LE(0)
  let b = digest.readUInt32LE(4)
  let c = digest.readUInt32LE(8)
  let d = digest.readUInt32LE(12)
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0
    const t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    const result = (t + d) | 0
    c = (c + result) | 0
    return (result >>> 0) / 4294967296
  }
  for (let i = 0; i < 12; i++) next() // warm up
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted: (items, weight) => {
      const total = items.reduce((sum, item) => sum + weight(item), 0)
      let roll = next() * total
      for (const item of items) {
        roll -= weight(item)
        if (roll < 0) return item
      }
      return items[items.length - 1]!
    },
    chance: (probability) => next() < probability
  }
  return random
}
