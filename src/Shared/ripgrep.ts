/**
 * Where the rg binary that `@vscode/ripgrep` ships is, found when Grep or the sandbox first needs it. The package is
 * an ES module that the bundled CLI can only `require` through Node's ES module loader: importing it at start-up
 * cost every `exec` some 7 ms, for a search it may never run.
 */

let found: Promise<string> | undefined

/** The rg binary's path; rejects when the platform's binary package is not installed. */
export const ripgrepPath = (): Promise<string> => found ??= import("@vscode/ripgrep").then((module) => module.rgPath)
