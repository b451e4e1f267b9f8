/**
 * Everything a file tool does is bounded in time as well as in size: each has a finite default timeout (on timeout
 * the call's signal stops the work: Read's stream, Glob's crawl, Write's temp file; Grep kills ripgrep).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import * as FileTools from "../../../src/Tools/FileTools.js"

describe("file tools are bounded in time", () => {
  it("every file tool has a finite default timeout, at most two minutes", () => {
    for (const tool of FileTools.tools) {
      expect(Duration.isFinite(tool.definition.timeout), tool.definition.name).toBe(true)
      expect(Duration.lessThanOrEqualTo(tool.definition.timeout, Duration.minutes(2)), tool.definition.name).toBe(true)
    }
  })
})
