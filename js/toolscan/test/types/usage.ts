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
