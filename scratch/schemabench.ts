import { Schema } from "effect"
import { VehicleResponse, VehicleQueryParams } from "../src/vehicles/Api.js"
const value = { success: true as const, found: true, data: { plate: "AE725VQ", make: "TOYOTA", model: "HILUX 2.8 TDI SRX 4X4 AT D/C", year: 2021, firstRegistered: "2022-03-14", totalOwners: 1, currentOwners: 1, currentLocation: { city: "San Miguel de Tucumán", province: "Tucumán" }, locations: ["San Miguel de Tucumán, Tucumán"], sourceDate: "2026-05-01", modelImage: null } }
const enc = Schema.encodeSync(VehicleResponse)
const dec = Schema.decodeUnknownSync(VehicleQueryParams)
for (let i = 0; i < 2000; i++) { enc(value); dec({}) }
let t = performance.now(); for (let i = 0; i < 20000; i++) enc(value); console.log("encode", ((performance.now() - t) / 20000 * 1000).toFixed(1), "µs")
t = performance.now(); for (let i = 0; i < 20000; i++) dec({ debug: "true" }); console.log("decode params", ((performance.now() - t) / 20000 * 1000).toFixed(1), "µs")
t = performance.now(); for (let i = 0; i < 20000; i++) JSON.stringify(value); console.log("stringify", ((performance.now() - t) / 20000 * 1000).toFixed(1), "µs")
