// What the workflow bundle is made of, for the worker and for the prebuilt bundle alike: the
// workflows, and the interceptors every workflow runs with (trace context from the start request).
import * as Path from "node:path"

/**
 * Every folder whose files go into the workflow bundle: the workflows, and the plain definitions
 * they share with the rest of the code (test/architecture/Imports.test.ts holds them to these).
 */
export const WORKFLOW_SOURCE_DIRS = ["workflows", "src/platform/sandboxSafe"]

export const workflowSources = (root) => ({
  workflowsPath: Path.join(root, "workflows", "index.ts"),
  workflowInterceptorModules: [Path.join(root, "workflows", "interceptors.ts")]
})
