/**
 * What WebFetch does with the `prompt`: a PageReader gets the prompt and the page (as markdown or text) and
 * produces the answer the model receives.
 *
 * - `PageReader.layer` needs no model: the answer is the page itself, within a budget of characters, headed by the
 *   prompt, so the calling model reads the page with its question in view.
 * - `EffectAiPageReader.layer` (from `effect-tool-runtime/ai`, where the optional @effect/ai peer is needed) lets a
 *   (small, fast) model answer the prompt from the page, as Claude Code does, with {@link readerPrompt}.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * One page and the question asked of it.
 *
 * @since 0.2.0
 * @category models
 */
export interface PageRequest {
  readonly url: string
  readonly prompt: string
  /** The page as markdown (HTML is converted), or its text (markdown, JSON, plain text). */
  readonly content: string
  /** What `content` is: `markdown` for converted HTML and markdown pages, else `json` or `text`. */
  readonly format: "markdown" | "json" | "text"
}

/**
 * A reader that could not answer (the model failed); the message is for the model.
 *
 * @since 0.2.0
 * @category errors
 */
export class PageReaderError extends Data.TaggedError("PageReaderError")<{ readonly message: string }> {}

/**
 * Options of the PageReader layers.
 *
 * @since 0.2.0
 * @category models
 */
export interface PageReaderOptions {
  /** Characters of the page a reader uses (Claude Code's 100,000 by default); the rest is cut with a note. */
  readonly maxChars?: number | undefined
}

/**
 * The default budget of page characters.
 *
 * @since 0.2.0
 * @category limits
 */
export const DEFAULT_MAX_CHARS = 100_000

/**
 * The page within a budget of characters, with a note when it was cut.
 *
 * @since 0.2.0
 * @category utilities
 */
export const withinBudget = (content: string, maxChars: number): string =>
  content.length <= maxChars
    ? content
    : `${
      content.slice(0, maxChars)
    }\n\n[Content truncated: the first ${maxChars} of ${content.length} characters are shown.]`

// ---------------------------------------------------------------------------------------------------------------
// the service
// ---------------------------------------------------------------------------------------------------------------

/**
 * The PageReader service.
 *
 * @since 0.2.0
 * @category tags
 */
export class PageReader extends Context.Tag("effect-tool-runtime/Tools/Web/PageReader")<
  PageReader,
  { readonly read: (request: PageRequest) => Effect.Effect<string, PageReaderError> }
>() {
  /**
   * No model: the answer is the prompt, then the page within the budget.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (options: PageReaderOptions = {}): Layer.Layer<PageReader> =>
    Layer.succeed(PageReader, PageReader.modelFree(options))

  /**
   * No model, as a service: the answer is the prompt, then the page within the budget.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly modelFree = (options: PageReaderOptions = {}): Context.Tag.Service<PageReader> => {
    const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS
    return {
      read: (request) =>
        Effect.succeed(`Prompt: ${request.prompt}\nPage: ${request.url}\n\n${withinBudget(request.content, maxChars)}`)
    }
  }
}

/**
 * The prompt the model reading a page gets (after Claude Code's): the page, then the question, then how to answer.
 *
 * @since 0.2.0
 * @category utilities
 */
export const readerPrompt = (request: PageRequest, maxChars: number): string =>
  `Web page content (${request.url}):
---
${withinBudget(request.content, maxChars)}
---

${request.prompt}

Answer from the content above only. Be concise. Quote sparingly and never more than a short passage at a time. If the content does not answer the question, say so.`
