// The runtime's floor: Node's own HTTP server answering `GET /v2/vehicles/:plate` with a constant
// (FLOOR_ANSWER, the service's own answer for the bench's plate), nothing else. What answering a
// request over this machine's loopback costs in Node before any framework or work.
//
// Prints `{"url": …}` when it listens; ends when its standard input closes.
import { createServer } from "node:http"

const answer = Buffer.from(process.env.FLOOR_ANSWER ?? "{}")
const headers = { "content-type": "application/json", "content-length": String(answer.length) }

const server = createServer((request, response) => {
  if (request.method === "GET" && request.url.startsWith("/v2/vehicles/")) {
    response.writeHead(200, headers)
    response.end(answer)
  } else {
    response.writeHead(404)
    response.end()
  }
})
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })))
process.stdin.on("close", () => process.exit(0)).resume()
