/**
 * docker-compose.yml and the Dockerfile cannot run here (no Docker engine): their structure is
 * checked instead, against what the images and the service expect.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import { DEVELOPMENT_PLATE_HASH_SALT } from "../../src/platform/Config.js"
import { SEARCH_ATTRIBUTES } from "../../workflows/shared.js"
import { ROOT } from "../support/Processes.js"

const compose = parse(await Fs.readFile(Path.join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, any>
  volumes: Record<string, unknown>
}
const services = compose.services
const dockerfile = await Fs.readFile(Path.join(ROOT, "Dockerfile"), "utf8")

describe("docker-compose.yml", () => {
  it("has the app's database, Temporal (database, schema job, server, namespace job, UI), the API and the worker", () => {
    expect(Object.keys(services).sort()).toEqual([
      "api", "app-postgres", "temporal", "temporal-namespace", "temporal-postgresql", "temporal-schema", "temporal-ui", "worker"
    ])
  })

  it("pins every image to a version (never latest)", () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue
      expect(service.image, name).toMatch(/^[a-z0-9/._-]+:\d+(\.\d+)+$/)
    }
    expect(services["temporal"].image).toBe("temporalio/server:1.31.0")
    expect(services["temporal-schema"].image).toBe(services["temporal-namespace"].image)
    expect(services["temporal-ui"].image).toMatch(/^temporalio\/ui:/)
  })

  it("orders start-up through health checks and completed one-shot jobs", () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, condition] of Object.entries<{ condition: string }>(service.depends_on ?? {})) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined()
        const target = services[dependency]
        if (condition.condition === "service_healthy") expect(target.healthcheck, dependency).toBeDefined()
        else expect(condition.condition).toBe("service_completed_successfully")
      }
    }
    expect(services["temporal"].depends_on["temporal-schema"].condition).toBe("service_completed_successfully")
    for (const name of ["api", "worker"]) {
      expect(services[name].depends_on["temporal-namespace"].condition).toBe("service_completed_successfully")
      expect(services[name].depends_on["app-postgres"].condition).toBe("service_healthy")
    }
    expect(services["worker"].depends_on["api"].condition).toBe("service_healthy") // the API migrates the database
    expect(services["temporal-ui"].depends_on["temporal"].condition).toBe("service_healthy")
  })

  it("gives every long-running service a health check", () => {
    for (const name of ["app-postgres", "temporal-postgresql", "temporal", "api", "worker"]) {
      expect(services[name].healthcheck?.test, name).toBeDefined()
    }
    expect(services["api"].healthcheck.test.join(" ")).toContain("http://localhost:8080/readyz")
    expect(services["worker"].healthcheck.test.join(" ")).toContain(`:${services["worker"].environment.WORKER_ADMIN_PORT}/readyz`)
  })

  it("registers exactly the workflows' search attributes, as Keywords, in the namespace job", () => {
    const script: string = services["temporal-namespace"].command[0]
    const list = /for attribute in ([^;]+);/.exec(script)?.[1]?.trim().split(/\s+/)
    expect(list).toEqual(SEARCH_ATTRIBUTES.map((a) => a.name))
    expect(new Set(SEARCH_ATTRIBUTES.map((a) => a.type))).toEqual(new Set(["Keyword"]))
    expect(script).toContain("--type Keyword")
    // $$ is compose's escape for a literal $ in the shell script
    expect(script).toContain('search-attribute create --namespace default --name "$$attribute"')
  })

  it("stops each process after its drain, with signals reaching node itself", () => {
    const seconds = (value: string) => Number(/^(\d+)s$/.exec(value)?.[1])
    expect(seconds(services["api"].stop_grace_period)).toBeGreaterThan(10) // the API drains for up to 10 s
    expect(seconds(services["worker"].stop_grace_period) * 1000).toBeGreaterThan(
      Number(services["worker"].environment.TEMPORAL_WORKER_SHUTDOWN_GRACE_MS)
    )
    for (const name of ["api", "worker"]) {
      expect(services[name].init).toBe(true)
      expect(services[name].command[0]).toBe("node")
    }
  })

  it("serves the codec endpoint to the UI from the worker, on loopback only", () => {
    const worker = services["worker"]
    expect(worker.ports).toEqual([`127.0.0.1:${worker.environment.CODEC_SERVER_PORT}:${worker.environment.CODEC_SERVER_PORT}`])
    expect(worker.environment.CODEC_SERVER_CORS_ORIGINS).toBe("http://localhost:8233")
    expect(services["temporal-ui"].environment.TEMPORAL_CODEC_ENDPOINT).toBe(`http://localhost:${worker.environment.CODEC_SERVER_PORT}`)
  })

  it("runs the API and the worker on the app's own database with the Temporal engine", () => {
    for (const name of ["api", "worker"]) {
      const env = services[name].environment
      expect(env.WORKFLOW_ENGINE).toBe("temporal")
      expect(env.TEMPORAL_ADDRESS).toBe("temporal:7233")
      const url = new URL(env.DATABASE_URL)
      expect(url.hostname).toBe("app-postgres")
      expect(url.pathname).toBe(`/${services["app-postgres"].environment.POSTGRES_DB}`)
      expect(url.username).toBe(services["app-postgres"].environment.POSTGRES_USER)
    }
    expect(services["api"].command).toEqual(["node", "src/start.js"])
    expect(services["worker"].command).toEqual(["node", "worker/start.js"])
    for (const name of ["api", "worker"]) {
      const env = services[name].environment
      expect(env.TEMPORAL_TASK_QUEUE).toBe("vehicle-data")
      expect(env.PLATE_HASH_SALT).toBe(`\${PLATE_HASH_SALT:-${DEVELOPMENT_PLATE_HASH_SALT}}`)
      expect(env.TEMPORAL_CODEC_KEYS).toBe("${TEMPORAL_CODEC_KEYS:-}")
    }
    expect(services["api"].ports).toEqual(["8080:8080", "8081:8081"])
    expect(services["api"].environment.SANDBOX_PORT).toBe("8081")
  })

  it("keeps Temporal's databases apart from the app's and exposes the UI beside the API", () => {
    expect(services["temporal"].environment.POSTGRES_SEEDS).toBe("temporal-postgresql")
    expect(services["temporal-schema"].command[0]).toContain("temporal_visibility")
    expect(services["temporal-ui"].ports).toEqual(["8233:8080"])
    expect(services["temporal-ui"].environment.TEMPORAL_ADDRESS).toBe("temporal:7233")
    expect(Object.keys(compose.volumes).sort()).toEqual(["app-data", "temporal-data"])
  })
})

describe("Dockerfile", () => {
  it("installs production dependencies from the lockfile and starts the API", () => {
    expect(dockerfile).toMatch(/^FROM node:\d+\.\d+\.\d+-bookworm-slim$/m)
    expect(dockerfile).toContain("npm ci --omit=dev")
    expect(dockerfile).toMatch(/^CMD \["node", "src\/start\.js"\]$/m)
    expect(dockerfile).toMatch(/^USER node$/m)
    for (const dir of ["src", "workflows", "worker", "data"]) expect(dockerfile).toContain(`COPY ${dir} ./${dir}`)
  })

  it("runs the same entry points as npm start and npm run worker", async () => {
    const pkg = JSON.parse(await Fs.readFile(Path.join(ROOT, "package.json"), "utf8"))
    expect(pkg.scripts.start).toBe(services["api"].command.join(" "))
    expect(pkg.scripts.worker).toBe(services["worker"].command.join(" "))
  })

  it("prebuilds every bundle the entry points run, with the same calls", async () => {
    const calls = (source: string) => [...source.matchAll(/(ensureWorkflowBundle\(\)|runBundled\(([^)]*)\)|ensureBundle\(([^)]*)\))/g)]
      .map((m) => m[1]!.replace(/^runBundled/, "ensureBundle"))
    const built = calls(dockerfile.replace(/\\\n\s*/g, "")).map((call) => call.replace(/'/g, '"'))
    for (const entry of ["src/start.js", "src/cli/vda.js", "worker/start.js"]) {
      for (const call of calls(await Fs.readFile(Path.join(ROOT, entry), "utf8"))) expect(built, entry).toContain(call)
    }
  })
})
