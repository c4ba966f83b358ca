/**
 * toolscan as an AI SDK middleware (AI SDK 6, `LanguageModelV3Middleware`):
 * tool calls that a model writes as text (`<tool_call>…</tool_call>`,
 * `[TOOL_CALLS]…`, harmony…) become the SDK's `tool-call` parts, each sent
 * (`tool-input-start` / `tool-input-delta` / `tool-input-end`, then
 * `tool-call`) in the part that brings its last byte — so a tool can start
 * then — and never for a call that breaks (its markup stays text).
 *
 * ```js
 * import { wrapLanguageModel, streamText } from "ai";
 * import { toolscanMiddleware } from "toolscan/ai-sdk";
 * const model = wrapLanguageModel({
 *   model: upstream,
 *   middleware: toolscanMiddleware({ format: "hermes" }),
 * });
 * ```
 *
 * An answer is read for calls only when the call offered tools and its
 * `toolChoice` is not `none`; a named tool choice makes only that tool's
 * calls calls. Diagnostics (a malformed block, which stays text; a call
 * cut short…) reach `onDiagnostic` / `onError` and the `finish` part's (or
 * the generate result's) `providerMetadata.toolscan.diagnostics`. When at
 * least one call completed, the finish reason is `tool-calls`.
 */
import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Middleware,
  LanguageModelV3ToolResultPart,
} from "@ai-sdk/provider";
import type { Diagnostic, ParserOptions, Tool } from "./index.js";

export interface ToolscanMiddlewareOptions
  extends Omit<ParserOptions, "format" | "model" | "tools" | "onlyTool"> {
  /**
   * The format the model writes (`formats()`), or `"auto"`. Default: the
   * format of `model`, else of the wrapped model's id, else `"auto"`.
   */
  format?: string;
  /** A model id (`"Qwen/Qwen3-8B"`) whose format to read when `format` is not given. */
  model?: string;
  /**
   * The tools to give the parser (and the manifest) instead of the
   * request's; parsing still happens only when the request offered tools.
   */
  tools?: Tool[] | string;
  /**
   * For a model served without tool calling: the tools' manifest goes in
   * the system prompt, `tools` and `toolChoice` are not sent, and earlier
   * turns' calls and results are written as text in the format. Needs a
   * concrete `format` (or a `model` toolscan knows): `"auto"` throws.
   */
  emulate?: boolean;
  /**
   * Where the manifest goes in the first system message: after its text
   * (`"last"`, the default) or before it. A system message with `{{tools}}`
   * gets it there; without a system message, one is added first.
   */
  placement?: "first" | "last";
  /** As `@ai-sdk-tool/parser`'s: the system-prompt section for the tools, instead of toolscan's manifest. */
  toolSystemPromptTemplate?: (tools: LanguageModelV3FunctionTool[]) => string;
  /**
   * As `@ai-sdk-tool/parser`'s: how one tool result is written, instead of
   * the format's own; a turn's results are joined by newlines in one user
   * message.
   */
  toolResponsePromptTemplate?: (toolResult: LanguageModelV3ToolResultPart) => string;
  /**
   * Stream a call's arguments while the model writes them
   * (`tool-input-delta` part by part). Off by default: a call is sent whole
   * once it closed, so that a call that breaks after it began never reaches
   * the SDK (which would report a tool error for it, and a chat UI would
   * show it stuck). On, such a call gets a `tool-input-end` with
   * `providerMetadata.toolscan.abandoned` and no `tool-call`.
   */
  streamArguments?: boolean;
  /** Each diagnostic, as the parser reports it. */
  onDiagnostic?: (diagnostic: Diagnostic) => void;
  /**
   * As `@ai-sdk-tool/parser`'s: each diagnostic's message, with its `kind`
   * and `offset`. A call's `providerOptions.toolCallMiddleware.onError`
   * takes its place for that call.
   */
  onError?: (message: string, metadata?: Record<string, unknown>) => void;
}

/** The middleware, for `wrapLanguageModel({ model, middleware })`. Throws for an `emulate` without a concrete format. */
export function toolscanMiddleware(options?: ToolscanMiddlewareOptions): LanguageModelV3Middleware;

/** A drop-in for `@ai-sdk-tool/parser`'s: `toolscanMiddleware({ format: "hermes", emulate: true })`. */
export const hermesToolMiddleware: LanguageModelV3Middleware;
/** A drop-in for `@ai-sdk-tool/parser`'s: `toolscanMiddleware({ format: "qwen3-coder", emulate: true })`. */
export const qwen3CoderToolMiddleware: LanguageModelV3Middleware;
