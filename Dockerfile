# The API and the Temporal worker (same image; docker-compose.yml picks the command).
FROM node:26.10.0-trixie-slim

WORKDIR /app
ENV NODE_ENV=production

# Dependencies only (no dev tools). Install scripts are not needed in the image: it never runs
# the embedded PostgreSQL (DATABASE_URL is given), and esbuild's, swc's and the Temporal core
# bridge's native binaries come in their packages.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

COPY src ./src
COPY workflows ./workflows
COPY worker ./worker
COPY data ./data
COPY tsconfig.json ./

# Build the cached bundles now rather than on first start: the API, the CLI, the worker, and the
# workflows for Temporal's sandbox (the same functions src/start.js, src/cli/vda.js and
# worker/start.js call).
RUN node --input-type=module -e "const b = await import('./src/platform/process/bundled.js'); \
  await b.ensureBundle('src/main.ts'); await b.ensureBundle('src/cli/main.ts'); \
  await b.ensureBundle('worker/main.ts', ['src', 'worker', 'workflows']); await b.ensureWorkflowBundle()" \
  && chown -R node:node /app/node_modules/.cache

USER node
EXPOSE 8080 8081
# `npm start`'s command, V8's flags included (docs/operations.md): a young generation of 2 x 32 MB,
# and no allocation site pretenured, so that a request's objects die young
CMD ["node", "--max-semi-space-size=32", "--no-allocation-site-pretenuring", "src/start.js"]
