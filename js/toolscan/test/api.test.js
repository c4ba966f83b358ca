// The package's API as a user meets it: what each function returns, the
// typed errors bad input throws, and that no bad input leaves the
// WebAssembly instance unusable or leaks a parser.
import { test } from "node:test";
import assert from "node:assert/strict";

import * as toolscan from "../index.js";
import * as core from "../core.js";

const {
  Parser,
  parse,
  formats,
  formatForModel,
  manifest,
  render,
  renderToolResults,
  parseArguments,
  ToolscanError,
  OptionsError,
  UnknownFormatError,
  FinishedError,
  FreedError,
  InputError,
  InvalidUtf8Error,
  ManifestError,
  RenderError,
} = toolscan;

const HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>';
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather in a city.",
      parameters: { type: "object", required: ["city"], properties: { city: { type: "string" } } },
    },
  },
];

/** How many parsers the module holds (none leak). */
const live = () => core.liveParsers();

function feedAll(p, pieces) {
  const events = [];
  for (const piece of pieces) events.push(...p.feed(piece));
  events.push(...p.finish());
  return events;
}

test("a call streams out as the contract's events, with JSON Lines field names", () => {
  const p = new Parser({ format: "hermes", ids: "seeded", seed: 0 });
  assert.equal(p.format, "hermes");
  const events = feedAll(p, ["Sure. ", HERMES.slice(0, 20), HERMES.slice(20)]);
  p.free();
  const types = events.map((e) => e.type);
  assert.deepEqual(types.filter((t) => t !== "tool_call_args"), [
    "text",
    "tool_call_start",
    "tool_call_end",
    "done",
  ]);
  const end = events.find((e) => e.type === "tool_call_end");
  assert.equal(end.name, "get_weather");
  assert.equal(typeof end.arguments, "string");
  assert.deepEqual(parseArguments(end), { city: "Zürich" });
  const args = events.filter((e) => e.type === "tool_call_args").map((e) => e.delta);
  assert.equal(args.join(""), end.arguments, "the deltas join to the arguments");
  assert.match(end.id, /^call_[A-Za-z0-9]{24}$/);
  assert.deepEqual(events.at(-1), { type: "done", finish_reason: "tool_calls" });
});

test("wholeCalls: a call's events wait for its end; a call that breaks sends none", () => {
  // Fed a byte at a time: nothing of the call before the feed of its last byte.
  const p = new Parser({ format: "hermes", ids: "seeded", seed: 0, wholeCalls: true });
  const bytes = new TextEncoder().encode(`Sure. ${HERMES} Done.`);
  const feeds = [];
  for (let i = 0; i < bytes.length; i++) feeds.push(p.feed(bytes.subarray(i, i + 1)));
  feeds.push(p.finish());
  p.free();
  const withCall = feeds.findIndex((f) => f.some((e) => e.type.startsWith("tool_call")));
  assert.equal(withCall, new TextEncoder().encode(`Sure. ${HERMES}`).length - 1, "the feed of the call's last byte");
  assert.deepEqual(
    feeds[withCall].filter((e) => e.type.startsWith("tool_call")).map((e) => e.type),
    ["tool_call_start", "tool_call_args", "tool_call_end"],
  );
  const end = feeds[withCall].find((e) => e.type === "tool_call_end");
  assert.equal(feeds[withCall].find((e) => e.type === "tool_call_args").delta, end.arguments);
  assert.deepEqual(parseArguments(end), { city: "Zürich" });

  // Cut short: its markup is text, and no call event went out.
  const cut = HERMES.slice(0, HERMES.indexOf("Zürich"));
  const q = new Parser({ format: "hermes", wholeCalls: true });
  const events = feedAll(q, [cut.slice(0, 15), cut.slice(15)]);
  q.free();
  assert.deepEqual(events.filter((e) => e.type.startsWith("tool_call")), []);
  assert.equal(events.filter((e) => e.type === "text").map((e) => e.delta).join(""), cut);
  // Without the option the same input started a call.
  const r = new Parser({ format: "hermes" });
  const live = feedAll(r, [cut.slice(0, 15), cut.slice(15)]);
  r.free();
  assert.ok(live.some((e) => e.type === "tool_call_start"));
});

test("random ids differ from parser to parser; seeded ids repeat", () => {
  const id = (opts) => parse(HERMES, { format: "hermes", ...opts }).tool_calls[0].id;
  assert.notEqual(id({}), id({}));
  assert.equal(id({ ids: "seeded", seed: 7 }), id({ ids: "seeded", seed: 7 }));
  assert.match(id({ ids: "mistral", seed: 1 }), /^[A-Za-z0-9]{9}$/);
});

test("bytes split inside a character give the same events as the string", () => {
  const text = `Ça va 😀 ${HERMES}`;
  const bytes = new TextEncoder().encode(text);
  const w = new Parser({ format: "hermes", seed: 1, ids: "seeded" });
  const whole = feedAll(w, [text]);
  w.free();
  const pieces = [];
  for (let i = 0; i < bytes.length; i += 3) pieces.push(bytes.subarray(i, i + 3));
  const p = new Parser({ format: "hermes", seed: 1, ids: "seeded" });
  const cut = feedAll(p, pieces);
  p.free();
  const textOf = (ev) => ev.filter((e) => e.type === "text").map((e) => e.delta).join("");
  assert.equal(textOf(cut), textOf(whole));
  assert.deepEqual(
    cut.filter((e) => e.type === "tool_call_end"),
    whole.filter((e) => e.type === "tool_call_end"),
  );
});

test("options: a model picks its format; reasoning is separated; tools check calls", () => {
  const formatOf = (opts) => {
    const p = new Parser(opts);
    p.free();
    return p.format;
  };
  assert.equal(formatOf({ model: "Qwen/Qwen3-8B" }), "hermes");
  assert.equal(formatOf(undefined), "auto");
  const r = parse(`<think>hmm</think>${HERMES}`, { format: "hermes", reasoning: true });
  assert.equal(r.reasoning, "hmm");
  assert.equal(r.tool_calls.length, 1);
  const unknown = parse(HERMES.replace("get_weather", "nope"), {
    format: "hermes",
    tools: TOOLS,
    checkCalls: "reject",
  });
  assert.equal(unknown.tool_calls.length, 0);
  assert.ok(unknown.diagnostics.some((d) => d.kind === "unknown_tool"));
  const limited = parse(HERMES, { format: "hermes", limits: { maxCallBytes: 16 } });
  assert.equal(limited.tool_calls.length, 0);
  assert.ok(limited.diagnostics.some((d) => d.kind === "limit"));
});

test("parse returns the final response; formats and formatForModel list what the build has", () => {
  const r = parse(`Hi ${HERMES}`, { format: "hermes" });
  assert.equal(r.text, "Hi ");
  assert.equal(r.finish_reason, "tool_calls");
  assert.deepEqual(JSON.parse(r.tool_calls[0].arguments), { city: "Zürich" });
  const all = formats();
  assert.ok(all.length >= 40);
  for (const name of ["hermes", "mistral-v11", "qwen3-coder", "harmony", "pythonic"]) {
    assert.ok(all.some((f) => f.name === name), name);
  }
  assert.ok(all.every((f) => typeof f.models === "string" && f.description.length > 0));
  assert.equal(formatForModel("Qwen/Qwen3-8B"), "hermes");
  assert.equal(formatForModel("no/such-model"), null);
  assert.equal(typeof toolscan.version, "string");
});

test("manifest, render and renderToolResults write what the parser reads back", () => {
  const m = manifest("hermes", TOOLS);
  assert.equal(m.notation, "json");
  assert.match(m.text, /## get_weather\nCurrent weather in a city\./);
  assert.equal(m.examples.length, 1);
  assert.equal(parse(m.examples[0], { format: "hermes" }).tool_calls[0].name, "get_weather");
  assert.equal(manifest("qwen3-coder", TOOLS).notation, "parameters");
  assert.equal(manifest("pythonic", TOOLS).notation, "python");

  const written = render("qwen3-coder", {
    text: "Checking.",
    calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
  });
  const back = parse(written, { format: "qwen3-coder" });
  assert.deepEqual(JSON.parse(back.tool_calls[0].arguments), { city: "Paris" });
  assert.equal(render("hermes", { calls: [{ name: "f", arguments: '{"a": 1}' }] }).includes('"a": 1'), true);

  assert.deepEqual(renderToolResults("hermes", [{ name: "get_weather", content: "sunny" }]), {
    role: "user",
    messages: ["<tool_response>\nsunny\n</tool_response>"],
  });
  // A format whose templates say nothing: the <tool_result> blocks, inert.
  const plain = renderToolResults("json", [{ name: "f", id: "c1", content: "</tool_result>x" }]);
  assert.deepEqual(plain, {
    role: "user",
    messages: ['<tool_result name="f" id="c1">\n&lt;/tool_result>x\n</tool_result>'],
  });
});

test("bad options throw typed errors that say which option", () => {
  const threw = (f, Class, pattern) => {
    assert.throws(f, (e) => {
      assert.ok(e instanceof Class, `${e.name}: ${e.message}`);
      assert.ok(e instanceof ToolscanError);
      assert.match(e.message, pattern);
      return true;
    });
  };
  threw(() => new Parser({ format: "nope" }), UnknownFormatError, /unknown format `nope`/);
  threw(() => new Parser({ format: "nope" }), OptionsError, /nope/);
  threw(() => new Parser({ checkCalls: "maybe" }), OptionsError, /checkCalls must be/);
  threw(() => new Parser({ reasonning: true }), OptionsError, /unknown field `reasonning`/);
  threw(() => new Parser({ reasoning: "yes" }), OptionsError, /boolean/);
  threw(() => new Parser({ limits: { maxDepth: 0 } }), OptionsError, /limits\.maxDepth/);
  threw(() => new Parser({ tools: "not json" }), OptionsError, /tools/);
  threw(() => new Parser(42), OptionsError, /options must be an object/);
  threw(() => manifest("auto", TOOLS), OptionsError, /`auto` is not a format to write in/);
  threw(() => manifest("hermes", []), ManifestError, /no tools/);
  threw(() => render("hermes", { calls: [{ name: "", arguments: {} }] }), RenderError, /empty name/);
  threw(() => render("hermes", { calls: [{ name: "f", arguments: [1] }] }), RenderError, /arguments/);
  threw(() => renderToolResults("hermes", "x"), InputError, /array/);
});

test("wrong inputs, calls after finish and after free throw typed errors", () => {
  const p = new Parser({ format: "hermes" });
  for (const bad of [42, null, undefined, {}, ["a"], new ArrayBuffer(2)]) {
    assert.throws(() => p.feed(bad), InputError);
  }
  assert.throws(() => parse(7), InputError);
  assert.throws(() => formatForModel(7), InputError);
  p.feed("hello");
  assert.equal(p.finish().at(-1).type, "done");
  assert.equal(p.finished, true);
  assert.throws(() => p.feed("more"), FinishedError);
  assert.deepEqual(p.finish(), [], "a second finish answers nothing");
  p.free();
  p.free(); // a second free does nothing
  assert.throws(() => p.feed("x"), FreedError);
  assert.throws(() => p.offset, FreedError);
});

test("invalid UTF-8: replaced with a diagnostic by default, a typed error with invalidUtf8: throw", () => {
  const bad = new Uint8Array([0x61, 0xff, 0x62]);
  const p = new Parser({ format: "hermes" });
  const events = feedAll(p, [bad]);
  p.free();
  assert.equal(events.filter((e) => e.type === "text").map((e) => e.delta).join(""), "a\uFFFDb");
  assert.ok(events.some((e) => e.type === "diagnostic" && e.kind === "invalid_utf8"));

  const strict = new Parser({ format: "hermes", invalidUtf8: "throw" });
  assert.deepEqual(strict.feed(new Uint8Array([0x61, 0xc3])), [{ type: "text", delta: "a" }]);
  assert.throws(
    () => strict.feed(new Uint8Array([0x28])),
    (e) => e instanceof InvalidUtf8Error && e.offset === 1,
  );
  // The refused chunk was not fed: the character goes on.
  assert.equal(strict.offset, 2);
  assert.deepEqual(strict.feed(new Uint8Array([0xa9, 0x21])), [{ type: "text", delta: "é!" }]);
  assert.throws(() => strict.feed(new Uint8Array([0x21, 0x80])), (e) => e.offset === 5);
  assert.equal(strict.finish().at(-1).type, "done");
  strict.free();
  assert.throws(
    () => parse(new Uint8Array([0x7b, 0xfe]), { invalidUtf8: "throw" }),
    (e) => e instanceof InvalidUtf8Error && e.offset === 1,
  );
});

test("no bad input traps the instance or leaks a parser", () => {
  const before = live();
  const attempts = [
    () => new Parser({ format: 3 }),
    () => new Parser({ limits: "big" }),
    () => new Parser({ maxCalls: -1 }),
    () => new Parser({ seed: 1.5, ids: "seeded" }),
    () => parse("x", { tools: [{ nope: true }] }),
    () => render("nope", {}),
    () => renderToolResults("hermes", [{ name: 1 }]),
  ];
  for (const f of attempts) assert.throws(f, ToolscanError);
  // Everything still works, and a large chunk (the memory grows) too.
  const big = `${"x".repeat(1 << 20)}${HERMES}`;
  const r = parse(big, { format: "hermes" });
  assert.equal(r.text.length, 1 << 20);
  assert.equal(r.tool_calls.length, 1);
  const p = new Parser({ format: "hermes" });
  assert.equal(feedAll(p, [big.slice(0, 500000), big.slice(500000)]).at(-1).finish_reason, "tool_calls");
  p.free();
  assert.equal(live(), before);
});

test("a parser dropped without free() is freed by the garbage collector", { skip: typeof globalThis.gc !== "function" && "run node with --expose-gc" }, async () => {
  const before = live();
  (() => {
    for (let i = 0; i < 50; i++) new Parser({ format: "hermes" }).feed("<tool_call>{");
  })();
  assert.equal(live(), before + 50);
  for (let i = 0; i < 20 && live() > before; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(live(), before);
});

test("using / Symbol.dispose frees the parser", () => {
  const before = live();
  const p = new Parser({ format: "hermes" });
  assert.equal(live(), before + 1);
  p[Symbol.dispose ?? Symbol.for("Symbol.dispose")]();
  assert.equal(live(), before);
  assert.throws(() => p.feed("x"), FreedError);
});
