/**
 * `compute`, once per object: the hot paths give the same object again for the same state (a
 * stored vehicle, a row a batch read, an operation as a batch shaped it), so what is derived from
 * it (its shape, its encoded body) is derived once.
 */
export const perObject = <K extends object, V>(compute: (key: K) => V) => {
  const computed = new WeakMap<K, V>()
  return (key: K): V => {
    let value = computed.get(key)
    if (value === undefined) computed.set(key, value = compute(key))
    return value
  }
}
