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

/**
 * `compute`, once per text (or number), for the few a hot path sees again and again (a query
 * string, a field name, an instant's milliseconds). At most `max` are kept: ever new keys only
 * empty it.
 */
export const perText = <V, K extends string | number = string>(compute: (text: K) => V, max = 256) => {
  const computed = new Map<K, V>()
  return (text: K): V => {
    let value = computed.get(text)
    if (value === undefined) {
      if (computed.size >= max) computed.clear()
      computed.set(text, value = compute(text))
    }
    return value
  }
}

/**
 * `compute`, remembered for the last input each holder gave it, on the holder itself (a
 * connection, whose client sends the same API key with each of its requests). A property rather
 * than a WeakMap entry, which V8 traces as an ephemeron at every young collection. What is
 * remembered lives as long as its holder; with no holder, `compute` runs every time. A value
 * `keep` refuses is not remembered: the holder's last kept value stays.
 */
export const lastPerHolder = <I, V>(compute: (input: I) => V, keep: (value: V) => boolean = () => true) => {
  const slot: unique symbol = Symbol("lastPerHolder")
  type Holder = { [slot]?: { readonly input: I; readonly value: V } }
  return (holder: object | null | undefined, input: I): V => {
    if (holder === undefined || holder === null) return compute(input)
    const last = (holder as Holder)[slot]
    if (last !== undefined && last.input === input) return last.value
    const value = compute(input)
    if (keep(value)) (holder as Holder)[slot] = { input, value }
    return value
  }
}
