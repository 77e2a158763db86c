/** The codec key of the live tests (test only): the exported history fixtures are encrypted with it. */
export const LIVE_CODEC_KEYS = `live-2026-11:${Buffer.from("live-test-key-32-bytes-long.....").toString("base64")}`
