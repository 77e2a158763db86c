import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock, TestContext } from "effect"
import { Catalog } from "../../src/catalog/Catalog.js"
import { pgClientLayer } from "../../src/platform/Database.js"
import { FIXTURE_CATALOG } from "../support/CatalogFixtures.js"
import { freshDatabase } from "../support/Postgres.js"

const DatabaseLive = Layer.unwrapEffect(
  Effect.promise(freshDatabase).pipe(Effect.map((url) => pgClientLayer(Redacted.make(url), 4)))
)

layer(Catalog.Default.pipe(Layer.provideMerge(DatabaseLive)), { excludeTestServices: true })("catalog service", (it) => {
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
    }).pipe(Effect.provide(TestContext.TestContext)))
})
