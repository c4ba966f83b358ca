// Streaming benchmark of toolscan in Node, side by side with
// @ai-sdk-tool/parser, in one run.
//
//   node bench/feed.mjs [--rounds N] [--json FILE] [--wasm PATH]
//
// (run from js/toolscan, its devDependencies installed; 7 rounds take
// ~4-5 minutes on a loaded 2-core VM, most of it @ai-sdk-tool/parser on the
// 64 KB calls. Also --min-ms MS, the least time of one measurement, default
// 50, and --only REGEX, the contenders to run: feed, feedAlt, mw, ast, floor.)
//
// Every stream is cut into 4-character deltas, and every contender reads the
// same deltas:
//   toolscan Parser.feed    `new Parser({format, tools})`, feed() each delta (the
//                           crossing into WebAssembly and the events' JSON
//                           included; every event's fields are read), finish().
//   toolscan middleware     `toolscanMiddleware({format}).wrapStream` over a
//                           ReadableStream of v3 parts (stream-start,
//                           text-start, text-delta…, text-end, finish), every
//                           output part read.
//   @ai-sdk-tool/parser     its `hermesToolMiddleware` / `qwen3CoderToolMiddleware`
//                           `.wrapStream` over the same part streams, every
//                           output part read.
//   stream only             the part stream read with no middleware (the floor
//                           both middlewares stand on).
// Both middlewares get the same `params`: one function tool in `tools` (what
// toolscan reads) and the same tool in
// `providerOptions.toolCallMiddleware.originalTools` (where @ai-sdk-tool's
// wrapStream reads it: its transformParams puts it there).
//
// Streams, each written in the format's own notation:
//   text     ~16 KB of prose, no call;
//   call 4K  one write_file call whose `content` is 4 KB;
//   call 64K the same with 64 KB of content.
// The content is code-like (quotes, backslashes, tabs, newlines, `<`, `&`,
// non-ASCII) so that hermes' JSON has much to escape.
//
// Rounds interleave contenders and streams (A B C A B C …, the order rotated
// each round) so that the load of this shared machine hits all alike; the
// table shows the median. Each measurement repeats a pass until it lasts
// ≥ 50 ms. Every pass is checked: the call's name and arguments must equal
// what was written (the text stream: the text must come back whole and no
// call) — a contender that fails is marked ✗ in the table and warned about.
//
// --wasm PATH adds a contender: Parser.feed on another build of the module
// (e.g. one built with opt-level "s"), loaded into its own instance of
// core.js, interleaved with the rest.

import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

// ---------------------------------------------------------------------------
// Options.

const argv = process.argv.slice(2);
const opt = { rounds: 7, json: null, wasm: null, minMs: 50, only: null };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => {
    if (i + 1 >= argv.length) die(`${a} needs a value`);
    return argv[++i];
  };
  if (a === "--rounds") opt.rounds = Math.max(1, parseInt(val(), 10) || 0);
  else if (a === "--json") opt.json = val();
  else if (a === "--wasm") opt.wasm = val();
  else if (a === "--min-ms") opt.minMs = Number(val());
  else if (a === "--only") opt.only = new RegExp(val());
  else if (a === "-h" || a === "--help") {
    console.log("node bench/feed.mjs [--rounds N] [--json FILE] [--wasm PATH] [--min-ms MS] [--only REGEX]");
    process.exit(0);
  } else die(`unknown option ${a}`);
}
function die(msg) {
  console.error(`feed.mjs: ${msg}`);
  process.exit(2);
}

// No forced collection between measurements: a `gc()` before a pass made
// the next passes of Parser.feed about twice as slow (measured on Node 20),
// so each contender pays for its own garbage as it makes it.

// ---------------------------------------------------------------------------
// The contenders' modules.

const core = await import("../core.js");
const { toolscanMiddleware } = await import("../ai-sdk.js"); // loads ../toolscan.wasm
const tool = await import("@ai-sdk-tool/parser");
let altCore = null;
if (opt.wasm) {
  // A second instance of core.js (another URL), holding the other module.
  altCore = await import(new URL("../core.js?alt", import.meta.url).href);
  altCore.initSync(readFileSync(opt.wasm));
}

// ---------------------------------------------------------------------------
// The streams.

const DELTA = 4;

function prose(size) {
  const words = (
    "the parser reads each delta as it arrives and decides at once what is text and what may " +
    "still be the start of a call so that nothing is held back longer than the longest marker " +
    "a model writes — café, naïve, déjà vu — numbers like 3.14 and 42, commas, (brackets) and " +
    "\"quotes\" are plain text here, as are a < b and c > d outside any tag"
  ).split(" ");
  let out = "";
  let n = 0;
  while (out.length < size) {
    out += words[n % words.length];
    n++;
    out += n % 17 === 0 ? ".\n\n" : n % 7 === 0 ? ", " : " ";
  }
  return out.slice(0, size).trimEnd() + ".";
}

function code(size) {
  const lines = [];
  let len = 0;
  for (let i = 0; len < size; i++) {
    const l = [
      `function f${i}(a, b) {`,
      `\tconst s = "value \\"${i}\\" and 'single' quotes";`,
      `\tif (a < b && b > ${i}) return s + "\\n" + path.join("C:\\\\dir", "x${i}");`,
      `\treturn { "k": ${i}, "v": [1, 2, 3], "é": "—" };`,
      `}`,
      ``,
    ][i % 6];
    lines.push(l);
    len += l.length + 1;
  }
  return lines.join("\n").slice(0, size);
}

const FORMATS = {
  hermes: {
    write: (args) =>
      `<tool_call>\n{"name": "write_file", "arguments": {"path": ${JSON.stringify(args.path)}, "content": ${JSON.stringify(args.content)}}}\n</tool_call>`,
    aiSdkTool: tool.hermesToolMiddleware,
  },
  "qwen3-coder": {
    write: (args) =>
      `<tool_call>\n<function=write_file>\n<parameter=path>\n${args.path}\n</parameter>\n<parameter=content>\n${args.content}\n</parameter>\n</function>\n</tool_call>`,
    aiSdkTool: tool.qwen3CoderToolMiddleware,
  },
};

const TEXT = prose(16 * 1024);
const STREAMS = [];
for (const [format, f] of Object.entries(FORMATS)) {
  for (const [label, size] of [["text", 0], ["call 4K", 4 * 1024], ["call 64K", 64 * 1024]]) {
    const args = size === 0 ? null : { path: "a.txt", content: code(size) };
    const text = args ? f.write(args) : TEXT;
    const deltas = [];
    // 4 UTF-16 units (all the characters here are in the BMP, so no pair is split).
    for (let i = 0; i < text.length; i += DELTA) deltas.push(text.slice(i, i + DELTA));
    const parts = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t0" },
      ...deltas.map((delta) => ({ type: "text-delta", id: "t0", delta })),
      { type: "text-end", id: "t0" },
      {
        type: "finish",
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: deltas.length, text: deltas.length, reasoning: undefined },
        },
      },
    ];
    STREAMS.push({
      format,
      label,
      name: `${format} ${label}`,
      text,
      bytes: Buffer.byteLength(text),
      deltas,
      parts,
      expect: args ? { name: "write_file", args } : null,
      aiSdkTool: f.aiSdkTool,
    });
  }
}

// ---------------------------------------------------------------------------
// The request both middlewares see.

const WRITE_FILE_SCHEMA = {
  type: "object",
  properties: { path: { type: "string" }, content: { type: "string" } },
  required: ["path", "content"],
  additionalProperties: false,
};
const WRITE_FILE = {
  type: "function",
  name: "write_file",
  description: "Writes a file.",
  inputSchema: WRITE_FILE_SCHEMA,
};
const PARAMS = {
  prompt: [{ role: "user", content: [{ type: "text", text: "Write a.txt." }] }],
  tools: [WRITE_FILE],
  providerOptions: {
    toolCallMiddleware: { originalTools: tool.originalToolsSchema.encode([WRITE_FILE]) },
  },
};
const MODEL = {
  specificationVersion: "v3",
  provider: "bench",
  modelId: "bench",
  supportedUrls: {},
  doGenerate: async () => {
    throw new Error("not used");
  },
  doStream: async () => {
    throw new Error("not used");
  },
};

// ---------------------------------------------------------------------------
// One pass of each contender: its result, to check.

function upstream(parts) {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < parts.length) c.enqueue(parts[i++]);
      else c.close();
    },
  });
}

/** Reads every v3 part of a middleware's output stream. */
async function drain(stream) {
  const reader = stream.getReader();
  let text = "";
  const calls = [];
  let parts = 0;
  let fields = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts++;
    switch (value.type) {
      case "text-delta":
        text += value.delta;
        break;
      case "tool-input-delta":
        fields += value.delta.length;
        break;
      case "tool-call":
        calls.push({ name: value.toolName, input: value.input });
        break;
      case "error":
        calls.push({ error: value.error });
        break;
      default:
        fields += value.type.length;
    }
  }
  return { text, calls, parts, fields };
}

async function viaMiddleware(middleware, s) {
  const { stream } = await middleware.wrapStream({
    doStream: async () => ({ stream: upstream(s.parts) }),
    doGenerate: async () => {
      throw new Error("doGenerate not expected");
    },
    params: PARAMS,
    model: MODEL,
  });
  return drain(stream);
}

// The parser gets the request's tool, as the middleware's own parser does
// (with it, a qwen3-coder string parameter streams as it is written;
// without, its type is only known once it closed).
const PARSER_TOOLS = [{ name: "write_file", description: "Writes a file.", parameters: WRITE_FILE_SCHEMA }];

function viaParser(coreModule, s) {
  const parser = new coreModule.Parser({ format: s.format, tools: PARSER_TOOLS });
  let text = "";
  const calls = [];
  let events = 0;
  let fields = 0;
  const read = (es) => {
    for (const e of es) {
      events++;
      switch (e.type) {
        case "text":
          text += e.delta;
          break;
        case "tool_call_start":
          fields += e.id.length + e.name.length + e.index;
          break;
        case "tool_call_args":
          fields += e.delta.length;
          break;
        case "tool_call_end":
          calls.push({ name: e.name, input: e.arguments });
          break;
        case "diagnostic":
          fields += e.message.length;
          break;
        default:
          fields += e.type.length;
      }
    }
  };
  for (const d of s.deltas) read(parser.feed(d));
  read(parser.finish());
  parser.free();
  return { text, calls, parts: events, fields };
}

const toolscanMw = Object.fromEntries(
  Object.keys(FORMATS).map((format) => [format, toolscanMiddleware({ format })]),
);
const PASSTHROUGH = {
  specificationVersion: "v3",
  wrapStream: async ({ doStream }) => doStream(),
};

const CONTENDERS = [
  { key: "feed", label: "toolscan Parser.feed", run: (s) => viaParser(core, s) },
  ...(altCore
    ? [{ key: "feedAlt", label: `toolscan Parser.feed (--wasm)`, run: (s) => viaParser(altCore, s) }]
    : []),
  { key: "mw", label: "toolscan middleware", run: (s) => viaMiddleware(toolscanMw[s.format], s) },
  { key: "ast", label: "@ai-sdk-tool/parser", run: (s) => viaMiddleware(s.aiSdkTool, s) },
  { key: "floor", label: "stream only (no middleware)", run: (s) => viaMiddleware(PASSTHROUGH, s), floor: true },
].filter((c) => !opt.only || opt.only.test(c.key) || opt.only.test(c.label));

/** What is wrong with a pass's result, or null. */
function check(s, r, floor) {
  if (floor) return r.text === s.text ? null : "the text did not come through";
  if (!s.expect) {
    if (r.calls.length !== 0) return `${r.calls.length} call(s) in plain text`;
    if (r.text !== s.text) return `text differs (${r.text.length} of ${s.text.length} characters back)`;
    return null;
  }
  if (r.calls.length !== 1) {
    return `${r.calls.length} calls instead of 1` + (r.calls[0]?.error ? ` (error: ${r.calls[0].error})` : "");
  }
  const c = r.calls[0];
  if (c.name !== s.expect.name) return `name ${JSON.stringify(c.name)}`;
  let args;
  try {
    args = typeof c.input === "string" ? JSON.parse(c.input) : c.input;
  } catch (e) {
    return `arguments are not JSON: ${String(c.input).slice(0, 80)}…`;
  }
  if (!isDeepStrictEqual(args, s.expect.args)) {
    const diff = [];
    for (const k of new Set([...Object.keys(s.expect.args), ...Object.keys(args ?? {})])) {
      const a = args?.[k];
      const b = s.expect.args[k];
      if (a === b) continue;
      if (typeof a === "string" && typeof b === "string") {
        let i = 0;
        while (i < a.length && a[i] === b[i]) i++;
        diff.push(
          `${k}: ${a.length} vs ${b.length} chars, first difference at ${i}: got ${JSON.stringify(a.slice(i, i + 24))}, wrote ${JSON.stringify(b.slice(i, i + 24))}`,
        );
      } else diff.push(`${k}: got ${JSON.stringify(a)?.slice(0, 60)}, wrote ${JSON.stringify(b)?.slice(0, 60)}`);
    }
    return `arguments differ (${diff.join("; ")})`;
  }
  if (r.text.trim() !== "") return `stray text around the call: ${JSON.stringify(r.text.slice(0, 60))}`;
  return null;
}

// ---------------------------------------------------------------------------
// Measuring.

/** Repeats passes until minMs; ns per pass. */
async function measure(c, s) {
  let n = 0;
  let last;
  const t0 = process.hrtime.bigint();
  let t;
  do {
    last = await c.run(s);
    n++;
    t = Number(process.hrtime.bigint() - t0) / 1e6;
  } while (t < opt.minMs);
  return { ns: (t * 1e6) / n, last };
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};

const samples = new Map(); // `${stream}|${contender}` → ns per pass[]
const failures = new Map(); // same key → message
const started = Date.now();

// Correctness first (and the warm-up: every path run a few times, compiled).
for (const s of STREAMS) {
  for (const c of CONTENDERS) {
    // Three passes, or fewer when a pass is slow (a quadratic contender on 64 KB).
    const t0 = Date.now();
    for (let i = 0; i < 3 && Date.now() - t0 < 2000; i++) {
      let r;
      try {
        r = await c.run(s);
      } catch (e) {
        failures.set(`${s.name}|${c.key}`, `threw ${e?.message ?? e}`);
        break;
      }
      const bad = check(s, r, c.floor);
      if (bad) failures.set(`${s.name}|${c.key}`, bad);
    }
  }
}
for (const [k, msg] of failures) {
  const [sn, ck] = k.split("|");
  console.error(`WARNING: ${CONTENDERS.find((c) => c.key === ck).label} on "${sn}": ${msg}`);
}

for (let round = 0; round < opt.rounds; round++) {
  for (let si = 0; si < STREAMS.length; si++) {
    const s = STREAMS[si];
    for (let j = 0; j < CONTENDERS.length; j++) {
      const c = CONTENDERS[(j + round + si) % CONTENDERS.length];
      const key = `${s.name}|${c.key}`;
      if (failures.get(key)?.startsWith("threw")) continue;
      const { ns, last } = await measure(c, s);
      const bad = check(s, last, c.floor);
      if (bad && !failures.has(key)) {
        failures.set(key, bad);
        console.error(`WARNING: ${c.label} on "${s.name}": ${bad}`);
      }
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(ns);
    }
  }
  process.stderr.write(`round ${round + 1}/${opt.rounds} done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}

// ---------------------------------------------------------------------------
// Report.

const fmtNs = (x) => (x == null ? "—" : x >= 1e4 ? `${(x / 1e3).toFixed(1)} µs` : `${x.toFixed(0)} ns`);
const fmtMs = (x) => (x == null ? "—" : x >= 1e9 ? `${(x / 1e9).toFixed(2)} s` : `${(x / 1e6).toFixed(2)} ms`);
const fmtX = (x) => (x == null ? "—" : x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`);
const spread = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return `${((a[a.length - 1] - a[0]) / median(a) * 100).toFixed(0)}%`;
};

const results = [];
for (const s of STREAMS) {
  for (const c of CONTENDERS) {
    const key = `${s.name}|${c.key}`;
    const xs = samples.get(key) ?? [];
    const ns = xs.length ? median(xs) : null;
    results.push({
      stream: s.name,
      format: s.format,
      kind: s.label,
      bytes: s.bytes,
      deltas: s.deltas.length,
      contender: c.key,
      label: c.label,
      nsPerPass: ns,
      nsPerDelta: ns == null ? null : ns / s.deltas.length,
      samplesNsPerPass: xs,
      ok: !failures.has(key),
      failure: failures.get(key) ?? null,
    });
  }
}
const get = (stream, key) => results.find((r) => r.stream === stream && r.contender === key);

const wasmInfo = (path) => {
  const b = readFileSync(path);
  return { path, raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
};
const wasm = [wasmInfo(fileURLToPath(new URL("../toolscan.wasm", import.meta.url)))];
if (opt.wasm) wasm.push(wasmInfo(opt.wasm));

const out = [];
out.push(`## toolscan ${core.loadedVersion()} vs @ai-sdk-tool/parser — ${DELTA}-character deltas, Node ${process.version}`);
out.push("");
out.push(`Median of ${opt.rounds} interleaved rounds (each measurement ≥ ${opt.minMs} ms of passes); spread = (max − min) / median over the rounds. ✗ = the contender did not produce what was written (see the warnings).`);
out.push("");
out.push("| stream | bytes | deltas | contender | per delta | per stream | spread | ok |");
out.push("|---|---:|---:|---|---:|---:|---:|:-:|");
for (const r of results) {
  out.push(
    `| ${r.stream} | ${r.bytes} | ${r.deltas} | ${r.label} | ${fmtNs(r.nsPerDelta)} | ${fmtMs(r.nsPerPass)} | ${r.samplesNsPerPass.length ? spread(r.samplesNsPerPass) : "—"} | ${r.ok ? "✓" : "✗"} |`,
  );
}
out.push("");

const ratios = [];
if (CONTENDERS.some((c) => c.key === "ast")) {
  out.push("### toolscan ÷ @ai-sdk-tool/parser (time; < 1 means toolscan is faster)");
  out.push("");
  out.push("| stream | Parser.feed ÷ ai-sdk-tool | toolscan middleware ÷ ai-sdk-tool | ai-sdk-tool ok |");
  out.push("|---|---:|---:|:-:|");
  for (const s of STREAMS) {
    const a = get(s.name, "ast");
    const f = get(s.name, "feed");
    const m = get(s.name, "mw");
    const rf = a?.nsPerPass && f?.nsPerPass ? f.nsPerPass / a.nsPerPass : null;
    const rm = a?.nsPerPass && m?.nsPerPass ? m.nsPerPass / a.nsPerPass : null;
    ratios.push({ stream: s.name, feedOverAiSdkTool: rf, middlewareOverAiSdkTool: rm, aiSdkToolOk: a?.ok ?? null });
    out.push(`| ${s.name} | ${fmtX(rf)} | ${fmtX(rm)} | ${a?.ok ? "✓" : "✗"} |`);
  }
  out.push("");
}

const linearity = [];
out.push("### Linearity: time per delta, 64 KB argument ÷ 4 KB argument (1.00 = flat)");
out.push("");
out.push(`| format | contender | per delta 4K | per delta 64K | 64K ÷ 4K |`);
out.push("|---|---|---:|---:|---:|");
for (const format of Object.keys(FORMATS)) {
  for (const c of CONTENDERS) {
    const a = get(`${format} call 4K`, c.key);
    const b = get(`${format} call 64K`, c.key);
    const x = a?.nsPerDelta && b?.nsPerDelta ? b.nsPerDelta / a.nsPerDelta : null;
    linearity.push({ format, contender: c.key, nsPerDelta4K: a?.nsPerDelta, nsPerDelta64K: b?.nsPerDelta, ratio: x });
    out.push(`| ${format} | ${c.label} | ${fmtNs(a?.nsPerDelta)} | ${fmtNs(b?.nsPerDelta)} | ${x == null ? "—" : x.toFixed(2)} |`);
  }
}
out.push("");

if (altCore) {
  out.push(`### Parser.feed: ${opt.wasm} ÷ toolscan.wasm (time)`);
  out.push("");
  out.push("| stream | toolscan.wasm | --wasm | ÷ |");
  out.push("|---|---:|---:|---:|");
  for (const s of STREAMS) {
    const a = get(s.name, "feed");
    const b = get(s.name, "feedAlt");
    out.push(`| ${s.name} | ${fmtNs(a?.nsPerDelta)} | ${fmtNs(b?.nsPerDelta)} | ${a?.nsPerPass && b?.nsPerPass ? (b.nsPerPass / a.nsPerPass).toFixed(2) : "—"} |`);
  }
  out.push("");
}

out.push("### .wasm size");
out.push("");
out.push("| module | raw | gzip -9 |");
out.push("|---|---:|---:|");
for (const w of wasm) out.push(`| ${w.path} | ${w.raw} B (${(w.raw / 1024).toFixed(0)} KiB) | ${w.gzip} B (${(w.gzip / 1024).toFixed(0)} KiB) |`);
out.push("");

// The targets the project states.
const targets = [];
{
  const t = STREAMS.filter((s) => !s.expect).map((s) => get(s.name, "feed")?.nsPerDelta);
  if (t.every((x) => x != null)) {
    const worst = Math.max(...t);
    targets.push({ target: "≤ 2 µs per text delta (Parser.feed)", met: worst <= 2000, detail: `worst ${fmtNs(worst)}` });
  }
  const lin = linearity.filter((l) => l.contender === "feed" && l.ratio != null);
  if (lin.length) {
    const worst = Math.max(...lin.map((l) => l.ratio));
    targets.push({ target: "linear in the argument size (Parser.feed, 64K ÷ 4K per delta ≤ 1.5)", met: worst <= 1.5, detail: `worst ${worst.toFixed(2)}` });
  }
  const ah = ratios.filter((r) => r.middlewareOverAiSdkTool != null);
  if (ah.length) {
    const worst = Math.max(...ah.map((r) => r.middlewareOverAiSdkTool));
    targets.push({ target: "ahead of @ai-sdk-tool/parser on every stream (middleware vs middleware)", met: worst < 1, detail: `worst ratio ${fmtX(worst)}` });
  }
  targets.push({ target: ".wasm ≤ 1 MB raw", met: wasm[0].raw <= 1_000_000, detail: `${wasm[0].raw} B` });
}
out.push("### Targets");
out.push("");
for (const t of targets) out.push(`- ${t.met ? "met" : "NOT met"}: ${t.target} — ${t.detail}`);
if (failures.size) {
  out.push("");
  out.push("### Failures");
  out.push("");
  for (const [k, msg] of failures) {
    const [sn, ck] = k.split("|");
    out.push(`- ✗ ${CONTENDERS.find((c) => c.key === ck).label} on "${sn}": ${msg}`);
  }
}
out.push("");
out.push(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log(out.join("\n"));

if (opt.json) {
  writeFileSync(
    opt.json,
    JSON.stringify(
      {
        node: process.version,
        toolscan: core.loadedVersion(),
        deltaChars: DELTA,
        rounds: opt.rounds,
        minMs: opt.minMs,
        results,
        ratios,
        linearity,
        wasm,
        targets,
        failures: Object.fromEntries(failures),
      },
      null,
      2,
    ) + "\n",
  );
}
