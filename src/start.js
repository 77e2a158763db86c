// `npm start`: the API (src/main.ts), run from a cached bundle for a fast start.
import { runBundled } from "./platform/process/bundled.js"

await runBundled("src/main.ts")
