// The v3 parts the middleware emits, read straight from wrapStream /
// wrapGenerate (the shapes `ai` consumes), and the parser's lifetime.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Parser } from "../index.js";
import { toolscanMiddleware } from "../ai-sdk.js";

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const FINISH = { type: "finish", finishReason: { unified: "stop", raw: "eos" }, usage: USAGE };

const TOOLS = [
  {
    type: "function",
    name: "get_weather",
    description: "The weather in a city",
    inputSchema: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } },
  },
  { type: "function", name: "get_time", inputSchema: { type: "object", properties: {} } },
];

function pieces(text, n) {
  const cps = Array.from(text);
  const out = [];
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(""));
  return out;
}

function upstream(text, { n = 3, finish = FINISH, extra = [] } = {}) {
  const chunks = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "up" },
    ...pieces(text, n).map((delta) => ({ type: "text-delta", id: "up", delta })),
    { type: "text-end", id: "up" },
    ...extra,
    ...(finish ? [finish] : []),
  ];
  return new ReadableStream({
    start(c) {
      for (const p of chunks) c.enqueue(p);
      c.close();
    },
  });
}

async function wrapped(text, { options = { format: "hermes" }, params = {}, ...rest } = {}) {
  const mw = toolscanMiddleware(options);
  const { stream } = await mw.wrapStream({
    doStream: async () => ({ stream: upstream(text, rest) }),
    doGenerate: async () => assert.fail("not called"),
    params: { prompt: [], tools: TOOLS, toolChoice: { type: "auto" }, ...params },
    model: { modelId: "mock" },
  });
  const parts = [];
  for await (const p of stream) parts.push(p);
  return parts;
}

const textOf = (parts) =>
  parts
    .filter((p) => p.type === "text-delta")
    .map((p) => p.delta)
    .join("");

test("one call between two texts: the exact sequence of v3 parts", async () => {
  const parts = await wrapped(
    'Hi <tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}</tool_call> bye',
  );
  // Consecutive deltas merged, so the check does not depend on the cuts.
  const merged = [];
  for (const p of parts) {
    const last = merged.at(-1);
    if (last && last.type === p.type && p.delta != null && last.id === p.id) last.delta += p.delta;
    else merged.push({ ...p });
  }
  const call = merged.find((p) => p.type === "tool-call");
  const [t1, t2] = merged.filter((p) => p.type === "text-start").map((p) => p.id);
  assert.notEqual(t1, t2);
  assert.deepEqual(merged, [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: t1 },
    { type: "text-delta", id: t1, delta: "Hi " },
    { type: "text-end", id: t1 },
    { type: "tool-input-start", id: call.toolCallId, toolName: "get_weather" },
    { type: "tool-input-delta", id: call.toolCallId, delta: '{"city": "Paris", "days": 2}' },
    { type: "tool-input-end", id: call.toolCallId },
    { type: "tool-call", toolCallId: call.toolCallId, toolName: "get_weather", input: '{"city": "Paris", "days": 2}' },
    { type: "text-start", id: t2 },
    { type: "text-delta", id: t2, delta: " bye" },
    { type: "text-end", id: t2 },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "eos" }, usage: USAGE },
  ]);
  assert.ok(!parts.some((p) => p.id === "up"), "the upstream's text id does not leak");
});

test("every cut of the stream gives the same text and call", async () => {
  const text = 'A<tool_call>{"name": "get_time", "arguments": {}}</tool_call>Z é 😀';
  for (const n of [1, 2, 5, 64]) {
    const parts = await wrapped(text, { n });
    assert.equal(textOf(parts), "AZ é 😀", `n=${n}`);
    const calls = parts.filter((p) => p.type === "tool-call");
    assert.deepEqual(calls.map((c) => [c.toolName, JSON.parse(c.input)]), [["get_time", {}]], `n=${n}`);
    // Balanced: each text id opens once and closes once.
    const opened = parts.filter((p) => p.type === "text-start").map((p) => p.id);
    const closed = parts.filter((p) => p.type === "text-end").map((p) => p.id);
    assert.deepEqual(opened, closed);
  }
});

test("a call cut short never reaches the SDK: no tool-input part, no tool-call, its markup is text", async () => {
  const seen = [];
  const text = 'ok<tool_call>{"name": "get_weather", "arguments": {"city": "Pa';
  const parts = await wrapped(text, {
    options: { format: "hermes", onError: (message, meta) => seen.push({ message, ...meta }) },
    finish: { ...FINISH, finishReason: { unified: "length", raw: "length" } },
  });
  assert.equal(textOf(parts), text);
  assert.deepEqual(
    parts.filter((p) => p.type.startsWith("tool-")),
    [],
    "a call that never closed sends no part at all",
  );
  const finish = parts.at(-1);
  assert.equal(finish.type, "finish");
  assert.deepEqual(finish.finishReason, { unified: "length", raw: "length" });
  assert.equal(finish.providerMetadata.toolscan.diagnostics[0].kind, "truncated");
  assert.equal(seen[0].kind, "truncated");
  assert.equal(seen[0].message, finish.providerMetadata.toolscan.diagnostics[0].message);
});

test("a malformed call after a good one: the good one is sent, the bad one is text", async () => {
  const bad = '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>';
  const text = `<tool_call>{"name": "get_time", "arguments": {}}</tool_call>${bad}`;
  const parts = await wrapped(text, { options: { format: "hermes" } });
  assert.deepEqual(
    parts.filter((p) => p.type === "tool-input-start").map((p) => p.toolName),
    ["get_time"],
  );
  assert.deepEqual(parts.filter((p) => p.type === "tool-call").map((p) => p.toolName), ["get_time"]);
  assert.equal(textOf(parts), bad);
});

test("streamArguments: input streams live; a call cut short is closed as abandoned", async () => {
  const text = 'ok<tool_call>{"name": "get_weather", "arguments": {"city": "Pa';
  const parts = await wrapped(text, {
    options: { format: "hermes", streamArguments: true },
    finish: { ...FINISH, finishReason: { unified: "length", raw: "length" } },
  });
  assert.equal(textOf(parts), text);
  assert.ok(!parts.some((p) => p.type === "tool-call"));
  const start = parts.find((p) => p.type === "tool-input-start");
  const end = parts.find((p) => p.type === "tool-input-end");
  assert.ok(parts.some((p) => p.type === "tool-input-delta"), "the arguments streamed");
  assert.equal(end.id, start.id);
  assert.deepEqual(end.providerMetadata, { toolscan: { abandoned: true } });
});

test("held-back text is flushed before finish; a stream without finish still ends balanced", async () => {
  // "<tool" may start a marker: the parser holds it until the end.
  const parts = await wrapped("see <tool", { finish: null });
  assert.equal(textOf(parts), "see <tool");
  assert.equal(parts.at(-1).type, "text-end");
  const withFinish = await wrapped("see <tool");
  assert.deepEqual(withFinish.slice(-2).map((p) => p.type), ["text-end", "finish"]);
  assert.equal(textOf(withFinish), "see <tool");
});

test("reasoning runs get their own ids and parts", async () => {
  const parts = await wrapped("<think>hmm</think>Answer", { options: { format: "hermes", reasoning: true } });
  const types = parts.map((p) => p.type).filter((t) => t !== "reasoning-delta" && t !== "text-delta");
  assert.deepEqual(types, ["stream-start", "reasoning-start", "reasoning-end", "text-start", "text-end", "finish"]);
  const r = parts.filter((p) => p.type === "reasoning-delta");
  assert.equal(r.map((p) => p.delta).join(""), "hmm");
  assert.equal(textOf(parts), "Answer");
  assert.deepEqual(parts.at(-1).finishReason, { unified: "stop", raw: "eos" });
});

test("upstream parts other than text pass through, after the text before them", async () => {
  const source = { type: "source", sourceType: "url", id: "s1", url: "https://example.com" };
  const parts = await wrapped("before", { extra: [source, { type: "text-delta", id: "up2", delta: "after" }] });
  const types = parts.map((p) => p.type).filter((t) => t !== "text-delta");
  assert.deepEqual(types, ["stream-start", "text-start", "text-end", "source", "text-start", "text-end", "finish"]);
  assert.equal(textOf(parts), "beforeafter");
  assert.deepEqual(parts.find((p) => p.type === "source"), source);
  const ids = parts.filter((p) => p.type === "text-start").map((p) => p.id);
  assert.equal(new Set(ids).size, 2);
});

test("no tools, or toolChoice none: the model's stream is returned untouched", async () => {
  const text = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>';
  for (const params of [{ tools: undefined }, { tools: [] }, { toolChoice: { type: "none" } }]) {
    const parts = await wrapped(text, { params });
    assert.ok(!parts.some((p) => p.type === "tool-call"), JSON.stringify(params));
    assert.equal(textOf(parts), text);
    assert.ok(parts.every((p) => !p.id || p.id === "up"), "the upstream's own parts");
  }
});

test("a named toolChoice: only that tool's calls are calls", async () => {
  const text =
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' +
    '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
  const parts = await wrapped(text, { params: { toolChoice: { type: "tool", toolName: "get_time" } } });
  const calls = parts.filter((p) => p.type === "tool-call");
  assert.deepEqual(calls.map((c) => c.toolName), ["get_time"]);
  assert.match(textOf(parts), /get_weather/);
});

test("the request's tools type the values (qwen3-coder)", async () => {
  const parts = await wrapped(
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    { options: { format: "qwen3-coder" } },
  );
  const call = parts.find((p) => p.type === "tool-call");
  assert.deepEqual(JSON.parse(call.input), { city: "Oslo", days: 3 });
});

test("checkCalls reject: a call to an unknown tool is text", async () => {
  const text = '<tool_call>{"name": "launch", "arguments": {}}</tool_call>';
  const parts = await wrapped(text, { options: { format: "hermes", checkCalls: "reject" } });
  assert.ok(!parts.some((p) => p.type === "tool-call"));
  assert.equal(textOf(parts), text);
  assert.ok(parts.at(-1).providerMetadata.toolscan.diagnostics.length > 0);
});

test("wrapGenerate: content in order, finish reason, upstream parts kept", async () => {
  const mw = toolscanMiddleware({ format: "mistral-v11" });
  const result = await mw.wrapGenerate({
    doGenerate: async () => ({
      content: [
        { type: "reasoning", text: "think" },
        { type: "text", text: 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}' },
      ],
      finishReason: { unified: "stop", raw: "stop" },
      usage: USAGE,
      warnings: [],
    }),
    doStream: async () => assert.fail("not called"),
    params: { prompt: [], tools: TOOLS },
    model: { modelId: "mock" },
  });
  const call = result.content[2];
  assert.deepEqual(result.content, [
    { type: "reasoning", text: "think" },
    { type: "text", text: "Sure." },
    { type: "tool-call", toolCallId: call.toolCallId, toolName: "get_weather", input: '{"city": "Rome"}' },
  ]);
  assert.ok(call.toolCallId.length > 0);
  assert.deepEqual(result.finishReason, { unified: "tool-calls", raw: "stop" });
  assert.equal(result.providerMetadata, undefined);
  assert.deepEqual(result.warnings, []);
});

// The parser is WebAssembly memory: each stream frees its own, however it ends.
test("the parser is freed at the end, on cancel, on an upstream error, and after generate", async (t) => {
  const mw = toolscanMiddleware({ format: "hermes" });
  let frees = 0;
  const free = Parser.prototype.free;
  t.mock.method(Parser.prototype, "free", function () {
    frees++;
    return free.call(this);
  });
  const params = { prompt: [], tools: TOOLS };
  const open = (stream) => mw.wrapStream({ doStream: async () => ({ stream }), params, model: {} });

  for await (const _ of (await open(upstream("hello world"))).stream);
  assert.equal(frees, 1, "end");

  let cancelled = null;
  const endless = new ReadableStream({
    pull(c) {
      c.enqueue({ type: "text-delta", id: "up", delta: "more " });
    },
    cancel(reason) {
      cancelled = reason;
    },
  });
  const reader = (await open(endless)).stream.getReader();
  await reader.read();
  await reader.cancel("stop");
  assert.equal(frees, 2, "cancel");
  assert.equal(cancelled, "stop", "the cancel reaches the model's stream");

  const failing = new ReadableStream({
    start(c) {
      c.enqueue({ type: "text-delta", id: "up", delta: "x" });
    },
    pull(c) {
      c.error(new Error("boom"));
    },
  });
  await assert.rejects(async () => {
    for await (const _ of (await open(failing)).stream);
  }, /boom/);
  assert.equal(frees, 3, "error");

  await mw.wrapGenerate({
    doGenerate: async () => ({ content: [{ type: "text", text: "hi" }], finishReason: FINISH.finishReason, usage: USAGE, warnings: [] }),
    params,
    model: {},
  });
  assert.equal(frees, 4, "generate");
});

test("options are checked when the middleware is made", () => {
  assert.throws(() => toolscanMiddleware({ emulate: true }), /concrete `format`/);
  assert.throws(() => toolscanMiddleware({ emulate: true, format: "auto" }), /concrete `format`/);
  assert.throws(() => toolscanMiddleware({ placement: "middle" }), /placement/);
  assert.equal(toolscanMiddleware({ format: "hermes" }).specificationVersion, "v3");
  assert.equal(toolscanMiddleware({ format: "hermes" }).transformParams, undefined, "nothing to change without emulate");
});

test("completeAtStop: a call cut by a stop sequence is completed, one cut by length is not", async () => {
  const text = 'ok<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}';
  const options = { format: "hermes", completeAtStop: true };
  const stopped = await wrapped(text, { options });
  const call = stopped.find((p) => p.type === "tool-call");
  assert.deepEqual(JSON.parse(call.input), { city: "Paris" });
  assert.deepEqual(stopped.at(-1).finishReason, { unified: "tool-calls", raw: "eos" });
  const cut = await wrapped(text, { options, finish: { ...FINISH, finishReason: { unified: "length", raw: "length" } } });
  assert.ok(!cut.some((p) => p.type === "tool-call"));
  assert.equal(textOf(cut), text);
});

test("a call's providerOptions.toolCallMiddleware.onError takes the middleware's place", async () => {
  const mine = [];
  const theirs = [];
  const parts = await wrapped('<tool_call>{"name": "get_weather", "arguments": {"city": 3}}</tool_call>', {
    options: { format: "hermes", checkCalls: "report", onError: (m) => mine.push(m) },
    params: { providerOptions: { toolCallMiddleware: { onError: (m, meta) => theirs.push(meta.kind) } } },
  });
  assert.equal(parts.filter((p) => p.type === "tool-call").length, 1, "report: the call stands");
  assert.deepEqual(mine, []);
  assert.ok(theirs.length > 0);
  assert.deepEqual(theirs, parts.at(-1).providerMetadata.toolscan.diagnostics.map((d) => d.kind));
});
