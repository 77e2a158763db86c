// `npm run worker`: the Temporal worker (worker/main.ts), run from a cached bundle, with the
// workflows pre-bundled for Temporal's sandbox (handed over in VDA_WORKFLOW_BUNDLE).
import { ensureWorkflowBundle, runBundled } from "../src/platform/process/bundled.js"

process.env.VDA_WORKFLOW_BUNDLE = await ensureWorkflowBundle()
await runBundled("worker/main.ts", ["src", "worker", "workflows"])
