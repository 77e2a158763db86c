import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog } from "../../src/catalog/Catalog.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { freshDatabaseLayer } from "../support/Postgres.js"

// the database pool runs on the live clock; the test below on TestClock
layer(Catalog.layer.pipe(Layer.provideMerge(freshDatabaseLayer(4))), { excludeTestServices: true })("catalog service", (it) => {
  it.effect("sees an import (from any process) within a second, and only reloads when the catalog changed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
      const catalog = yield* Catalog
      const vehicle = { make: "VW", model: "GOL TREND 1.6 TRENDLINE", year: 2018 }
      expect((yield* catalog.identify(vehicle))._tag).toBe("CatalogUnavailable")
      yield* catalog.importRecords(FIXTURE_CATALOG)
      // still the snapshot checked less than a second ago
      expect((yield* catalog.identify(vehicle))._tag).toBe("CatalogUnavailable")
      yield* TestClock.adjust("1 second")
      const found = yield* catalog.identify(vehicle)
      expect(found._tag).toBe("Exact")
      // importing the same versions again replaces them, it does not duplicate them
      yield* catalog.importRecords(FIXTURE_CATALOG.slice(0, 1))
      yield* TestClock.adjust("1 second")
      expect((yield* catalog.identify(vehicle))._tag).toBe("Exact")
    }).pipe(Effect.provide(TestClock.layer())))
})
