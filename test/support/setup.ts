/**
 * Runs before every test file (vitest's `setupFiles`). @effect/vitest 0.30's `layer(...)` installs its runtime by
 * assigning `effect`, `scoped`, `prop`, `flakyTest` and `layer` onto vitest's own `it`, which every file shares, and
 * never takes them back. In a worker that runs several files in one module graph (`isolate: false`), a later file's
 * `it.effect` would then run on an earlier file's layer, without the TestClock (`testClock.adjust is not a
 * function`). Putting @effect/vitest's defaults back before each file gives every file the `it` it would have in a
 * process of its own. (Effect 4's @effect/vitest wraps `it` in a proxy instead of mutating it.)
 */
import { it, makeMethods } from "@effect/vitest"

makeMethods(it)
