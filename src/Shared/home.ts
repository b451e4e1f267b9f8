/**
 * `~` in paths from settings, hooks and the model: the home directory, as a shell expands it.
 *
 * @internal
 */
import * as nodePath from "node:path"

/** `~` and `~/x` against home; everything else as written. */
export const expandHome = (path: string, home: string): string =>
  path === "~" ? home : path.startsWith("~/") ? nodePath.join(home, path.slice(2)) : path
