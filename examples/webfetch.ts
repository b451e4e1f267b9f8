import { Effect, Layer } from "effect"
import { Approver, PermissionPolicy, ResultStore, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"
import { PageReader, WebFetch } from "effect-tool-runtime/tools"
import type { WebFetchOptions } from "effect-tool-runtime/tools"

// Every setting of WebFetch with its default; pass any subset to WebFetch.layer (or builtinLayer's `webFetch`).
export const defaults: WebFetchOptions = {
  allowPrivate: [], // hosts ("intranet.example"), addresses ("127.0.0.1") and ranges ("10.0.0.0/8") that may be non-public
  plainHttp: [], // hosts fetched over http: (every other http: URL is upgraded to https:)
  maxBodyBytes: 10 * 1024 * 1024, // bytes read from the wire; the rest is never read
  maxDecodedBytes: 10 * 1024 * 1024, // bytes after decompression (a gzip bomb stops here)
  maxHtmlChars: 2_000_000, // characters of HTML handed to turndown
  timeout: "60 seconds", // the whole fetch: every redirect hop and the body
  idleTimeout: "30 seconds", // the longest silence: before the response, and between pieces of the body
  maxRedirects: 10, // same-host (and www.) redirects followed; other hosts are handed back to the model
  cacheTtl: "15 minutes", // pages are reused this long (0 turns the cache off)
  cacheBytes: 50 * 1024 * 1024, // least recently used pages go first
  pageReader: PageReader.layer({ maxChars: 100_000 }) // or EffectAiPageReader.layer() (effect-tool-runtime/ai)
}

// A runtime with WebFetch only; `WebFetch(domain:...)` rules come with the full policy (`RulePolicy.layer`).
export const runtime = (options: WebFetchOptions) =>
  ToolRuntime.layer.pipe(
    Layer.provide(ToolRegistry.layer([WebFetch]).pipe(Layer.provide(WebFetch.layer(options)))),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
  )

export const fetchPage = (url: string, prompt: string) =>
  ToolRuntime.execute([{ type: "tool_use", id: "toolu_1", name: "WebFetch", input: { url, prompt } }]).pipe(
    Effect.map(([outcome]) => outcome!.result)
  )
