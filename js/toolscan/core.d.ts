/**
 * "toolscan/core": the API of the package without loading its module (for
 * runtimes that hand a `.wasm` module over themselves: call `initSync` or
 * `init` first). The main entry, "toolscan", loads it and re-exports this.
 *
 * toolscan for JavaScript: tool calls pulled out of LLM output while it
 * streams, in WebAssembly (one `.wasm`, no native addon). The same engine
 * as the `toolscan` command line, crate and Python package: any chunking of
 * an answer gives the same events once consecutive deltas are merged.
 *
 * ```js
 * import { Parser } from "toolscan";
 * const parser = new Parser({ format: "hermes" });
 * for (const chunk of chunks) for (const e of parser.feed(chunk)) console.log(e);
 * for (const e of parser.finish()) console.log(e);
 * parser.free();
 * ```
 */

/** Text of the answer (outside any call). */
export interface TextEvent {
  type: "text";
  delta: string;
}
/** Reasoning text (with `reasoning: true`). */
export interface ReasoningEvent {
  type: "reasoning";
  delta: string;
}
/** A call began: its index in the answer, its minted id and its name. */
export interface ToolCallStartEvent {
  type: "tool_call_start";
  index: number;
  id: string;
  name: string;
}
/** A piece of a call's arguments as JSON text (the pieces of one call join to its `arguments`). */
export interface ToolCallArgsEvent {
  type: "tool_call_args";
  index: number;
  delta: string;
}
/**
 * A call is complete and can be dispatched: `arguments` is the JSON text
 * of its arguments object (parse it when you need it:
 * `JSON.parse(e.arguments)`, or `parseArguments(e)`).
 */
export interface ToolCallEndEvent {
  type: "tool_call_end";
  index: number;
  id: string;
  name: string;
  arguments: string;
}
/** Something was not as the format says; `offset` is a byte offset in the answer's UTF-8. */
export interface DiagnosticEvent {
  type: "diagnostic";
  kind: DiagnosticKind;
  offset: number;
  message: string;
}
/** The answer ended (the last event of `finish()`). */
export interface DoneEvent {
  type: "done";
  finish_reason: FinishReason;
}
export type Event =
  | TextEvent
  | ReasoningEvent
  | ToolCallStartEvent
  | ToolCallArgsEvent
  | ToolCallEndEvent
  | DiagnosticEvent
  | DoneEvent;

export type FinishReason = "stop" | "tool_calls" | "length";
export type DiagnosticKind =
  | "malformed"
  | "truncated"
  | "limit"
  | "unknown_tool"
  | "invalid_utf8"
  | "unknown_parameter"
  | "type_mismatch"
  | "unclosed"
  | "not_allowed"
  | "missing_parameter"
  | "wrong_type"
  | "not_in_enum"
  | (string & {});

/** An OpenAI `tools` entry (`{type: "function", function: {...}}`) or a bare function (`{name, description, parameters}`). */
export type Tool =
  | { type: "function"; function: { name: string; description?: string; parameters?: object } }
  | { name: string; description?: string; parameters?: object };

export interface Limits {
  /** Largest call, in bytes of markup (past it: a `limit` diagnostic, the block stays text). */
  maxCallBytes?: number;
  /** Deepest nesting of argument values. */
  maxDepth?: number;
  /** Most bytes held back while they may still start a marker. */
  maxHoldback?: number;
  /** Longest tool name, in bytes. */
  maxNameBytes?: number;
}

export interface ParserOptions {
  /** A built-in format's name (`formats()`), or `"auto"` (the default: detected from the content). */
  format?: string;
  /** A model id (`"Qwen/Qwen3-8B"`): its format when `format` is not given or is `"auto"`. */
  model?: string;
  /** The tools the request offered: types parameter values, checks names (`checkCalls`). */
  tools?: Tool[] | string;
  /** Separate the model's reasoning (`<think>…</think>` and the format's own) as `reasoning` events. */
  reasoning?: boolean;
  /** The answer starts inside reasoning (the prompt opened the think block). */
  startsInReasoning?: boolean;
  /** What a call written inside reasoning is: `"text"` (default) or `"call"`. */
  callsInReasoning?: "text" | "call";
  /** Check calls against `tools`' schemas: `"off"` (default), `"report"` (diagnostics), `"reject"` (a call that fails is text). */
  checkCalls?: "off" | "report" | "reject";
  /** With `finish({ atStop: true })`: a call whose closing markup a stop sequence cut is completed. */
  completeAtStop?: boolean;
  /** Most calls read; later ones are text (with a diagnostic). */
  maxCalls?: number;
  /** Only calls of this tool are calls. */
  onlyTool?: string;
  /** Normalise tool names to the tools list's spelling. */
  normalizeToolNames?: boolean;
  /**
   * A call's `tool_call_start` and `tool_call_args` wait for its end, which sends the three at once
   * (all its arguments as one delta); a call that breaks sends none of them (its markup arrives as
   * text). For a consumer that must not act on, or show, a call the model did not finish. Streaming
   * parsers only: `parse()` returns completed calls anyway.
   */
  wholeCalls?: boolean;
  /** How call ids are minted: `"random"` (default), `"seeded"` (from `seed`), `"mistral"` (9 characters). */
  ids?: "random" | "seeded" | "mistral";
  /** The seed of `"seeded"` or `"mistral"` ids. */
  seed?: number;
  limits?: Limits;
  /** Bytes that are not UTF-8 (in a `Uint8Array`): `"replace"` (default: U+FFFD and an `invalid_utf8` diagnostic, as the command line does) or `"throw"` (`feed` throws `InvalidUtf8Error` and feeds nothing). */
  invalidUtf8?: "replace" | "throw";
}

/** A streaming parser for one answer. Free it with `free()` (or `using`), else the garbage collector does. */
export class Parser {
  constructor(options?: ParserOptions);
  /** The format it reads (its canonical name, or `"auto"`). */
  readonly format: string;
  /** Bytes fed so far. */
  readonly offset: number;
  /** Whether `finish()` was called. */
  readonly finished: boolean;
  /** Feeds the next chunk (a string, or bytes in which a character may be split); returns the events it decides, in order. Throws `FinishedError` after `finish()`. */
  feed(chunk: string | Uint8Array): Event[];
  /** Ends the answer; the last event is `done`. A second call returns `[]`. */
  finish(options?: { atStop?: boolean }): Event[];
  /** Frees the parser's WebAssembly memory; any later call throws `FreedError`. */
  free(): void;
  [Symbol.dispose](): void;
}

/** A completed call of a whole answer. */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments object as JSON text. */
  arguments: string;
  diagnostics?: Diagnostic[];
}
export interface Diagnostic {
  kind: DiagnosticKind;
  offset: number;
  message: string;
}
/** A whole answer, as `toolscan parse --output final` prints it. */
export interface Response {
  text: string;
  reasoning?: string;
  tool_calls: ToolCall[];
  diagnostics: Diagnostic[];
  finish_reason: FinishReason;
}

/** Parses a whole answer. */
export function parse(text: string | Uint8Array, options?: ParserOptions): Response;

export interface FormatInfo {
  name: string;
  /** The models that write it. */
  models: string;
  description: string;
}
/** The built-in formats, in `auto`'s order of precedence. */
export function formats(): FormatInfo[];
/** The built-in format a model writes (`"Qwen/Qwen3-8B"` → `"hermes"`), or `null` (then use `"auto"`). */
export function formatForModel(model: string): string | null;

export interface Manifest {
  /** The system-prompt section: the tools described and how to call them in the format. */
  text: string;
  /** `"json"`, `"parameters"`, `"python"`… : how the format writes arguments. */
  notation: string;
  /** One example call per tool, as the format writes it. */
  examples: string[];
}
/** The manifest of `tools` in `format` (for models served without tool calling). Throws `ManifestError`. */
export function manifest(format: string, tools: Tool[] | string): Manifest;

/** A call to write: arguments as JSON text or an object. */
export interface CallToRender {
  name: string;
  arguments?: string | object;
  id?: string;
}
/** An assistant turn to write as the model writes it. */
export interface ResponseToRender {
  text?: string;
  calls?: CallToRender[];
  tools?: Tool[] | string;
}
/** The text the model would have written for this turn (text first, then the calls). Throws `RenderError`. */
export function render(format: string, response: ResponseToRender): string;

export interface ToolResultToRender {
  /** The name of the tool that answered. */
  name: string;
  /** The id of the call it answers. */
  id?: string;
  /** What the tool returned, as text. */
  content: string;
}
/** A run of tool results as the format's chat template writes them: the role whose turn carries them and each message's text. A format that does not say gets one `user` message of `<tool_result>` blocks. */
export function renderToolResults(
  format: string,
  results: ToolResultToRender[],
): { role: string; messages: string[] };

/** `JSON.parse` of a `tool_call_end` event's (or a `ToolCall`'s) arguments. */
export function parseArguments(call: { arguments: string }): Record<string, unknown>;

/** Instantiates the module from a `WebAssembly.Module` or its bytes (the main entry, "toolscan", does this itself). A second call does nothing. */
export function initSync(module: WebAssembly.Module | BufferSource): void;
/** Instantiates the module from a `WebAssembly.Module`, its bytes, or a `fetch` response. */
export function init(
  source: WebAssembly.Module | BufferSource | Response | PromiseLike<WebAssembly.Module | BufferSource | Response>,
): Promise<void>;
/** How many parsers are alive (made and not freed): to check that none leak. */
export function liveParsers(): number;
/** The version of the loaded module (the crate's). */
export function loadedVersion(): string;

/** Every error this package throws. `code` names the kind. */
export class ToolscanError extends Error {
  constructor(message: string, code?: string);
  readonly code: string;
}
/** An option has a wrong type or value. */
export class OptionsError extends ToolscanError {}
/** No built-in format of that name. */
export class UnknownFormatError extends OptionsError {}
/** `feed()` after `finish()`. */
export class FinishedError extends ToolscanError {}
/** A call on a parser after `free()`. */
export class FreedError extends ToolscanError {}
/** `feed()` given something else than a string or a `Uint8Array`. */
export class InputError extends ToolscanError {}
/** Bytes that are not UTF-8, with `invalidUtf8: "throw"`; `offset` is where they start in the answer. */
export class InvalidUtf8Error extends ToolscanError {
  readonly offset: number;
}
/** `manifest()` cannot describe the tools in the format. */
export class ManifestError extends ToolscanError {}
/** `render()` cannot write the calls in the format. */
export class RenderError extends ToolscanError {}
