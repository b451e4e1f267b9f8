import { Effect, Schema } from "effect"
import { Tool } from "effect-tool-runtime"

export const Echo = Tool.make("Echo", {
  description: "Repeats the text back.",
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})
export const EchoLive = Echo.implement({
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  call: ({ text }) => Effect.succeed(text)
})
