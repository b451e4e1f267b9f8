/**
 * The `WebFetch` tool (Claude Code's name and parameters: `url`, `prompt`): fetches a page and answers the prompt
 * from it. It opens the outside world, so everything about it is explicit and bounded.
 *
 * - **URLs** are normalised before any rule sees them (`Web/Url`): `http:` becomes `https:` unless the host is in
 *   `plainHttp`; credentials, other schemes and URLs over 2,000 characters are refused.
 * - **Permissions**: `WebFetch(domain:example.com)` and `WebFetch(domain:*.example.com)` rules (deny, ask, allow)
 *   are decided by the tool's `matchRules` (`Permission/Domain`); a rule content that is not `domain:...`
 *   covers every host when it denies or asks and none when it allows. The same rules decide every redirect hop:
 *   a denied hop stops the fetch, a hop to the `www.` twin is followed only when the rules cannot tell it from
 *   the host already authorised, otherwise it is handed back to the model. Nothing is allowed by the tool itself:
 *   open-world calls ask unless a rule, mode or hook allows them.
 * - **Addresses** (`Web/Address`, `Web/Fetcher`): names are resolved by the tool ({@link Resolver}) and the socket
 *   goes to the address that was checked; loopback, private, link-local, CGNAT, unique-local, mapped and every
 *   other non-public address is refused, in every literal form, unless `allowPrivate` names the host or range.
 * - **Redirects**: same host or `www.` twin, same scheme and port, up to 10 hops; any other redirect is returned to
 *   the model with the new URL, to fetch again (so rules and the person see the new host).
 * - **Limits**: 10 MiB body (streamed, the rest never read), 10 MiB after decompression, 60 s in all, 30 s without
 *   a byte, 2,000,000 characters of HTML converted (and nesting bounded, `Web/Content`), 100,000 characters of page
 *   for the reader. Binary types are refused before their body is read; 4xx and 5xx are errors for the model.
 * - **The prompt** goes with the page to the {@link PageReader} (default: the page itself headed by the prompt; or a
 *   language model's answer). Pages are cached 15 minutes (50 MiB, least recently used first), before the prompt.
 *
 * ```ts
 * const webFetch = WebFetchTool.layer({ allowPrivate: ["127.0.0.1"], plainHttp: ["127.0.0.1"] })
 * ```
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { domainPatternMatchesHost, parseDomainPattern } from "../Permission/Domain.js"
import { formatBytes } from "../Shared/bytes.js"
import { timeoutOption } from "../Shared/realTime.js"
import { withSpan } from "../Shared/tracing.js"
import { PermissionCheck } from "../Tool/Permission.js"
import { UiBlock } from "../Tool/Presentation.js"
import { printRule } from "../Tool/Rule.js"
import * as Tool from "../Tool/Tool.js"
import { serviceOf } from "./internal/service.js"
import type { InvalidAllowEntry } from "./Web/Address.js"
import { makeAddressPolicy } from "./Web/Address.js"
import { makePageCache } from "./Web/Cache.js"
import type { PageCache } from "./Web/Cache.js"
import { decodeText, htmlToMarkdown, kindOfMediaType, parseMediaType, sniffKind } from "./Web/Content.js"
import type { ContentKind } from "./Web/Content.js"
import { fetchFollowing, makeConnector, WebFetchError } from "./Web/Fetcher.js"
import type { Arrived, FetchEnvironment, HopVerdict, NotFollowed } from "./Web/Fetcher.js"
import { PageReader } from "./Web/PageReader.js"
import { Resolver } from "./Web/Resolver.js"
import { normalizeUrl } from "./Web/Url.js"

/** @since 0.2.0 */
export { WebFetchError } from "./Web/Fetcher.js"

// ---------------------------------------------------------------------------------------------------------------
// defaults
// ---------------------------------------------------------------------------------------------------------------

/**
 * The defaults of {@link WebFetchOptions}.
 *
 * @since 0.2.0
 * @category limits
 */
export const defaults = {
  maxBodyBytes: 10 * 1024 * 1024,
  maxDecodedBytes: 10 * 1024 * 1024,
  maxHtmlChars: 2_000_000,
  timeout: Duration.seconds(60),
  idleTimeout: Duration.seconds(30),
  maxRedirects: 10,
  cacheTtl: Duration.minutes(15),
  cacheBytes: 50 * 1024 * 1024,
  userAgent: "effect-tool-runtime-WebFetch/0.2"
} as const

/**
 * Options of {@link layer}; every limit has a default ({@link defaults}).
 *
 * @since 0.2.0
 * @category models
 */
export interface WebFetchOptions {
  /**
   * Hosts (`"localhost"`), addresses (`"127.0.0.1"`) and ranges (`"10.0.0.0/8"`) that may be non-public. Default none.
   */
  readonly allowPrivate?: ReadonlyArray<string> | undefined
  /** Hosts fetched over plain `http:` (not upgraded to `https:`). Default none. */
  readonly plainHttp?: ReadonlyArray<string> | undefined
  /** Bytes of body read from the wire. Default 10 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** Bytes of body after decompression. Default 10 MiB. */
  readonly maxDecodedBytes?: number | undefined
  /** Characters of HTML handed to the converter. Default 2,000,000. */
  readonly maxHtmlChars?: number | undefined
  /** The whole fetch, every hop and the body included. Default 60 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The longest wait for the response or the next piece of the body. Default 30 seconds. */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Same-site redirects followed. Default 10. */
  readonly maxRedirects?: number | undefined
  /** How long a fetched page is reused. Default 15 minutes; 0 turns the cache off. */
  readonly cacheTtl?: Duration.DurationInput | undefined
  /** Bytes of pages the cache keeps (UTF-16, two per character). Default 50 MiB. */
  readonly cacheBytes?: number | undefined
  readonly userAgent?: string | undefined
  /** Answers the prompt from the page. Default `PageReader.layer()` (no model). */
  readonly pageReader?: Layer.Layer<PageReader> | undefined
  /** Resolves host names. Default `Resolver.layer` (the system's). */
  readonly resolver?: Layer.Layer<Resolver> | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The tool's input, as in Claude Code.
 *
 * @since 0.2.0
 * @category models
 */
export const WebFetchInput = Schema.Struct({
  // `format: uri` as in Claude Code's definition; the URL itself is checked in validate (scheme, host, length).
  url: Schema.String.annotations({
    description: "The URL to fetch content from",
    jsonSchema: { type: "string", format: "uri" }
  }),
  prompt: Schema.String.annotations({ description: "The prompt to run on the fetched content" })
})
/**
 * @since 0.2.0
 * @category models
 */
export type WebFetchInput = typeof WebFetchInput.Type

/**
 * A page fetched and read.
 *
 * @since 0.2.0
 * @category models
 */
export const FetchedPage = Schema.TaggedStruct("Page", {
  url: Schema.String,
  /** The URL the content came from, after same-site redirects. */
  finalUrl: Schema.String,
  status: Schema.Number,
  statusText: Schema.String,
  contentType: Schema.String,
  /** Bytes of body (after decompression). */
  bytes: Schema.Number,
  durationMs: Schema.Number,
  cached: Schema.Boolean,
  /** What was cut or converted differently on the way (caps, charsets). */
  notes: Schema.Array(Schema.String),
  /** The reader's answer. */
  result: Schema.String
})

/**
 * A redirect to another site, handed back to the model.
 *
 * @since 0.2.0
 * @category models
 */
export const CrossSiteRedirect = Schema.TaggedStruct("Redirect", {
  url: Schema.String,
  redirectUrl: Schema.String,
  status: Schema.Number,
  statusText: Schema.String,
  prompt: Schema.String,
  durationMs: Schema.Number
})

/**
 * What a call produced.
 *
 * @since 0.2.0
 * @category models
 */
export const WebFetchOutput = Schema.Union(FetchedPage, CrossSiteRedirect)
/**
 * @since 0.2.0
 * @category models
 */
export type WebFetchOutput = typeof WebFetchOutput.Type

// ---------------------------------------------------------------------------------------------------------------
// the tool
// ---------------------------------------------------------------------------------------------------------------

const description = `Fetches a URL and answers a prompt from its content.

- Takes a URL and a prompt. HTML is converted to markdown; markdown, text and JSON are used as they are. Binary content (images, PDFs, archives) is not fetched.
- http: URLs are upgraded to https:. Loopback, private and other non-public addresses are refused.
- If the URL redirects to a different host, you get the new URL instead of the content: call WebFetch again with it.
- Results of the same URL are reused for 15 minutes.
- Read-only: it never changes anything. Prefer a dedicated MCP tool for the same service if one is available.`

const definition = Tool.make("WebFetch", {
  description,
  input: WebFetchInput,
  output: WebFetchOutput,
  failure: WebFetchError,
  maxResultChars: 100_000,
  touchesEnvironment: true,
  searchHint: "web http https url page download fetch"
})

// ---------------------------------------------------------------------------------------------------------------
// permissions
// ---------------------------------------------------------------------------------------------------------------

/**
 * How the domain rules judge one host: the first deny, else the first ask, else the first allow.
 * A content that is not `domain:...` cannot be read: it covers every host when it denies or asks, none when it
 * allows (so a typo never opens anything and never silently stops protecting).
 *
 * @since 0.2.0
 * @category permissions
 */
export const judgeHost = <R extends Tool.ContentRule>(
  rules: Tool.RulesByBehavior<R>,
  host: string | undefined
): Tool.RuleMatch<R> => {
  const covers = (rule: R, restrictive: boolean): boolean => {
    const pattern = parseDomainPattern(rule.content)
    if (Option.isNone(pattern) || host === undefined) return restrictive
    return domainPatternMatchesHost(pattern.value, host)
  }
  const deny = rules.deny.find((rule) => covers(rule, true))
  if (deny !== undefined) return { _tag: "Deny", rule: deny, detail: `the host is ${host ?? "unreadable"}` }
  const ask = rules.ask.find((rule) => covers(rule, true))
  if (ask !== undefined) return { _tag: "Ask", rule: ask, detail: `the host is ${host ?? "unreadable"}` }
  const allow = rules.allow.find((rule) => covers(rule, false))
  return allow === undefined ? { _tag: "NoMatch" } : { _tag: "Allow", rules: [allow] }
}

const noRules: Tool.RulesByBehavior<Tool.ContentRule> = { deny: [], ask: [], allow: [] }

/** What the permission stage of one invocation showed the tool; `call` decides its redirect hops by the same. */
interface PermissionView {
  /** Whether the runtime asked this invocation's permission check (so the rules, if any, were shown). */
  checked: boolean
  rules: Tool.RulesByBehavior<Tool.ContentRule> | undefined
}

/**
 * Whether a same-site redirect hop is followed, under the rules the call was authorised with: a denied host stops
 * the fetch; the same host is followed (it was authorised); the `www.` twin is followed when the rules judge it as
 * they judged the first host (both allowed, or neither named), else handed back. A call that was never put
 * through the permission stage follows only its own host.
 *
 * @since 0.2.0
 * @category permissions
 */
export const hopVerdict = (
  view: { readonly checked: boolean; readonly rules: Tool.RulesByBehavior<Tool.ContentRule> | undefined },
  start: URL,
  hop: URL
): HopVerdict => {
  const rules = view.rules ?? noRules
  const judged = judgeHost(rules, hop.hostname)
  if (judged._tag === "Deny") {
    return {
      _tag: "Deny",
      message: `Permission to use WebFetch has been denied by the deny rule ${
        printRule({ toolName: "WebFetch", content: judged.rule.content })
      }: ${start.href} redirected to ${hop.href}. The fetch was stopped.`
    }
  }
  if (hop.hostname === start.hostname) return { _tag: "Follow" }
  if (!view.checked) return { _tag: "HandBack" }
  const first = judgeHost(rules, start.hostname)
  const alike = (judged._tag === "Allow" && first._tag === "Allow") ||
    (judged._tag === "NoMatch" && first._tag === "NoMatch")
  return alike ? { _tag: "Follow" } : { _tag: "HandBack" }
}

// ---------------------------------------------------------------------------------------------------------------
// presentation
// ---------------------------------------------------------------------------------------------------------------

const formatDuration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/**
 * What the model reads of a result: the reader's answer (with any notes), or the redirect it must follow itself.
 *
 * @since 0.2.0
 * @category presentation
 */
export const modelText = (output: WebFetchOutput): string => {
  if (output._tag === "Redirect") {
    return `REDIRECT DETECTED: The URL redirects to a different host.

Original URL: ${output.url}
Redirect URL: ${output.redirectUrl}
Status: ${output.status} ${output.statusText}

To complete your request, fetch the redirected URL with WebFetch again:
- url: ${JSON.stringify(output.redirectUrl)}
- prompt: ${JSON.stringify(output.prompt)}`
  }
  return output.notes.length === 0
    ? output.result
    : `${output.result}\n\n${output.notes.map((note) => `[${note}]`).join("\n")}`
}

const renderResult = (output: WebFetchOutput): ReadonlyArray<UiBlock> => {
  if (output._tag === "Redirect") {
    return [
      UiBlock.Fields({
        fields: [["URL", output.url], ["status", `${output.status} ${output.statusText}`.trim()], [
          "redirect to",
          output.redirectUrl
        ], ["time", formatDuration(output.durationMs)]]
      }),
      UiBlock.Notice({ level: "info", text: `Redirect to another host not followed: ${output.redirectUrl}` })
    ]
  }
  return [
    UiBlock.Fields({
      fields: [
        ["URL", output.finalUrl === output.url ? output.url : `${output.url} -> ${output.finalUrl}`],
        ["status", `${output.status} ${output.statusText}`.trim()],
        ["size", formatBytes(output.bytes)],
        ["time", formatDuration(output.durationMs)],
        ["cached", output.cached ? "yes" : "no"]
      ]
    }),
    ...(output.cached
      ? [UiBlock.Notice({ level: "info", text: "From the cache (fetched in the last 15 minutes)" })]
      : []),
    ...output.notes.map((note) => UiBlock.Notice({ level: "warning", text: note }))
  ]
}

// ---------------------------------------------------------------------------------------------------------------
// the call
// ---------------------------------------------------------------------------------------------------------------

/** A page as it is cached: before the prompt. */
interface CachedPage {
  readonly finalUrl: string
  readonly hops: ReadonlyArray<string>
  readonly status: number
  readonly statusText: string
  readonly contentType: string
  readonly bytes: number
  readonly content: string
  readonly format: "markdown" | "json" | "text"
  readonly notes: ReadonlyArray<string>
}

interface ReadPage {
  readonly _tag: "ReadPage"
  readonly page: CachedPage
}

interface Services {
  readonly fetch: FetchEnvironment
  readonly resolver: Resolver["Type"]
  readonly reader: PageReader["Type"]
  readonly cache: PageCache<CachedPage>
  readonly timeout: Duration.Duration
  readonly maxHtmlChars: number
}

const failWith = (reason: WebFetchError["reason"], message: string, status?: number) =>
  Effect.fail(new WebFetchError(status === undefined ? { reason, message } : { reason, message, status }))

/** The page of a response whose headers arrived, read and converted (status and type checked first). */
const pageOf = (services: Services, arrived: Arrived): Effect.Effect<CachedPage, WebFetchError> =>
  Effect.gen(function*() {
    const url = arrived.url.href
    if (arrived.status < 200 || arrived.status >= 300) {
      return yield* failWith(
        "Status",
        `Request failed with status code ${arrived.status}${
          arrived.statusText === "" ? "" : ` (${arrived.statusText})`
        }: ${url}`,
        arrived.status
      )
    }
    const media = parseMediaType(arrived.headers["content-type"])
    const declared = kindOfMediaType(media.essence)
    if (declared === "binary") {
      return yield* failWith(
        "UnsupportedContent",
        `${url} is ${media.essence}, binary content that WebFetch does not read. Only HTML, markdown, JSON and other ` +
          `text can be fetched.`
      )
    }
    const body = yield* arrived.readBody
    const kind: ContentKind = declared ?? sniffKind(body.bytes)
    if (kind === "binary") {
      return yield* failWith(
        "UnsupportedContent",
        `${url} has no content type and its body looks binary; WebFetch only reads text.`
      )
    }
    const notes: Array<string> = []
    if (body.truncated) notes.push(`The body was cut at ${formatBytes(body.bytes.length)}; the rest was not read.`)
    const decoded = decodeText(body.bytes, media.charset, kind)
    if (decoded.note !== undefined) notes.push(decoded.note)
    let content = decoded.text
    if (kind === "html") {
      const converted = yield* htmlToMarkdown(decoded.text, services.maxHtmlChars)
      content = converted.markdown
      notes.push(...converted.notes)
    }
    return {
      finalUrl: url,
      hops: arrived.hops.map((hop) => hop.href),
      status: arrived.status,
      statusText: arrived.statusText,
      contentType: media.essence === "" ? `(none; read as ${kind})` : media.essence,
      bytes: body.bytes.length,
      content,
      format: kind === "json" ? "json" : kind === "text" ? "text" : "markdown",
      notes
    }
  })

const read = (services: Services, input: WebFetchInput, page: CachedPage) =>
  services.reader.read({ url: page.finalUrl, prompt: input.prompt, content: page.content, format: page.format }).pipe(
    Effect.mapError((error) => new WebFetchError({ reason: "Reader", message: error.message }))
  )

/** The fetch, in a span when the program installed a tracer (see `Shared/tracing`). */
const fetchPage = (
  services: Services,
  input: WebFetchInput,
  view: PermissionView
): Effect.Effect<WebFetchOutput, WebFetchError, Scope.Scope> =>
  withSpan(fetchPageUntraced(services, input, view), "WebFetch.fetch")

const fetchPageUntraced = (
  services: Services,
  input: WebFetchInput,
  view: PermissionView
): Effect.Effect<WebFetchOutput, WebFetchError, Scope.Scope> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const normalized = normalizeUrl(input.url, services.fetch.plainHttp)
    if (Either.isLeft(normalized)) return yield* failWith("InvalidUrl", normalized.left)
    const start = normalized.right
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - startedAt)
    const checkHop = (hop: URL) => Effect.sync(() => hopVerdict(view, start, hop))

    const cached = yield* services.cache.get(start.href)
    // A cached page is used only while the rules still let every hop it took through.
    const reusable = cached !== undefined &&
      cached.hops.slice(1).every((hop) => hopVerdict(view, start, new URL(hop))._tag === "Follow")
    if (cached !== undefined && reusable) {
      const result = yield* read(services, input, cached)
      return {
        _tag: "Page",
        url: start.href,
        ...pageFields(cached),
        durationMs: yield* elapsed,
        cached: true,
        result
      } satisfies WebFetchOutput
    }

    const fetched = yield* fetchFollowing(services.fetch, start, checkHop).pipe(
      Effect.flatMap((arrived): Effect.Effect<NotFollowed | ReadPage, WebFetchError> =>
        arrived._tag === "NotFollowed"
          ? Effect.succeed(arrived)
          : Effect.map(pageOf(services, arrived), (page) => ({ _tag: "ReadPage", page }))
      ),
      // One real timer for the whole fetch (`Effect.timeoutFail` races a second fiber and joins its FiberRefs).
      (fetching) => timeoutOption(fetching, services.timeout),
      Effect.flatMap(Option.match({
        onNone: () =>
          Effect.fail(
            new WebFetchError({
              reason: "Timeout",
              message: `Fetching ${start.href} took longer than ${
                formatDuration(Duration.toMillis(services.timeout))
              }; it was stopped.`
            })
          ),
        onSome: Effect.succeed
      })),
      Effect.provideService(Resolver, services.resolver)
    )
    if (fetched._tag === "NotFollowed") {
      return {
        _tag: "Redirect",
        url: start.href,
        redirectUrl: fetched.to.href,
        status: fetched.status,
        statusText: fetched.statusText,
        prompt: input.prompt,
        durationMs: yield* elapsed
      } satisfies WebFetchOutput
    }
    const page = fetched.page
    yield* services.cache.set(start.href, page, page.content.length * 2 + 512)
    const result = yield* read(services, input, page)
    return {
      _tag: "Page",
      url: start.href,
      ...pageFields(page),
      durationMs: yield* elapsed,
      cached: false,
      result
    } satisfies WebFetchOutput
  })

const pageFields = (page: CachedPage) => ({
  finalUrl: page.finalUrl,
  status: page.status,
  statusText: page.statusText,
  contentType: page.contentType,
  bytes: page.bytes,
  notes: page.notes
})

// ---------------------------------------------------------------------------------------------------------------
// layers
// ---------------------------------------------------------------------------------------------------------------

const hostList = (hosts: ReadonlyArray<string> | undefined): (hostname: string) => boolean => {
  const set = new Set((hosts ?? []).map((host) => host.trim().toLowerCase().replace(/^\[(.*)\]$/, "[$1]")))
  return (hostname) => set.has(hostname.toLowerCase())
}

const suggestionFor = (url: string): ReadonlyArray<string> => {
  try {
    return [printRule({ toolName: "WebFetch", content: `domain:${new URL(url).hostname}` })]
  } catch {
    return []
  }
}

/**
 * The WebFetch tool over a {@link Resolver} and a {@link PageReader} from the context. Fails with
 * {@link InvalidAllowEntry} when `allowPrivate` holds something that is neither a host nor an address or range.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (
  options: Omit<WebFetchOptions, "pageReader" | "resolver"> = {}
): Layer.Layer<Tool.Identifier<"WebFetch">, InvalidAllowEntry, Resolver | PageReader> =>
  Layer.scoped(definition, make(options))

/**
 * WebFetch's service over the {@link Resolver} and {@link PageReader} in context, built: what {@link layerWith}
 * provides, as an Effect (the built-in tools are built together, in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Omit<WebFetchOptions, "pageReader" | "resolver"> = {}) =>
  serviceOf(
    definition,
    Effect.gen(function*() {
      const addresses = yield* makeAddressPolicy(options.allowPrivate ?? [])
      const connector = yield* makeConnector
      const plainHttp = hostList(options.plainHttp)
      const ttl = Duration.toMillis(Duration.decode(options.cacheTtl ?? defaults.cacheTtl))
      const services: Services = {
        fetch: {
          connector,
          addresses,
          plainHttp,
          userAgent: options.userAgent ?? defaults.userAgent,
          limits: {
            maxBodyBytes: options.maxBodyBytes ?? defaults.maxBodyBytes,
            maxDecodedBytes: options.maxDecodedBytes ?? defaults.maxDecodedBytes,
            idleTimeout: Duration.decode(options.idleTimeout ?? defaults.idleTimeout),
            maxRedirects: options.maxRedirects ?? defaults.maxRedirects
          }
        },
        resolver: yield* Resolver,
        reader: yield* PageReader,
        cache: makePageCache<CachedPage>({
          maxBytes: ttl <= 0 ? 0 : options.cacheBytes ?? defaults.cacheBytes,
          ttlMillis: ttl
        }),
        timeout: Duration.decode(options.timeout ?? defaults.timeout),
        maxHtmlChars: options.maxHtmlChars ?? defaults.maxHtmlChars
      }
      const validate = (input: WebFetchInput) =>
        Either.match(normalizeUrl(input.url, plainHttp), {
          onLeft: (message) => Tool.reject(message),
          onRight: (url) => Effect.succeed(url.href === input.url ? input : { ...input, url: url.href })
        })
      const checkPermissions = (input: WebFetchInput) =>
        Effect.succeed(PermissionCheck.passthrough(suggestionFor(input.url)))
      const hostOf = (input: WebFetchInput) => Either.getOrUndefined(normalizeUrl(input.url, plainHttp))?.hostname
      return {
        validate,
        traits: () => ({ readOnly: true, concurrencySafe: true, openWorld: true }),
        claims: () => [],
        // One invocation, one view of the permission stage: the rules it was decided by also decide its hops.
        plan: (input: WebFetchInput) => {
          const view: PermissionView = { checked: false, rules: undefined }
          return {
            checkPermissions: () => {
              view.checked = true
              return checkPermissions(input)
            },
            matchRules: <R extends Tool.ContentRule>(rules: Tool.RulesByBehavior<R>) => {
              view.rules = rules
              return judgeHost(rules, hostOf(input))
            },
            call: (): Effect.Effect<WebFetchOutput, WebFetchError, Scope.Scope> => fetchPage(services, input, view)
          }
        },
        renderUse: (input) => [UiBlock.Title({ text: `WebFetch(${input.url})` }), UiBlock.Text({ text: input.prompt })],
        renderResult,
        toModel: modelText
      }
    })
  )

/**
 * The WebFetch tool with its own resolver and reader (`options.resolver`, `options.pageReader`, by default the
 * system resolver and the model-free reader).
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: WebFetchOptions = {}): Layer.Layer<Tool.Identifier<"WebFetch">, InvalidAllowEntry> =>
  layerWith(options).pipe(
    Layer.provide(options.resolver ?? Resolver.layer),
    Layer.provide(options.pageReader ?? PageReader.layer())
  )

/**
 * The WebFetch tool: its definition, the Tag of its service, and its layers.
 *
 * @since 0.2.0
 * @category tools
 */
export const WebFetchTool = Object.assign(definition, { layer, layerWith })
