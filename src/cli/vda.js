#!/usr/bin/env node
// The `vda` admin CLI (see src/cli/main.ts), run from a cached bundle for a fast start.
import { runBundled } from "../platform/process/bundled.js"

await runBundled("src/cli/main.ts")
