/**
 * A tool's service as an Effect: what `tool.implementEffect(build)` provides as a Layer, so that the built-in tools
 * can be built together in one Layer (`builtinLayer`). Every Layer costs a cold start a couple of hundred effect
 * operations to build and as many to release, whatever it holds: one Layer of a dozen tools instead of a dozen
 * Layers is most of the difference between `exec` starting in a few milliseconds or in tens.
 */
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as Tool from "../../Tool/Tool.js"

/** The service of `tool` from an effect that builds its implementation (the safe defaults filled in). */
export const serviceOf = <
  Name extends string,
  Input extends Schema.Schema.AnyNoContext,
  Output extends Schema.Schema.AnyNoContext,
  Failure extends Schema.Schema.AnyNoContext,
  TouchesEnvironment extends boolean,
  E,
  R
>(
  tool: Tool.Tool<Name, Input, Output, Failure, TouchesEnvironment>,
  build: Effect.Effect<Tool.Implementation<Input["Type"], Output["Type"], Failure["Type"], TouchesEnvironment>, E, R>
): Effect.Effect<Tool.Service<Input["Type"], Output["Type"], Failure["Type"]>, E, R> => Effect.map(build, tool.service)
