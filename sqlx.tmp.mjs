import pg from "pg"
import fs from "fs"
import crypto from "crypto"
const d = fs.readFileSync("/tmp/dd", "utf8").trim(), key = fs.readFileSync("/tmp/ukey", "utf8").trim()
const cred = JSON.parse(fs.readFileSync(d + "/postgres-credentials.json"))
const port = fs.readFileSync(d + "/postgres/postmaster.pid", "utf8").split("\n")[3]
export const client = async () => { const c = new pg.Client({ connectionString: `postgres://${cred.user}:${cred.password}@127.0.0.1:${port}/postgres` }); await c.connect(); return c }
export const hash = crypto.createHash("sha256").update(key).digest("hex")
export const dataDir = d
export const batchArgs = (n, fp) => {
  const month = new Date("2026-11-01T03:00:00Z"), day = new Date("2026-11-24T03:00:00Z")
  const req = [], meter = [], period = [], amount = [], limited = [], limit = [], distinct = []
  for (let i = 1; i <= n; i++) {
    req.push(i, i, i); meter.push("plate_queries", "unique_plates", "v2:plate_queries"); period.push(month, day, month); amount.push(1, 1, 1); limited.push(true, true, false); limit.push(null, null, null); distinct.push(null, "FFA801", null)
  }
  return [Array(n).fill(hash), Array(n).fill("production"), Array(n).fill(new Date()), Array(n).fill(fp), req, meter, period, amount, limited, limit, distinct]
}
export const AC = "select * from vda_admit_consume($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::integer[], $6::text[], $7::timestamptz[], $8::integer[], $9::boolean[], $10::integer[], $11::text[])"
export const time = async (c, label, sql, args, R = 100) => {
  for (let r = 0; r < 10; r++) await c.query(sql, args)
  const t0 = performance.now()
  for (let r = 0; r < R; r++) await c.query(sql, args)
  console.log(label, ((performance.now() - t0) / R).toFixed(3), "ms")
}
