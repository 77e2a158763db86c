// What the workflow bundle is made of, for the worker and for the prebuilt bundle alike: the
// workflows, and the interceptors every workflow runs with (trace context from the start request).
import * as Path from "node:path"

export const workflowSources = (root) => ({
  workflowsPath: Path.join(root, "workflows", "index.ts"),
  workflowInterceptorModules: [Path.join(root, "workflows", "interceptors.ts")]
})
