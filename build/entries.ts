/**
 * The package's entry points, `vehicle-data-api/<name>`, each with the module behind it: the one
 * list the build bundles and declares, and writes package.json's `exports` from.
 */
export const ENTRIES: Readonly<Record<string, string>> = {
  server: "src/server.ts",
  client: "src/client/index.ts",
  "client/testing": "src/client/testing.ts",
  webhooks: "src/receiver/index.ts"
}

/** Where the build puts an entry's code and its declarations, under `dist/`. */
export const builtFiles = (name: string, source: string) => ({
  code: `dist/${name}.js`,
  types: `dist/types/${source.replace(/\.ts$/, ".d.ts")}`
})

/** package.json's `exports`: each entry's declarations and code, and the manifest itself. */
export const exportsOf = (entries: Readonly<Record<string, string>>) => ({
  ...Object.fromEntries(Object.entries(entries).map(([name, source]) => {
    const { code, types } = builtFiles(name, source)
    return [`./${name}`, { types: `./${types}`, default: `./${code}` }]
  })),
  "./package.json": "./package.json"
})
