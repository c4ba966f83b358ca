// The middleware with the real `ai` package: a mock model that writes tool
// calls as text, in small pieces, and the SDK running the tool.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  generateText,
  jsonSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { formats } from "../index.js";
import { toolscanMiddleware } from "../ai-sdk.js";

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

/** `text` in pieces of `n` characters (code points, so none is split). */
function pieces(text, n = 3) {
  const cps = Array.from(text);
  const out = [];
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(""));
  return out;
}

function streamOf(text, n = 3) {
  return {
    stream: simulateReadableStream({
      chunks: [
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "resp", modelId: "mock", timestamp: new Date(0) },
        { type: "text-start", id: "0" },
        ...pieces(text, n).map((delta) => ({ type: "text-delta", id: "0", delta })),
        { type: "text-end", id: "0" },
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
      ],
    }),
  };
}

function generated(text) {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: USAGE,
    warnings: [],
  };
}

/** A model that answers each request with the next of `answers`. */
function scripted(answers) {
  let s = 0;
  let g = 0;
  return new MockLanguageModelV3({
    doStream: async () => streamOf(answers[s++]),
    doGenerate: async () => generated(answers[g++]),
  });
}

function weather(executed) {
  return tool({
    description: "The weather in a city",
    inputSchema: jsonSchema({
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    }),
    execute: async ({ city }) => {
      executed.push({ city });
      return { city, celsius: 18 };
    },
  });
}

const ANSWER = "It is 18 °C in Paris.";

// Each format: the first answer (a call), the text the SDK keeps of it, its
// reasoning, and the second answer (text only).
const CASES = [
  {
    format: "hermes",
    first: 'Let me check. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    text: "Let me check. ",
    second: ANSWER,
  },
  {
    format: "mistral-v11",
    first: 'Let me check.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    text: "Let me check.",
    second: ANSWER,
  },
  {
    format: "qwen3-coder",
    first:
      "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    text: "Let me check.\n",
    second: ANSWER,
  },
  {
    format: "harmony",
    first:
      "<|channel|>analysis<|message|>The user wants the weather.<|end|>" +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
    text: "",
    reasoning: "The user wants the weather.",
    second: `<|channel|>final<|message|>${ANSWER}`,
  },
];

test("the formats the tests use are toolscan's names", () => {
  const names = formats().map((f) => f.name);
  for (const { format } of CASES) assert.ok(names.includes(format), format);
});

function checkSteps(steps, c, executed) {
  assert.equal(steps.length, 2);
  assert.deepEqual(executed, [{ city: "Paris" }], "the tool ran once, with the parsed arguments");
  const [one, two] = steps;
  assert.equal(one.finishReason, "tool-calls");
  assert.equal(one.text, c.text, "the text before the call is kept exactly");
  if (c.reasoning) assert.equal(one.reasoningText, c.reasoning);
  assert.equal(one.toolCalls.length, 1);
  assert.equal(one.toolCalls[0].toolName, "get_weather");
  assert.deepEqual(one.toolCalls[0].input, { city: "Paris" });
  assert.equal(one.toolResults.length, 1);
  assert.equal(one.toolResults[0].toolCallId, one.toolCalls[0].toolCallId);
  assert.deepEqual(one.toolResults[0].output, { city: "Paris", celsius: 18 });
  assert.equal(two.finishReason, "stop");
  assert.equal(two.text, ANSWER);
  assert.equal(two.toolCalls.length, 0);
}

/** The second request carries the first step's call and its result, natively. */
function checkSecondPrompt(prompt, callId) {
  const assistant = prompt.find((m) => m.role === "assistant");
  const call = assistant.content.find((p) => p.type === "tool-call");
  assert.equal(call.toolCallId, callId);
  assert.deepEqual(call.input, { city: "Paris" });
  const result = prompt.find((m) => m.role === "tool").content[0];
  assert.equal(result.toolCallId, callId);
  assert.deepEqual(result.output, { type: "json", value: { city: "Paris", celsius: 18 } });
}

for (const c of CASES) {
  test(`${c.format}: streamText runs the tool, then answers in text`, async () => {
    const executed = [];
    const model = scripted([c.first, c.second]);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: c.format }) }),
      tools: { get_weather: weather(executed) },
      stopWhen: stepCountIs(2),
      prompt: "What is the weather in Paris?",
    });
    const parts = [];
    for await (const p of result.fullStream) parts.push(p);
    const steps = await result.steps;
    checkSteps(steps, c, executed);
    assert.equal(await result.text, ANSWER);
    checkSecondPrompt(model.doStreamCalls[1].prompt, steps[0].toolCalls[0].toolCallId);

    // The call streamed: its input's pieces, under the call's id, came
    // before the call itself, and join to its arguments.
    const id = steps[0].toolCalls[0].toolCallId;
    const start = parts.findIndex((p) => p.type === "tool-input-start");
    const callAt = parts.findIndex((p) => p.type === "tool-call");
    assert.ok(start >= 0 && start < callAt);
    assert.equal(parts[start].id, id);
    assert.equal(parts[start].toolName, "get_weather");
    const deltas = parts.filter((p) => p.type === "tool-input-delta");
    assert.ok(deltas.every((p) => p.id === id));
    assert.deepEqual(JSON.parse(deltas.map((p) => p.delta).join("")), { city: "Paris" });
    assert.ok(!parts.some((p) => p.type === "error"), JSON.stringify(parts.filter((p) => p.type === "error")));
  });

  test(`${c.format}: generateText runs the tool, then answers in text`, async () => {
    const executed = [];
    const model = scripted([c.first, c.second]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: c.format }) }),
      tools: { get_weather: weather(executed) },
      stopWhen: stepCountIs(2),
      prompt: "What is the weather in Paris?",
    });
    checkSteps(result.steps, c, executed);
    assert.equal(result.text, ANSWER);
    checkSecondPrompt(model.doGenerateCalls[1].prompt, result.steps[0].toolCalls[0].toolCallId);
  });
}

test("auto (no format): the wrapped model's id picks the format", async () => {
  const executed = [];
  const model = scripted([CASES[1].first]);
  Object.defineProperty(model, "modelId", { value: "mistralai/Mistral-Small-3.2-24B-Instruct-2506" });
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: toolscanMiddleware() }),
    tools: { get_weather: weather(executed) },
    prompt: "Weather?",
  });
  assert.deepEqual(result.toolCalls.map((c) => c.input), [{ city: "Paris" }]);
  assert.equal(result.text, "Let me check.");
});

const MIXED =
  'Hi <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> bye ' +
  '<tool_call>{"name": oops</tool_call> end';

test("text around calls is kept exactly, a malformed block stays text (stream)", async () => {
  const seen = [];
  const result = streamText({
    model: wrapLanguageModel({
      model: scripted([MIXED]),
      middleware: toolscanMiddleware({ format: "hermes", onDiagnostic: (d) => seen.push(d) }),
    }),
    tools: { get_weather: weather([]) },
    prompt: "Weather?",
  });
  const parts = [];
  for await (const p of result.fullStream) parts.push(p);
  assert.equal(await result.text, 'Hi  bye <tool_call>{"name": oops</tool_call> end');
  const calls = await result.toolCalls;
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].input, { city: "Paris" });
  // Two text runs, one before and one after the call, each with its own id.
  const starts = parts.filter((p) => p.type === "text-start").map((p) => p.id);
  assert.equal(starts.length, 2);
  assert.notEqual(starts[0], starts[1]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].kind, "malformed");
  const meta = (await result.steps)[0].providerMetadata;
  assert.deepEqual(meta.toolscan.diagnostics, seen);
});

test("text around calls is kept exactly, a malformed block stays text (generate)", async () => {
  const result = await generateText({
    model: wrapLanguageModel({ model: scripted([MIXED]), middleware: toolscanMiddleware({ format: "hermes" }) }),
    tools: { get_weather: weather([]) },
    prompt: "Weather?",
  });
  assert.equal(result.text, 'Hi  bye <tool_call>{"name": oops</tool_call> end');
  assert.deepEqual(result.content.map((p) => p.type), ["text", "tool-call", "text", "tool-result"]);
  assert.equal(result.content[0].text, "Hi ");
  assert.equal(result.providerMetadata.toolscan.diagnostics[0].kind, "malformed");
});

test("only a malformed block: no call, the text exactly as written, finish stays stop", async () => {
  const bad = 'Sure: <tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>!';
  for (const run of ["stream", "generate"]) {
    const model = wrapLanguageModel({ model: scripted([bad]), middleware: toolscanMiddleware({ format: "hermes" }) });
    const args = { model, tools: { get_weather: weather([]) }, prompt: "Weather?" };
    const r = run === "stream" ? streamText(args) : await generateText(args);
    assert.equal(await r.text, bad, run);
    assert.equal((await r.toolCalls).length, 0, run);
    assert.equal(await r.finishReason, "stop", run);
  }
});
