/**
 * Meter names as the functions' SQL writes them, taken from the API's one list of meters: a meter
 * renamed or removed there fails the type check of the function that counts it.
 */
import type { MeterName } from "../../platform/contract/MeterNames.js"

/** A meter's name as a SQL text literal. */
export const meter = (name: MeterName) => `'${name}'::text`
