/**
 * toolscan for JavaScript: tool calls pulled out of LLM output while it
 * streams, in WebAssembly (one `.wasm`, no native addon). Importing this
 * entry loads the module (from the file beside it, or with `fetch` over
 * http); "toolscan/core" has the same API for runtimes that load it
 * themselves. See "./core.d.ts" for every declaration.
 *
 * ```js
 * import { Parser } from "toolscan";
 * const parser = new Parser({ format: "hermes" });
 * for (const chunk of chunks) for (const e of parser.feed(chunk)) console.log(e);
 * for (const e of parser.finish()) console.log(e);
 * parser.free();
 * ```
 */
export * from "./core.js";

/** The version of the package (the crate's). */
export const version: string;
