// toolscan's JavaScript API over its WebAssembly module, for runtimes that
// hand the module over themselves (edge workers importing `.wasm`, a
// bundler): call `initSync(moduleOrBytes)` once, then use the API. The
// package's main entry (`index.js`) does that itself.
//
// The boundary (crates/toolscan-wasm): JavaScript writes a chunk or a
// request into the module's input buffer, calls an export, and reads the
// answer — JSON text — from its output buffer. A status of -1 means the
// output is an error object `{error, message, offset?}`.

let wasm = null;
let bytes = null; // a Uint8Array over the module's memory, remade after it grows
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The statuses of crates/toolscan-wasm (lib.rs).
const OK = 0;
const ONE_TEXT = 1;
const ONE_REASONING = 2;
const ONE_ARGS = 3;
const REQUEST = {
  parse: 1,
  formats: 2,
  formatForModel: 3,
  manifest: 4,
  render: 5,
  renderToolResults: 6,
  version: 7,
};

/** Every error this package throws; `code` names the kind. */
export class ToolscanError extends Error {
  constructor(message, code = "toolscan") {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
export class OptionsError extends ToolscanError {}
export class UnknownFormatError extends OptionsError {}
export class FinishedError extends ToolscanError {}
export class FreedError extends ToolscanError {}
export class InputError extends ToolscanError {}
export class InvalidUtf8Error extends ToolscanError {
  constructor(message, code, offset) {
    super(message, code);
    this.offset = offset;
  }
}
export class ManifestError extends ToolscanError {}
export class RenderError extends ToolscanError {}

const ERRORS = {
  options: OptionsError,
  unknown_format: UnknownFormatError,
  finished: FinishedError,
  freed: FreedError,
  invalid_utf8: InvalidUtf8Error,
  manifest: ManifestError,
  render: RenderError,
};

/**
 * Instantiates the module from a `WebAssembly.Module`, or from its bytes
 * (synchronously: browsers allow that for modules of any size only off the
 * main thread; there, `await init(bytesOrResponse)`). A second call does
 * nothing.
 */
export function initSync(moduleOrBytes) {
  if (wasm) return;
  const module =
    moduleOrBytes instanceof WebAssembly.Module
      ? moduleOrBytes
      : new WebAssembly.Module(moduleOrBytes);
  setInstance(new WebAssembly.Instance(module, {}));
}

/** Instantiates the module from a `WebAssembly.Module`, its bytes, or a `Response` (a `fetch`). */
export async function init(source) {
  if (wasm) return;
  const src = await source;
  let instance;
  if (src instanceof WebAssembly.Module) {
    instance = await WebAssembly.instantiate(src, {});
  } else if (typeof Response !== "undefined" && src instanceof Response) {
    const found = await WebAssembly.instantiate(await src.arrayBuffer(), {});
    instance = found.instance;
  } else {
    instance = (await WebAssembly.instantiate(src, {})).instance;
  }
  if (!wasm) setInstance(instance);
}

function setInstance(instance) {
  wasm = instance.exports;
  bytes = new Uint8Array(wasm.memory.buffer);
}

function exports() {
  if (!wasm) {
    throw new ToolscanError(
      "toolscan's WebAssembly module is not loaded: import \"toolscan\" (which loads it), or call init()/initSync() of \"toolscan/core\" first",
      "not_loaded",
    );
  }
  return wasm;
}

function memory() {
  // A grown memory detaches the old buffer: a view of it has length 0.
  if (bytes.byteLength === 0) bytes = new Uint8Array(wasm.memory.buffer);
  return bytes;
}

/** Writes a string or bytes into the input buffer; how many bytes. */
function put(chunk) {
  const w = exports();
  if (typeof chunk === "string") {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const ptr = w.toolscan_input(chunk.length * 3);
    return encoder.encodeInto(chunk, memory().subarray(ptr, ptr + chunk.length * 3)).written;
  }
  const ptr = w.toolscan_input(chunk.length);
  memory().set(chunk, ptr);
  return chunk.length;
}

/** The answer of the last call as text. */
function output() {
  const w = exports();
  const len = w.toolscan_output_len();
  if (len === 0) return "";
  const ptr = w.toolscan_output();
  const mem = memory();
  // A token-sized ASCII answer is made without the decoder, which costs
  // more than the loop below for a few bytes.
  if (len <= 16) {
    let ascii = true;
    for (let i = ptr; i < ptr + len; i++) if (mem[i] > 0x7f) ascii = false;
    if (ascii) return String.fromCharCode.apply(null, mem.subarray(ptr, ptr + len));
  }
  return decoder.decode(mem.subarray(ptr, ptr + len));
}

/** The error the last call left in the output buffer, as the class it names. */
function failure() {
  const e = JSON.parse(output());
  const Class = ERRORS[e.error] ?? ToolscanError;
  return Class === InvalidUtf8Error
    ? new InvalidUtf8Error(e.message, e.error, e.offset)
    : new Class(e.message, e.error);
}

/** The events of a feed or finish of this status: one delta bare, else a JSON array (none: no output). */
function events(status) {
  switch (status) {
    case ONE_TEXT:
      return [{ type: "text", delta: output() }];
    case ONE_REASONING:
      return [{ type: "reasoning", delta: output() }];
    case ONE_ARGS:
      return [{ type: "tool_call_args", index: wasm.toolscan_output_index(), delta: output() }];
    default: {
      const text = output();
      return text === "" ? [] : JSON.parse(text);
    }
  }
}

/** Runs a one-shot request with a JSON input; its answer. */
function request(op, input) {
  const len = put(typeof input === "string" ? input : JSON.stringify(input));
  if (exports().toolscan_request(op, len, 0) !== OK) throw failure();
  return JSON.parse(output());
}

function isBytes(x) {
  return x instanceof Uint8Array;
}

/** The options as the module reads them: the parser's own, plus a random seed for random ids. */
function optionsJson(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new OptionsError("options must be an object", "options");
  }
  const o = { ...options };
  if ((o.ids === undefined || o.ids === "random") && o.seed === undefined) {
    o.randomSeed = randomSeed();
  }
  return JSON.stringify(o);
}

function randomSeed() {
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === "function") {
    const [hi, lo] = c.getRandomValues(new Uint32Array(2));
    // 53 bits: what a JSON number carries exactly.
    return (hi & 0x1fffff) * 0x100000000 + lo;
  }
  return Math.floor(Math.random() * Number.MAX_SAFE_INTEGER);
}

// Parsers dropped without free(): the garbage collector frees them.
const registry =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry((handle) => wasm && wasm.toolscan_parser_free(handle))
    : null;

/** A streaming parser for one answer. */
export class Parser {
  #handle;
  #format;
  #finished = false;

  constructor(options = {}) {
    const w = exports();
    const len = put(optionsJson(options));
    const handle = w.toolscan_parser_new(len);
    if (handle < 0) throw failure();
    this.#handle = handle;
    this.#format = output();
    registry?.register(this, handle, this);
  }

  /** The format it reads (its canonical name, or "auto"). */
  get format() {
    return this.#format;
  }

  /** Bytes fed so far. */
  get offset() {
    this.#live();
    return wasm.toolscan_parser_offset(this.#handle);
  }

  /** Whether finish() was called. */
  get finished() {
    return this.#finished;
  }

  /** Feeds the next chunk (a string, or bytes); the events it decides. */
  feed(chunk) {
    this.#live();
    if (typeof chunk !== "string" && !isBytes(chunk)) {
      throw new InputError(
        `feed() takes a string or a Uint8Array, not ${describe(chunk)}`,
        "input",
      );
    }
    if (this.#finished) throw new FinishedError("feed() after finish()", "finished");
    const status = wasm.toolscan_parser_feed(this.#handle, put(chunk));
    if (status < 0) throw failure();
    return events(status);
  }

  /** Ends the answer; the last event is `done`. A second call returns []. */
  finish(options = {}) {
    this.#live();
    if (this.#finished) return [];
    this.#finished = true;
    const atStop = options !== null && typeof options === "object" && options.atStop === true;
    const status = wasm.toolscan_parser_finish(this.#handle, atStop ? 1 : 0);
    if (status < 0) throw failure();
    return events(status);
  }

  /** Frees the parser's WebAssembly memory; later calls throw FreedError. */
  free() {
    if (this.#handle === -1) return;
    registry?.unregister(this);
    wasm.toolscan_parser_free(this.#handle);
    this.#handle = -1;
  }

  [Symbol.dispose ?? Symbol.for("Symbol.dispose")]() {
    this.free();
  }

  #live() {
    if (this.#handle === -1) throw new FreedError("the parser was freed", "freed");
  }
}

function describe(x) {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x === "object") return `a ${x.constructor?.name ?? "object"}`;
  return `a ${typeof x}`;
}

/** Parses a whole answer. */
export function parse(text, options = {}) {
  if (typeof text !== "string" && !isBytes(text)) {
    throw new InputError(`parse() takes a string or a Uint8Array, not ${describe(text)}`, "input");
  }
  const w = exports();
  const json = encoder.encode(optionsJson(options));
  const body = typeof text === "string" ? encoder.encode(text) : text;
  const ptr = w.toolscan_input(json.length + body.length);
  const mem = memory();
  mem.set(json, ptr);
  mem.set(body, ptr + json.length);
  if (w.toolscan_request(REQUEST.parse, json.length + body.length, json.length) !== OK) {
    throw failure();
  }
  return JSON.parse(output());
}

/** The built-in formats, in `auto`'s order of precedence. */
export function formats() {
  exports();
  const len = put("");
  if (wasm.toolscan_request(REQUEST.formats, len, 0) !== OK) throw failure();
  return JSON.parse(output());
}

/** The built-in format a model writes, or null. */
export function formatForModel(model) {
  if (typeof model !== "string") {
    throw new InputError(`formatForModel() takes a string, not ${describe(model)}`, "input");
  }
  return request(REQUEST.formatForModel, model);
}

/** The manifest of `tools` in `format`. */
export function manifest(format, tools) {
  return request(REQUEST.manifest, { format: String(format), tools });
}

/** The text the model would have written for this turn. */
export function render(format, response = {}) {
  if (response === null || typeof response !== "object") {
    throw new InputError("render() takes a response object", "input");
  }
  return request(REQUEST.render, { format: String(format), ...response });
}

/** A run of tool results as the format's chat template writes them. */
export function renderToolResults(format, results) {
  if (!Array.isArray(results)) {
    throw new InputError("renderToolResults() takes an array of results", "input");
  }
  return request(REQUEST.renderToolResults, { format: String(format), results });
}

/** JSON.parse of a call's arguments. */
export function parseArguments(call) {
  return JSON.parse(call.arguments);
}

/** The version of the package (the crate's), once loaded. */
export function loadedVersion() {
  exports();
  const len = put("");
  wasm.toolscan_request(REQUEST.version, len, 0);
  return JSON.parse(output());
}

/** How many parsers are alive (made and not freed): to check that none leak. */
export function liveParsers() {
  return exports().toolscan_parsers_live();
}
