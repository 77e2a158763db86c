import { defineConfig } from "vitest/config"

export default defineConfig({
  // a `.sql` file imports as its text, as the bundle has it (src/platform/process/bundled.js)
  plugins: [{
    name: "sql-as-text",
    transform: (code, id) => (id.endsWith(".sql") ? { code: `export default ${JSON.stringify(code)}`, map: null } : undefined)
  }],
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts", "test/support/chromiumSetup.ts", "test/support/temporalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // one embedded PostgreSQL serves every file; files run in parallel on their own databases
    pool: "forks",
    sequence: { hooks: "stack" }
  }
})
