/**
 * Argentine plates: the 1995 format `AAA999` and the Mercosur format `AA999AA`.
 */
const OLD = /^[A-Z]{3}[0-9]{3}$/
const MERCOSUR = /^[A-Z]{2}[0-9]{3}[A-Z]{2}$/

export type PlateFormat = "old" | "mercosur"

/** What an `invalid_plate` refusal says, wherever a plate is refused. */
export const INVALID_PLATE_MESSAGE =
  "The plate must be three letters and three digits (AAA999) or two letters, three digits and two letters (AA999AA)"

/**
 * The plate in upper case when it has one of the two formats, in ASCII letters and digits only.
 * The format is checked before upper-casing: Unicode case mapping turns letters such as `ı`,
 * `ſ` or `ﬁ` into ASCII ones, and they must not make a plate.
 */
export const normalizePlate = (raw: string): string | undefined => {
  if (!/^[A-Za-z0-9]{6,7}$/.test(raw)) return undefined
  const plate = raw.toUpperCase()
  return OLD.test(plate) || MERCOSUR.test(plate) ? plate : undefined
}

export const plateFormat = (plate: string): PlateFormat => (OLD.test(plate) ? "old" : "mercosur")

/** The three digits of a plate (the sandbox's magic plates are chosen by them). */
export const plateDigits = (plate: string): string => plate.replace(/[A-Z]/g, "")
