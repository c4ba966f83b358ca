// The ways the module gets loaded, each in a fresh Node process (a module
// loads once per process): the browser's (`init` with a `fetch` response
// from an http server), an edge worker's (`initSync` with a compiled
// `WebAssembly.Module`), and the API used before loading (a typed error).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import path from "node:path";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CORE = JSON.stringify(new URL("../core.js", import.meta.url).href);
const WASM = path.join(PKG, "toolscan.wasm");
const run = promisify(execFile);

/** Runs `source` as an ES module in a new Node process; what it printed, parsed. */
async function inFreshNode(source) {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", source]);
  return JSON.parse(stdout);
}

const USE = `
const p = new core.Parser({ format: "hermes" });
const ev = [...p.feed('<tool_call>{"name": "f", "arguments": {}}</tool_call>'), ...p.finish()];
p.free();
console.log(JSON.stringify(ev.map((e) => e.type)));`;
const WANT = ["tool_call_start", "tool_call_args", "tool_call_end", "done"];

test("init() with a fetch response, as a browser page loads it", async () => {
  const wasm = readFileSync(WASM);
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/wasm" });
    res.end(wasm);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}/toolscan.wasm`;
  try {
    const got = await inFreshNode(`import * as core from ${CORE};
await core.init(fetch(${JSON.stringify(url)}));${USE}`);
    assert.deepEqual(got, WANT);
  } finally {
    server.close();
  }
});

test("initSync() with a compiled WebAssembly.Module, as an edge worker imports it", async () => {
  const got = await inFreshNode(`import * as core from ${CORE};
import { readFileSync } from "node:fs";
core.initSync(new WebAssembly.Module(readFileSync(${JSON.stringify(WASM)})));${USE}`);
  assert.deepEqual(got, WANT);
});

test("the API before the module is loaded throws a ToolscanError that says what to do", async () => {
  const got = await inFreshNode(`import * as core from ${CORE};
try { new core.Parser(); console.log('"no error"'); }
catch (e) { console.log(JSON.stringify([e instanceof core.ToolscanError, e.code, e.message])); }`);
  assert.equal(got[0], true);
  assert.equal(got[1], "not_loaded");
  assert.match(got[2], /call init\(\)\/initSync\(\)/);
});
