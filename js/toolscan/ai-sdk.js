// toolscan as an AI SDK (v6, LanguageModelV3) middleware: text tool calls in
// a model's answer become the SDK's tool-call parts, while the answer streams.
import {
  Parser,
  formatForModel,
  manifest,
  render,
  renderToolResults,
} from "./index.js";

// The middleware's own options; every other option is the Parser's.
const OWN = new Set([
  "format",
  "model",
  "tools",
  "emulate",
  "placement",
  "toolSystemPromptTemplate",
  "toolResponsePromptTemplate",
  "onDiagnostic",
  "onError",
  "streamArguments",
]);

/**
 * @param {import("./ai-sdk.d.ts").ToolscanMiddlewareOptions} [options]
 * @returns {import("@ai-sdk/provider").LanguageModelV3Middleware}
 */
export function toolscanMiddleware(options = {}) {
  const { emulate = false, placement = "last" } = options;
  if (placement !== "first" && placement !== "last") {
    throw new TypeError(`toolscanMiddleware: placement must be "first" or "last", not ${JSON.stringify(placement)}`);
  }
  const base = {};
  for (const [k, v] of Object.entries(options)) if (!OWN.has(k) && v !== undefined) base[k] = v;
  if (options.format != null) base.format = options.format;
  if (options.model != null) base.model = options.model;

  // Emulation writes the manifest and earlier turns in one format, so it
  // must be known now; `auto` only exists on the reading side.
  let emulated;
  if (emulate) {
    emulated = options.format ?? (options.model != null ? formatForModel(options.model) : null);
    if (emulated == null || emulated === "auto") {
      throw new TypeError(
        "toolscanMiddleware: `emulate` needs a concrete `format` (or a `model` toolscan knows): " +
          "`auto` detects a format when reading, it has no manifest to write",
      );
    }
    base.format = emulated;
  }

  // Bad parser options (an unknown format, a wrong limit) fail here, not
  // on the first request.
  new Parser(base).free();

  // transformParams strips the tools from what the model receives, and
  // wrapStream/wrapGenerate see only the transformed params (ai's
  // wrapLanguageModel hands them the very object transformParams returned),
  // so the original tools are kept beside that object, out of the request.
  const stashed = new WeakMap();
  // Whether a call's input streams while it is written. Else (the
  // default) a call's parts are sent only once it closed, all at once, so
  // that a call that breaks (malformed, cut short) never reached the
  // consumer: the AI SDK would report a tool error for a call the model
  // never finished, and a chat UI would show a call stuck in
  // "input-streaming". Its markup then arrives as text. The parser keeps
  // that rule (`wholeCalls`, the one toolscan's OpenAI rewriting keeps).
  const live = options.streamArguments === true;

  function parserFor(params, model) {
    const { tools, toolChoice } = stashed.get(params) ?? params;
    const functionTools = (tools ?? []).filter((t) => t.type === "function");
    // Like toolscan's proxy: an answer is only read for calls when the
    // request offered tools and did not forbid them.
    if (functionTools.length === 0 || toolChoice?.type === "none") return null;
    const opts = { ...base, tools: options.tools ?? functionTools.map(toParserTool) };
    // Without a format, a model id picks one when toolscan knows it (else
    // `auto`): the wrapped model's own id is the best guess.
    if (opts.format == null && opts.model == null && model?.modelId) opts.model = model.modelId;
    if (toolChoice?.type === "tool") opts.onlyTool = toolChoice.toolName;
    opts.wholeCalls = !live;
    return new Parser(opts);
  }

  function reporterFor(params) {
    const perCall = params?.providerOptions?.toolCallMiddleware?.onError;
    const onError = typeof perCall === "function" ? perCall : options.onError;
    return (d) => {
      options.onDiagnostic?.(d);
      onError?.(d.message, { kind: d.kind, offset: d.offset });
    };
  }

  const middleware = {
    specificationVersion: "v3",

    async wrapStream({ doStream, params, model }) {
      const parser = parserFor(params, model);
      if (parser == null) return doStream();
      let result;
      try {
        result = await doStream();
      } catch (err) {
        parser.free();
        throw err;
      }
      return {
        ...result,
        stream: translateStream(result.stream, parser, reporterFor(params)),
      };
    },

    async wrapGenerate({ doGenerate, params, model }) {
      const parser = parserFor(params, model);
      if (parser == null) return doGenerate();
      const t = new Translator(parser, reporterFor(params));
      const parts = [];
      let result;
      try {
        result = await doGenerate();
        for (const c of result.content) {
          if (c.type === "text") parts.push(...t.text(c.text));
          else parts.push(...t.passthrough(c));
        }
        parts.push(...t.end(result.finishReason?.unified === "stop"));
      } finally {
        parser.free();
      }
      return { ...t.finished(result), content: toContent(parts) };
    },
  };

  if (emulate) {
    middleware.transformParams = async ({ params }) => {
      const out = emulateParams(params, emulated, options, placement);
      stashed.set(out, { tools: params.tools, toolChoice: params.toolChoice });
      return out;
    };
  }
  return middleware;
}

/** Drop-ins for `@ai-sdk-tool/parser`'s preconfigured middlewares (which always emulate). */
export const hermesToolMiddleware = /* @__PURE__ */ lazy("hermes");
export const qwen3CoderToolMiddleware = /* @__PURE__ */ lazy("qwen3-coder");

// Built on first use, so importing this module makes no parser and reads
// no option.
function lazy(format) {
  let m;
  const get = () => (m ??= toolscanMiddleware({ format, emulate: true }));
  return {
    specificationVersion: "v3",
    transformParams: (o) => get().transformParams(o),
    wrapStream: (o) => get().wrapStream(o),
    wrapGenerate: (o) => get().wrapGenerate(o),
  };
}

function toParserTool(t) {
  return { name: t.name, description: t.description, parameters: t.inputSchema };
}

// ---------------------------------------------------------------------------
// Reading: parser events to v3 parts.

/**
 * Turns the answer's text into v3 stream parts. It owns the text and
 * reasoning ids it emits: the upstream's text-start/text-end cannot be kept,
 * since a call may split one upstream text part in two.
 */
class Translator {
  constructor(parser, report) {
    this.parser = parser;
    this.report = report;
    this.prefix = `ts${Math.random().toString(36).slice(2, 10)}`;
    this.n = 0;
    this.textId = null;
    this.reasoningId = null;
    this.open = new Map(); // call index → id, while its input streams
    this.calls = 0;
    this.diagnostics = [];
  }

  /** A piece of the model's text. */
  text(delta) {
    return this.events(this.parser.feed(delta));
  }

  /** The end of the answer: what the parser held back, and every open part closed. */
  end(atStop = false) {
    const out = this.parser.finished ? [] : this.events(this.parser.finish({ atStop }));
    this.closeCalls(out);
    this.closeRuns(out);
    return out;
  }

  /** An upstream part that is not text: after the runs it follows. */
  passthrough(part) {
    const out = [];
    if (!QUIET.has(part.type)) this.closeRuns(out);
    out.push(part);
    return out;
  }

  events(events) {
    const out = [];
    for (const e of events) {
      switch (e.type) {
        case "text":
          this.closeReasoning(out);
          this.closeCalls(out);
          if (this.textId == null) out.push({ type: "text-start", id: (this.textId = this.id()) });
          out.push({ type: "text-delta", id: this.textId, delta: e.delta });
          break;
        case "reasoning":
          this.closeText(out);
          this.closeCalls(out);
          if (this.reasoningId == null) {
            out.push({ type: "reasoning-start", id: (this.reasoningId = this.id()) });
          }
          out.push({ type: "reasoning-delta", id: this.reasoningId, delta: e.delta });
          break;
        // A call's events as the parser sends them: whole at its end (its
        // start, arguments and end at once), or live with
        // `streamArguments`.
        case "tool_call_start":
          this.closeCalls(out);
          this.closeRuns(out);
          this.open.set(e.index, e.id);
          out.push({ type: "tool-input-start", id: e.id, toolName: e.name });
          break;
        case "tool_call_args":
          out.push({ type: "tool-input-delta", id: this.open.get(e.index), delta: e.delta });
          break;
        case "tool_call_end":
          this.calls++;
          this.open.delete(e.index);
          out.push({ type: "tool-input-end", id: e.id });
          out.push({ type: "tool-call", toolCallId: e.id, toolName: e.name, input: e.arguments });
          break;
        case "diagnostic": {
          // Not a part: v3 has no stream part for "the text had a flaw",
          // `raw` is the provider's own chunks (shown only with
          // includeRawChunks) and warnings are about call settings (and ai
          // logs them). So they ride in `finish`'s providerMetadata, and
          // reach the callbacks as they happen.
          const d = { kind: e.kind, offset: e.offset, message: e.message };
          this.diagnostics.push(d);
          this.report(d);
          break;
        }
        case "done":
          break;
      }
    }
    return out;
  }

  // A call that began live but that the parser gave up on (cut short,
  // malformed, over a limit: its markup comes back as text): its input
  // stream is closed so no consumer waits on it, and no tool-call follows.
  // (A whole call is never open here: its parts go out together.)
  closeCalls(out) {
    for (const id of this.open.values()) {
      out.push({ type: "tool-input-end", id, providerMetadata: { toolscan: { abandoned: true } } });
    }
    this.open.clear();
  }

  closeText(out) {
    if (this.textId != null) out.push({ type: "text-end", id: this.textId });
    this.textId = null;
  }

  closeReasoning(out) {
    if (this.reasoningId != null) out.push({ type: "reasoning-end", id: this.reasoningId });
    this.reasoningId = null;
  }

  closeRuns(out) {
    this.closeText(out);
    this.closeReasoning(out);
  }

  id() {
    return `${this.prefix}-${this.n++}`;
  }

  /** A `finish` part or generate result, with the answer's finish reason and diagnostics. */
  finished(upstream) {
    const out = { ...upstream };
    // The model stopped on its own, but what it wrote were calls.
    if (this.calls > 0) out.finishReason = { unified: "tool-calls", raw: upstream.finishReason?.raw };
    if (this.diagnostics.length > 0) {
      const meta = upstream.providerMetadata;
      out.providerMetadata = { ...meta, toolscan: { ...meta?.toolscan, diagnostics: this.diagnostics } };
    }
    return out;
  }
}

// Upstream parts that are no content, so they do not end a text run.
const QUIET = new Set(["stream-start", "response-metadata", "raw", "error"]);

function translateStream(upstream, parser, report) {
  const t = new Translator(parser, report);
  const reader = upstream.getReader();
  let freed = false;
  const free = () => {
    if (!freed) parser.free();
    freed = true;
  };
  const step = (part) => {
    switch (part.type) {
      case "text-start":
      case "text-end":
        return [];
      case "text-delta":
        return t.text(part.delta);
      case "finish": {
        // Held-back text and open parts go before the finish; a cut at a
        // stop sequence may complete a call (with `completeAtStop`).
        const out = t.end(part.finishReason?.unified === "stop");
        out.push(t.finished(part));
        return out;
      }
      default:
        return t.passthrough(part);
    }
  };
  return new ReadableStream({
    // A pull that enqueues nothing is not called again, so it reads on
    // until the parser decides something (it may hold a marker's start).
    async pull(controller) {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            for (const p of t.end()) controller.enqueue(p);
            free();
            controller.close();
            return;
          }
          const parts = step(value);
          for (const p of parts) controller.enqueue(p);
          if (parts.length > 0) return;
        }
      } catch (err) {
        free();
        controller.error(err);
      }
    },
    async cancel(reason) {
      free();
      await reader.cancel(reason);
    },
  });
}

/** v3 stream parts, folded into a generate result's content. */
function toContent(parts) {
  const content = [];
  const runs = new Map(); // text/reasoning id → its content part
  for (const p of parts) {
    switch (p.type) {
      case "text-start":
      case "reasoning-start": {
        const c = { type: p.type === "text-start" ? "text" : "reasoning", text: "" };
        runs.set(p.id, c);
        content.push(c);
        break;
      }
      case "text-delta":
      case "reasoning-delta":
        runs.get(p.id).text += p.delta;
        break;
      case "text-end":
      case "reasoning-end":
      case "tool-input-start":
      case "tool-input-delta":
      case "tool-input-end":
        break;
      default:
        content.push(p);
    }
  }
  return content;
}

// ---------------------------------------------------------------------------
// Emulation: a prompt for a model served without tool calling.

function emulateParams(params, format, options, placement) {
  const functionTools = (params.tools ?? []).filter((t) => t.type === "function");
  const offered = functionTools.length > 0 && params.toolChoice?.type !== "none";
  const prompt = [];
  for (const m of params.prompt) {
    if (m.role === "assistant") prompt.push(renderAssistant(m, format));
    else if (m.role === "tool") prompt.push(...renderResults(m, format, options));
    else prompt.push(m);
  }
  if (offered) {
    const text = options.toolSystemPromptTemplate
      ? options.toolSystemPromptTemplate(functionTools)
      : manifest(format, options.tools ?? functionTools.map(toParserTool)).text;
    placeManifest(prompt, text, placement);
  }
  // The history is rendered even without tools on offer now: the model
  // cannot read tool-call parts either way.
  return { ...params, prompt, tools: undefined, toolChoice: undefined };
}

function placeManifest(prompt, text, placement) {
  const i = prompt.findIndex((m) => m.role === "system");
  if (i < 0) {
    prompt.unshift({ role: "system", content: text });
    return;
  }
  const s = prompt[i].content;
  // A system prompt may say where the tools go, as `toolscan manifest
  // --template` lets it.
  const content = s.includes("{{tools}}")
    ? s.replaceAll("{{tools}}", text)
    : placement === "first"
      ? `${text}\n\n${s}`
      : `${s}\n\n${text}`;
  prompt[i] = { ...prompt[i], content };
}

function renderAssistant(m, format) {
  if (!m.content.some((p) => p.type === "tool-call")) return m;
  // The turn's text and calls become the one text the model would have
  // written, where its first text or call was; other parts stay.
  const content = [];
  let at = -1;
  let text = "";
  const calls = [];
  for (const p of m.content) {
    if (p.type === "text" || p.type === "tool-call") {
      if (at < 0) at = content.length;
      if (p.type === "text") text += p.text;
      else calls.push({ name: p.toolName, arguments: p.input ?? {}, id: p.toolCallId });
    } else {
      content.push(p);
    }
  }
  content.splice(at, 0, { type: "text", text: render(format, { text, calls }) });
  return { ...m, content };
}

function renderResults(m, format, options) {
  const results = m.content.filter((p) => p.type === "tool-result");
  if (results.length === 0) return [];
  if (options.toolResponsePromptTemplate) {
    const text = results.map((r) => options.toolResponsePromptTemplate(r)).join("\n");
    return [{ role: "user", content: [{ type: "text", text }] }];
  }
  const { role, messages } = renderToolResults(
    format,
    results.map((r) => ({ name: r.toolName, id: r.toolCallId, content: outputText(r.output) })),
  );
  return messages.map((text) => {
    if (role === "system") return { role, content: text };
    // A v3 prompt's `tool` messages hold tool-result parts only, and it has
    // no other roles (`ipython`, `tool_response`…): text results go in a
    // user turn, which is where chat templates without such a role put them.
    return { role: role === "assistant" ? role : "user", content: [{ type: "text", text }] };
  });
}

function outputText(o) {
  switch (o.type) {
    case "text":
    case "error-text":
      return o.value;
    case "json":
    case "error-json":
      return JSON.stringify(o.value);
    case "execution-denied":
      return o.reason ? `Execution denied: ${o.reason}` : "Execution denied";
    case "content":
      return o.value
        .map((c) =>
          c.type === "text" ? c.text : (c.url ?? `[${c.type}${c.mediaType ? ` ${c.mediaType}` : ""}]`),
        )
        .join("\n");
    default:
      return JSON.stringify(o);
  }
}
