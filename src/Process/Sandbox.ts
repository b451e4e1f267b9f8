/**
 * The operating-system sandbox for commands: `@anthropic-ai/sandbox-runtime` (bubblewrap, seccomp and a filtering
 * proxy on Linux; Seatbelt on macOS), driven by a {@link SandboxPolicy} chosen per call.
 *
 * - **File system**: everything readable except {@link SandboxPolicy.unreadable}; writable only
 *   {@link SandboxPolicy.writable} minus {@link SandboxPolicy.protectedPaths}. An empty `writable` is a read-only
 *   machine (sandbox-runtime keeps its own scratch directory `/tmp/claude` and the child's stdio writable).
 * - **Network**: the sandbox has no network namespace of its own; the only way out is sandbox-runtime's proxy, which
 *   lets a connection through only while a call whose policy names that host is running
 *   ({@link SandboxPolicy.domains}; sandbox-runtime 0.0.78 decides network per process, so the grants of running calls
 *   are what it consults). No domains: nothing gets out.
 * - **Lifetime**: sandbox-runtime is one per process; every {@link layer} shares it (reference counted) and the last
 *   one to close resets it. Mount points it creates for protected paths that do not exist are removed after each
 *   call.
 *
 * {@link probe} tells whether the sandbox can run here (bwrap, socat and user namespaces on Linux) by running `true`
 * in it; {@link layer} probes once and says why when it cannot.
 *
 * May import: effect, @effect/platform, the `Process` room and `Shared`.
 *
 * @since 0.3.0
 */
import type { SandboxManager, SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime"
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ripgrepPath } from "../Shared/ripgrep.js"
import type { Argv } from "./Subprocess.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * What one sandboxed command may touch. Paths are absolute.
 *
 * @since 0.3.0
 * @category models
 */
export interface SandboxPolicy {
  /** Directories (and files) the command may write. Empty: nothing. */
  readonly writable: ReadonlyArray<string>
  /** Paths inside `writable` that stay read-only (settings files, `.git/hooks`, `.git/config`). */
  readonly protectedPaths: ReadonlyArray<string>
  /** Paths (globs allowed) the command may not read. */
  readonly unreadable: ReadonlyArray<string>
  /** Hosts (`example.com`, `*.example.com`, optionally `:port`) the command may connect to. Empty: none. */
  readonly domains: ReadonlyArray<string>
}

/**
 * The policy of a command allowed because it is read-only: nothing writable, no network.
 *
 * @since 0.3.0
 * @category constructors
 */
export const readOnlyPolicy = (unreadable: ReadonlyArray<string> = []): SandboxPolicy => ({
  writable: [],
  protectedPaths: [],
  unreadable,
  domains: []
})

/**
 * The sandbox cannot run here (or was asked for and is missing).
 *
 * @since 0.3.0
 * @category errors
 */
export class SandboxUnavailable extends Data.TaggedError("SandboxUnavailable")<{
  readonly message: string
}> {}

/**
 * The sandbox service: wraps a command's argv so it runs under a policy.
 *
 * @since 0.3.0
 * @category services
 */
export class Sandbox extends Context.Tag("effect-tool-runtime/Process/Sandbox")<Sandbox, {
  /**
   * The argv that runs `argv` inside the sandbox under `policy`. `id` names the call (violations are attributed to
   * it). The policy's network grant and the clean-up of mount points belong to the Scope: close it when the command
   * has ended.
   */
  readonly wrap: (
    argv: Argv,
    policy: SandboxPolicy,
    id: string
  ) => Effect.Effect<Argv, SandboxUnavailable, Scope.Scope>
}>() {}

// ---------------------------------------------------------------------------------------------------------------
// sandbox-runtime, one per process
// ---------------------------------------------------------------------------------------------------------------

type Manager = typeof SandboxManager

/** The domains of the policies of running calls; the proxy lets a host through while one of them names it. */
const grants = new Map<number, ReadonlyArray<string>>()
let nextGrant = 0
let users = 0
let started: Promise<Manager> | undefined

const hostMatches = (pattern: string, host: string, port: number): boolean => {
  const colon = pattern.lastIndexOf(":")
  const hasPort = colon > 0 && !pattern.endsWith("]") && /^\d+$/.test(pattern.slice(colon + 1))
  const name = (hasPort ? pattern.slice(0, colon) : pattern).toLowerCase()
  if (hasPort && Number(pattern.slice(colon + 1)) !== port) return false
  const target = host.toLowerCase()
  return name.startsWith("*.") ? target.endsWith(name.slice(1)) : target === name
}

const granted = (host: string, port: number): boolean => {
  for (const domains of grants.values()) {
    if (domains.some((pattern) => hostMatches(pattern, host, port))) return true
  }
  return false
}

const baseConfig = (rgPath: string): SandboxRuntimeConfig => ({
  // Nothing is allowed by the list itself: every connection asks `granted`, which knows the running calls.
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
  ripgrep: { command: rgPath },
  // The scan for dangerous files runs in this process's directory, not the command's; the policy names what the
  // runtime protects, so the scan stays shallow.
  mandatoryDenySearchDepth: 1
} as SandboxRuntimeConfig)

const acquireManager = Effect.tryPromise({
  try: async () => {
    users += 1
    started ??= Promise.all([import("@anthropic-ai/sandbox-runtime"), ripgrepPath()]).then(
      async ([{ SandboxManager }, rgPath]) => {
        await SandboxManager.initialize(baseConfig(rgPath), async ({ host, port }) => granted(host, port ?? 0))
        return SandboxManager
      }
    )
    return await started
  },
  catch: (error) => {
    users -= 1
    started = undefined
    return new SandboxUnavailable({ message: `the sandbox cannot start: ${messageOf(error)}` })
  }
})

const releaseManager = (manager: Manager) =>
  Effect.promise(async () => {
    users -= 1
    if (users === 0 && started !== undefined) {
      started = undefined
      await manager.reset().catch(() => undefined)
    }
  })

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A word for bash: quoted unless it is made only of characters bash never reads specially. */
const quote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

const configOf = (policy: SandboxPolicy): Partial<SandboxRuntimeConfig> => ({
  filesystem: {
    allowWrite: [...policy.writable],
    denyWrite: policy.writable.length === 0 ? [] : [...policy.protectedPaths],
    denyRead: [...policy.unreadable]
  },
  network: { allowedDomains: [], deniedDomains: [] }
} as Partial<SandboxRuntimeConfig>)

/**
 * A wait for the sandbox's ends of sandbox-runtime's proxy bridges, run before a command that may connect. On Linux,
 * sandbox-runtime 0.0.78 starts them (socat listening on 3128 for HTTP and 1080 for SOCKS, in the sandbox's own
 * network namespace) in the background and runs the command at once: on a busy machine the command's first
 * connection came before they listened and was refused (curl exit 7; anthropics/claude-code#93862). The wait reads
 * the namespace's listening sockets from /proc/net (it connects to nothing, so the proxy sees nothing) and gives up
 * after about five seconds, when the command runs anyway. It runs only where the bridges are (the proxy variables
 * point at them).
 */
const awaitProxyBridges = [
  `if [[ \${HTTP_PROXY-} == *localhost:3128 ]]; then`,
  `  for ((etr_wait = 0; etr_wait < 500; etr_wait++)); do`,
  `    grep -Eqs ':0C38 0+:0000 0A' /proc/net/tcp /proc/net/tcp6 &&`,
  `      grep -Eqs ':0438 0+:0000 0A' /proc/net/tcp /proc/net/tcp6 && break`,
  `    sleep 0.01`,
  `  done`,
  `  unset etr_wait`,
  `fi`
].join("\n")

const wrapWith = (manager: Manager) => (argv: Argv, policy: SandboxPolicy, id: string) =>
  Effect.gen(function*() {
    if (policy.domains.length > 0) {
      const grant = nextGrant++
      yield* Effect.acquireRelease(
        Effect.sync(() => grants.set(grant, policy.domains)),
        () => Effect.sync(() => grants.delete(grant))
      )
    }
    // Mount points made for protected paths that do not exist are taken away once the command has ended.
    yield* Effect.addFinalizer(() => Effect.sync(() => manager.cleanupAfterCommand()))
    const words = argv.map(quote).join(" ")
    // Without domains nothing gets out: a connection the proxy refuses or one nothing listens for is refused alike.
    const command = policy.domains.length > 0 && process.platform === "linux" ? `${awaitProxyBridges}\n${words}` : words
    const wrapped = yield* Effect.tryPromise({
      try: () => manager.wrapWithSandbox(command, "bash", configOf(policy), undefined, { commandId: id }),
      catch: (error) =>
        new SandboxUnavailable({ message: `the sandbox could not wrap the command: ${messageOf(error)}` })
    })
    return ["bash", "-c", wrapped] as Argv
  })

// ---------------------------------------------------------------------------------------------------------------
// probing
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why the sandbox cannot run on this platform or is missing a program, from sandbox-runtime's own check; undefined
 * when nothing is missing.
 *
 * @since 0.3.0
 * @category probing
 */
export const missingDependencies: Effect.Effect<string | undefined> = Effect.promise(async () => {
  const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime")
  if (!SandboxManager.isSupportedPlatform()) return `the sandbox does not support this platform (${process.platform})`
  const check = SandboxManager.checkDependencies({ command: await ripgrepPath() })
  return check.errors.length === 0
    ? undefined
    : `${check.errors.join("; ")}${process.platform === "linux" ? " (apt-get install bubblewrap socat)" : ""}`
})

/**
 * Checks that the sandbox runs here: its programs are installed and `true` runs inside it (this needs permission to
 * create namespaces: root, or unprivileged user namespaces). Fails with the reason.
 *
 * @since 0.3.0
 * @category probing
 */
export const probe = (
  cwd: string
): Effect.Effect<void, SandboxUnavailable, Sandbox | CommandExecutor.CommandExecutor> =>
  Effect.scoped(Effect.gen(function*() {
    const sandbox = yield* Sandbox
    const argv = yield* sandbox.wrap(["true"], readOnlyPolicy(), "effect-tool-runtime-sandbox-probe")
    const process = yield* Command.start(Command.make(argv[0]!, ...argv.slice(1)).pipe(Command.workingDirectory(cwd)))
    const [output, code] = yield* Effect.all(
      [Stream.merge(process.stdout, process.stderr).pipe(Stream.decodeText(), Stream.mkString), process.exitCode],
      { concurrency: "unbounded" }
    )
    if (code !== 0) {
      return yield* new SandboxUnavailable({
        message: `the sandbox does not work here (exit code ${code}): ${output.trim() || "no message"}`
      })
    }
  })).pipe(
    Effect.catchTags({
      SystemError: (error) => new SandboxUnavailable({ message: `the sandbox cannot start: ${error.message}` }),
      BadArgument: (error) => new SandboxUnavailable({ message: `the sandbox cannot start: ${error.message}` })
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// layers
// ---------------------------------------------------------------------------------------------------------------

/**
 * The sandbox, after checking that its programs are installed; fails with {@link SandboxUnavailable} saying what is
 * missing. Use {@link probe} to check that it also runs.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<Sandbox, SandboxUnavailable> = Layer.scoped(
  Sandbox,
  Effect.gen(function*() {
    const missing = yield* missingDependencies
    if (missing !== undefined) return yield* new SandboxUnavailable({ message: missing })
    const manager = yield* Effect.acquireRelease(acquireManager, releaseManager)
    return { wrap: wrapWith(manager) }
  })
)

// ---------------------------------------------------------------------------------------------------------------
// denials
// ---------------------------------------------------------------------------------------------------------------

const READ_ONLY = /Read-only file system|EROFS/
const NO_ACCESS = /Permission denied|EACCES|Operation not permitted|EPERM/
const NO_NETWORK =
  /Connection refused|ECONNREFUSED|Could not resolve host|Temporary failure in name resolution|Network is unreachable|blocked-by-sandbox-runtime|403 Forbidden|Name or service not known/

/**
 * A sentence for the model when a sandboxed command's output shows the sandbox refused something (a read-only file
 * system, a denied read, a refused connection); undefined when nothing looks like a refusal.
 *
 * @since 0.3.0
 * @category denials
 */
export const explainDenial = (output: string, policy: SandboxPolicy): string | undefined => {
  const notes: Array<string> = []
  if (READ_ONLY.test(output)) {
    notes.push(
      policy.writable.length === 0
        ? "it ran read-only (it was allowed as a read-only command), so it could not write anything"
        : `it could write only in ${
          policy.writable.join(", ")
        } (settings files, .git/hooks and .git/config stay read-only)`
    )
  }
  if (NO_ACCESS.test(output) && policy.unreadable.length > 0) {
    notes.push(`Read deny rules hide ${policy.unreadable.join(", ")}`)
  }
  if (NO_NETWORK.test(output)) {
    notes.push(
      policy.domains.length === 0
        ? "it had no network access"
        : `it could connect only to ${policy.domains.join(", ")}`
    )
  }
  if (notes.length === 0) return undefined
  return `(the command ran in the sandbox and may have been refused by it: ${
    notes.join("; ")
  }. Do not retry it unchanged: if it needs this, change the command, or tell the user what it needs so they can allow it with a rule.)`
}
