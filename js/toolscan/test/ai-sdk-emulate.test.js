// `emulate: true`: a model served without tool calling gets the tools'
// manifest in its system prompt and earlier calls and results as text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonSchema, simulateReadableStream, stepCountIs, streamText, generateText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { manifest, render, renderToolResults } from "../index.js";
import { hermesToolMiddleware, toolscanMiddleware } from "../ai-sdk.js";

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function streamOf(text) {
  const deltas = [];
  for (let i = 0; i < text.length; i += 3) deltas.push(text.slice(i, i + 3));
  return {
    stream: simulateReadableStream({
      chunks: [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "0" },
        ...deltas.map((delta) => ({ type: "text-delta", id: "0", delta })),
        { type: "text-end", id: "0" },
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
      ],
    }),
  };
}

function scripted(answers) {
  let s = 0;
  let g = 0;
  return new MockLanguageModelV3({
    doStream: async () => streamOf(answers[s++]),
    doGenerate: async () => ({
      content: [{ type: "text", text: answers[g++] }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: USAGE,
      warnings: [],
    }),
  });
}

const SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const PARSER_TOOLS = [{ name: "get_weather", description: "The weather in a city", parameters: SCHEMA }];

function tools(executed) {
  return {
    get_weather: tool({
      description: "The weather in a city",
      inputSchema: jsonSchema(SCHEMA),
      execute: async ({ city }) => {
        executed.push(city);
        return { city, celsius: 18 };
      },
    }),
  };
}

const CALLS = {
  hermes: 'Checking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
  harmony: '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
  "qwen3-coder": "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
  "mistral-v11": 'Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
};
const KEPT = { hermes: "Checking. ", harmony: "", "qwen3-coder": "Checking.\n", "mistral-v11": "Checking." };

for (const [format, first] of Object.entries(CALLS)) {
  for (const run of ["streamText", "generateText"]) {
    test(`${format}, ${run}: manifest in the first system message, no tools sent, history as text`, async () => {
      const executed = [];
      const model = scripted([first, "It is 18 °C."]);
      const args = {
        model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format, emulate: true }) }),
        system: "You are terse.",
        tools: tools(executed),
        stopWhen: stepCountIs(2),
        prompt: "Weather in Paris?",
      };
      const result = run === "streamText" ? streamText(args) : await generateText(args);
      assert.equal(await result.text, "It is 18 °C.");
      const steps = await result.steps;
      assert.deepEqual(executed, ["Paris"], "the call was read though the model got no tools");
      const call = steps[0].toolCalls[0];
      assert.deepEqual(call.input, { city: "Paris" });

      const calls = run === "streamText" ? model.doStreamCalls : model.doGenerateCalls;
      assert.equal(calls.length, 2);
      const man = manifest(format, PARSER_TOOLS).text;
      assert.match(man, /get_weather/);
      for (const sent of calls) {
        assert.equal(sent.tools, undefined);
        assert.equal(sent.toolChoice, undefined);
        assert.deepEqual(sent.prompt[0], { role: "system", content: `You are terse.\n\n${man}` });
        assert.equal(sent.prompt.filter((m) => m.role === "system").length, 1);
        assert.ok(sent.prompt.every((m) => m.role !== "tool"), "no tool message");
        for (const m of sent.prompt) {
          if (Array.isArray(m.content)) assert.ok(m.content.every((p) => p.type === "text"), JSON.stringify(m));
        }
      }

      // The second request: user, the first answer as the model wrote it
      // (re-rendered), then the result in the format's own words.
      const [, user, assistant, results, ...rest] = calls[1].prompt;
      assert.deepEqual(rest, []);
      assert.deepEqual(user.content, [{ type: "text", text: "Weather in Paris?" }]);
      assert.equal(assistant.role, "assistant");
      const written = render(format, {
        text: KEPT[format],
        calls: [{ name: "get_weather", arguments: { city: "Paris" }, id: call.toolCallId }],
      });
      assert.deepEqual(assistant.content, [{ type: "text", text: written }]);
      assert.match(written, /get_weather/);
      assert.match(written, /Paris/);
      const { messages } = renderToolResults(format, [
        { name: "get_weather", id: call.toolCallId, content: '{"city":"Paris","celsius":18}' },
      ]);
      assert.deepEqual(results, { role: "user", content: [{ type: "text", text: messages[0] }] });
      assert.match(messages[0], /"celsius":18/);
    });
  }
}

test("hermes: the rendered history is the format's markup", async () => {
  const model = scripted([CALLS.hermes, "done"]);
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: "hermes", emulate: true }) }),
    tools: tools([]),
    stopWhen: stepCountIs(2),
    prompt: "Weather?",
  });
  await result.consumeStream();
  const [, , assistant, results] = model.doStreamCalls[1].prompt;
  assert.match(assistant.content[0].text, /^Checking\. \n<tool_call>\n\{"name": "get_weather", "arguments": \{"city": "Paris"\}\}\n<\/tool_call>/);
  assert.equal(results.content[0].text, '<tool_response>\n{"city":"Paris","celsius":18}\n</tool_response>');
});

test("without a system message, the manifest is a new first one", async () => {
  const model = scripted(["no call"]);
  await generateText({
    model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: "hermes", emulate: true }) }),
    tools: tools([]),
    prompt: "Hi",
  });
  const [first, second] = model.doGenerateCalls[0].prompt;
  assert.deepEqual(first, { role: "system", content: manifest("hermes", PARSER_TOOLS).text });
  assert.equal(second.role, "user");
});

test("placement first, and a {{tools}} placeholder", async () => {
  const man = manifest("hermes", PARSER_TOOLS).text;
  for (const [options, system, expected] of [
    [{ placement: "first" }, "Be brief.", `${man}\n\nBe brief.`],
    [{}, "Tools:\n{{tools}}\nBe brief.", `Tools:\n${man}\nBe brief.`],
  ]) {
    const model = scripted(["ok"]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: "hermes", emulate: true, ...options }) }),
      system,
      tools: tools([]),
      prompt: "Hi",
    });
    assert.equal(model.doGenerateCalls[0].prompt[0].content, expected);
  }
});

test("toolChoice none: no manifest and no parsing, but no tools sent either", async () => {
  const model = scripted([CALLS.hermes]);
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: toolscanMiddleware({ format: "hermes", emulate: true }) }),
    system: "S",
    tools: tools([]),
    toolChoice: "none",
    prompt: "Hi",
  });
  const sent = model.doGenerateCalls[0];
  assert.equal(sent.prompt[0].content, "S");
  assert.equal(sent.tools, undefined);
  assert.equal(result.toolCalls.length, 0);
  assert.equal(result.text, CALLS.hermes);
});

test("@ai-sdk-tool/parser's options: templates replace the manifest and the results' text", async () => {
  const model = scripted([CALLS.hermes, "fine"]);
  const middleware = toolscanMiddleware({
    format: "hermes",
    emulate: true,
    toolSystemPromptTemplate: (ts) => `TOOLS: ${ts.map((t) => t.name).join(",")}`,
    toolResponsePromptTemplate: (r) => `RESULT ${r.toolName}: ${JSON.stringify(r.output.value)}`,
  });
  await generateText({
    model: wrapLanguageModel({ model, middleware }),
    tools: tools([]),
    stopWhen: stepCountIs(2),
    prompt: "Hi",
  });
  const prompt = model.doGenerateCalls[1].prompt;
  assert.deepEqual(prompt[0], { role: "system", content: "TOOLS: get_weather" });
  assert.deepEqual(prompt[3], { role: "user", content: [{ type: "text", text: 'RESULT get_weather: {"city":"Paris","celsius":18}' }] });
});

test("hermesToolMiddleware: a drop-in for @ai-sdk-tool/parser's", async () => {
  const executed = [];
  const model = scripted([CALLS.hermes, "fine"]);
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: hermesToolMiddleware }),
    tools: tools(executed),
    stopWhen: stepCountIs(2),
    prompt: "Hi",
  });
  assert.deepEqual(executed, ["Paris"]);
  assert.equal(result.text, "fine");
  assert.equal(model.doGenerateCalls[0].tools, undefined);
  assert.match(model.doGenerateCalls[0].prompt[0].content, /get_weather/);
});

test("emulate with a model id: its format", async () => {
  const model = scripted([CALLS["mistral-v11"]]);
  const result = await generateText({
    model: wrapLanguageModel({
      model,
      middleware: toolscanMiddleware({ model: "mistralai/Mistral-Small-3.2-24B-Instruct-2506", emulate: true }),
    }),
    tools: tools([]),
    prompt: "Hi",
  });
  assert.deepEqual(result.toolCalls.map((c) => c.input), [{ city: "Paris" }]);
});
