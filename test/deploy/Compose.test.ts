/**
 * docker-compose.yml and the Dockerfile cannot run here (no Docker engine): their structure is
 * checked instead, against what the images and the service expect.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
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

  it("pins every image to a version", () => {
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
    expect(services["api"].depends_on["temporal-namespace"].condition).toBe("service_completed_successfully")
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
    expect(services["api"].command).toEqual(["npm", "start"])
    expect(services["worker"].command).toEqual(["npm", "run", "worker"])
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
    expect(dockerfile).toMatch(/^CMD \["npm", "start"\]$/m)
    expect(dockerfile).toMatch(/^USER node$/m)
    for (const dir of ["src", "workflows", "worker", "data"]) expect(dockerfile).toContain(`COPY ${dir} ./${dir}`)
  })

  it("every script the compose file runs exists in package.json", async () => {
    const pkg = JSON.parse(await Fs.readFile(Path.join(ROOT, "package.json"), "utf8"))
    expect(pkg.scripts.start).toBeDefined()
    expect(pkg.scripts.worker).toBeDefined()
  })
})
