/**
 * `map` given `key`'s `value`; when it already holds `max` entries, its oldest (first set) goes
 * first. For the caches a client's input fills (keys, plates, operation ids): never more than `max`.
 */
export const setBounded = <K, V>(map: Map<K, V>, max: number, key: K, value: V) => {
  if (map.size >= max) map.delete(map.keys().next().value!)
  map.set(key, value)
}
