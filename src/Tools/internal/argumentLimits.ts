/**
 * What the kernel refuses in a program's arguments and in paths, checked before anything is spawned or opened, so
 * bad input from the model is an input error with a reason, never a crash:
 *
 * - no argument, environment entry or path may hold a NUL byte (C strings end there; Node refuses them outright);
 * - one argument may be at most `MAX_ARG_STRLEN` bytes (Linux: 32 pages, 131,072 bytes with its terminating NUL);
 * - all arguments and the environment together at most `ARG_MAX` (2 MiB with the default 8 MiB stack);
 * - a path at most `PATH_MAX` (4,096) bytes, each of its names at most `NAME_MAX` (255) bytes.
 *
 * The input schemas carry the per-value checks ({@link ArgumentString}, {@link PathString}); {@link argvProblem}
 * checks a whole argv and environment right before a spawn.
 *
 * @since 0.2.0
 * @internal
 */
import * as Schema from "effect/Schema"

/** Bytes one argument may hold, without its terminating NUL. */
export const maxArgumentBytes = 131_072 - 1

/** Bytes all arguments and environment entries may hold together (each with its NUL and pointer). */
export const maxArgvBytes = 2 * 1024 * 1024

/** Bytes of a whole path, and of one name in it. */
export const maxPathBytes = 4_096
export const maxNameBytes = 255

const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KB`

const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8")

/**
 * Why a string cannot be one argument of a program, or undefined. `spare` bytes are kept for what surrounds it;
 * `nulHint` tells the model what to write instead of a NUL byte, where there is a way.
 */
export const argumentProblem = (value: string, spare = 0, nulHint?: string): string | undefined => {
  if (value.includes("\0")) {
    return `contains a NUL byte (\\0), which no program argument can hold${
      nulHint === undefined ? "" : ` (${nulHint})`
    }`
  }
  const bytes = utf8Length(value)
  const limit = maxArgumentBytes - spare
  return bytes > limit
    ? `is ${kb(bytes)} long, over the ${kb(limit)} the system allows for one program argument`
    : undefined
}

/** Why a string cannot be a path, or undefined. */
export const pathProblem = (value: string): string | undefined => {
  if (value.includes("\0")) return "contains a NUL byte (\\0), which no file path can hold"
  const bytes = utf8Length(value)
  if (bytes > maxPathBytes) return `is ${bytes} bytes long, over the ${maxPathBytes} bytes the system allows for a path`
  const long = value.split("/").find((name) => utf8Length(name) > maxNameBytes)
  return long === undefined
    ? undefined
    : `has a name of ${utf8Length(long)} bytes, over the ${maxNameBytes} bytes the system allows for one file name`
}

/**
 * A string that can be passed to a program as one argument (no NUL, at most {@link maxArgumentBytes} minus `spare`),
 * described for the model. The JSON Schema a provider sees is a plain string with that description (an empty
 * `jsonSchema` annotation keeps the description, which a bare refinement would lose); the decoder enforces the check.
 */
export const ArgumentString = (
  description: string,
  options: { readonly spare?: number; readonly nulHint?: string } = {}
) =>
  Schema.String.annotations({ description }).pipe(
    Schema.filter((value) => argumentProblem(value, options.spare ?? 0, options.nulHint) ?? true, { jsonSchema: {} })
  )

/**
 * A string that can be a path (no NUL, at most {@link maxPathBytes}, names at most {@link maxNameBytes}), described for
 * the model.
 */
export const PathString = (description: string) =>
  Schema.String.annotations({ description }).pipe(
    Schema.filter((value) => pathProblem(value) ?? true, { jsonSchema: {} })
  )

/**
 * Why the kernel would refuse to start `argv` with `env`, or undefined: the last check before a spawn, for values
 * that did not come through a schema (the environment, wrapped argv).
 */
export const argvProblem = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {}
): string | undefined => {
  let total = 0
  for (const [i, arg] of argv.entries()) {
    const problem = argumentProblem(arg)
    if (problem !== undefined) return `argument ${i} ${problem}`
    total += utf8Length(arg) + 1 + 8
  }
  for (const [name, value] of Object.entries(env)) {
    const entry = `${name}=${value}`
    const problem = argumentProblem(entry)
    if (problem !== undefined) return `the environment variable ${name} ${problem}`
    total += utf8Length(entry) + 1 + 8
  }
  return total > maxArgvBytes
    ? `the arguments and environment are ${kb(total)} together, over the ${kb(maxArgvBytes)} the system allows`
    : undefined
}
