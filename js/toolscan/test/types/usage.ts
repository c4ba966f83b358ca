// Compiled by `npx tsc -p test/types` (never run): ai-sdk.d.ts against the
// real AI SDK 6 types.
import type { LanguageModelV3Middleware } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { hermesToolMiddleware, qwen3CoderToolMiddleware, toolscanMiddleware, type ToolscanMiddlewareOptions } from "toolscan/ai-sdk";

const options: ToolscanMiddlewareOptions = {
  format: "hermes",
  reasoning: true,
  startsInReasoning: false,
  callsInReasoning: "call",
  checkCalls: "report",
  limits: { maxCallBytes: 1 << 20 },
  emulate: true,
  placement: "first",
  toolSystemPromptTemplate: (tools) => tools.map((t) => t.name).join("\n"),
  toolResponsePromptTemplate: (r) => `${r.toolName}: ${r.output.type}`,
  onDiagnostic: (d) => console.log(d.kind, d.offset, d.message),
  onError: (message, metadata) => console.log(message, metadata?.kind),
};

const middleware: LanguageModelV3Middleware = toolscanMiddleware(options);
const m: "v3" = middleware.specificationVersion;

wrapLanguageModel({ model: new MockLanguageModelV3(), middleware });
wrapLanguageModel({ model: new MockLanguageModelV3(), middleware: [hermesToolMiddleware, qwen3CoderToolMiddleware] });
wrapLanguageModel({ model: new MockLanguageModelV3(), middleware: toolscanMiddleware() });

// @ts-expect-error: the parser's options are typed
toolscanMiddleware({ checkCalls: "sometimes" });
// @ts-expect-error: onlyTool comes from the call's toolChoice
toolscanMiddleware({ onlyTool: "x" });

export { m };

// The parser's API (index.d.ts / core.d.ts).
import { Parser, parse, formats, manifest, render, InvalidUtf8Error, type Event } from "toolscan";
import { initSync } from "toolscan/core";

const parser = new Parser({ format: "hermes", tools: [{ name: "f" }], invalidUtf8: "throw" });
const events: Event[] = parser.feed(new Uint8Array([0x61]));
for (const e of [...events, ...parser.finish({ atStop: true })]) {
  if (e.type === "tool_call_end") {
    const args: string = e.arguments;
    console.log(e.id, e.name, args);
  } else if (e.type === "done") {
    const reason: "stop" | "tool_calls" | "length" = e.finish_reason;
    console.log(reason);
  }
}
parser.free();
const names: string[] = formats().map((f) => f.name);
const text: string = manifest("hermes", [{ name: "f" }]).text + render("hermes", { calls: [{ name: "f" }] });
const offset: number = new InvalidUtf8Error("x").offset;
console.log(names, text, offset, parse("x").tool_calls.length, initSync);
// @ts-expect-error: feed takes a string or bytes
parser.feed(42);
