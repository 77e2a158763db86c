export declare const workflowSources: (root: string) => {
  readonly workflowsPath: string
  readonly workflowInterceptorModules: ReadonlyArray<string>
}
