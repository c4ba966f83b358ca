// The package's main entry: loads toolscan's WebAssembly module (the
// `toolscan.wasm` beside this file) and exports the API of `core.js`.
// Node, Bun and Deno read the file; a browser or a bundler's page fetches
// it (bundlers recognise `new URL(..., import.meta.url)` as an asset).
import { init, initSync, loadedVersion } from "./core.js";

export * from "./core.js";

const url = new URL("./toolscan.wasm", import.meta.url);
if (url.protocol === "file:") {
  const { readFile } = await import("node:fs/promises");
  initSync(await readFile(url));
} else {
  await init(fetch(url));
}

/** The version of the package (the crate's). */
export const version = loadedVersion();
