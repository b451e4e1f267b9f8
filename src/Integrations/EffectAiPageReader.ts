/**
 * A {@link PageReader} over any @effect/ai `LanguageModel`: a (small, fast) model answers WebFetch's prompt from the
 * page (within the budget), as Claude Code does, instead of the page itself going back to the calling model.
 *
 * ```ts
 * const pageReader = EffectAiPageReader.layer({ maxChars: 100_000 }).pipe(
 *   Layer.provide(AnthropicLanguageModel.layer({ model: "claude-haiku-4-5" }))
 * )
 * ```
 *
 * @since 0.3.0
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DEFAULT_MAX_CHARS, PageReader, PageReaderError, readerPrompt } from "../Tools/Web/PageReader.js"
import type { PageReaderOptions, PageRequest } from "../Tools/Web/PageReader.js"

/**
 * The language model in context answers the prompt from the page (within the budget) and nothing else.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: PageReaderOptions = {}): Layer.Layer<PageReader, never, LanguageModel.LanguageModel> =>
  Layer.effect(
    PageReader,
    Effect.map(LanguageModel.LanguageModel, (model) => {
      const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS
      return {
        read: (request: PageRequest) =>
          model.generateText({ prompt: readerPrompt(request, maxChars) }).pipe(
            Effect.map((response) =>
              response.text.trim() === "" ? "The model reading the page gave no answer." : response.text
            ),
            Effect.mapError((error) =>
              new PageReaderError({ message: `The model reading ${request.url} failed: ${error.message}` })
            ),
            Effect.withSpan("PageReader.read", { attributes: { url: request.url } })
          )
      }
    })
  )
