export declare const WORKFLOW_SOURCE_DIRS: ReadonlyArray<string>
export declare const workflowSources: (root: string) => {
  workflowsPath: string
  workflowInterceptorModules: Array<string>
}
