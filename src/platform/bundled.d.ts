export declare const ensureBundle: (entry: string, sourceDirs?: ReadonlyArray<string>) => Promise<string>
export declare const runBundled: (entry: string, sourceDirs?: ReadonlyArray<string>) => Promise<void>
