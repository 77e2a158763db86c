// `npm run worker`: the Temporal worker (worker/main.ts), run from a cached bundle.
import { runBundled } from "../src/platform/bundled.js"

await runBundled("worker/main.ts", ["src", "worker", "workflows"])
