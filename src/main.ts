/** `npm start`: the API server (server.ts), in this process. */
import { runServer } from "./server.js"

runServer()
