export declare const workflowSources: (root: string) => {
  workflowsPath: string
  workflowInterceptorModules: Array<string>
}
