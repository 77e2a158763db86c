export declare const EXTERNAL_PACKAGES: ReadonlyArray<string>
export declare const ensureBundle: (entry: string, sourceDirs?: ReadonlyArray<string>) => Promise<string>
export declare const ensureWorkflowBundle: () => Promise<string>
export declare const runBundled: (entry: string, sourceDirs?: ReadonlyArray<string>) => Promise<void>
