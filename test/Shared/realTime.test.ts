/**
 * Real-time waiting: a sleep longer than `setTimeout` takes (2^31 - 1 ms, some 24 days) does not end at once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { realSleep } from "../../src/Shared/realTime.js"

describe("realSleep", () => {
  it.live("a sleep past 2^31 - 1 ms is still asleep when a 50 ms one ends", () =>
    Effect.gen(function*() {
      const first = yield* Effect.raceFirst(
        Effect.as(realSleep(2 ** 31 + 1_000), "long"),
        Effect.as(realSleep(50), "short")
      )
      expect(first).toBe("short")
    }))
})
