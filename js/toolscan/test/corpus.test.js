// The held-out check, from JavaScript: every case of the conformance corpus
// (the repository's tests/corpus/) through the JS `Parser`, under several
// chunkings of its text (strings) and of its bytes (Uint8Array pieces cut
// inside characters), gives the case's expectations and the same events as
// the `toolscan` binary (`toolscan parse --output events`, when it is built:
// TOOLSCAN_BIN, else target/debug or target/release of the workspace).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

import { Parser, UnknownFormatError } from "../index.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CORPUS = path.join(ROOT, "tests", "corpus");

function cliBinary() {
  if (process.env.TOOLSCAN_BIN) return process.env.TOOLSCAN_BIN;
  for (const profile of ["debug", "release"]) {
    const p = path.join(ROOT, "target", profile, "toolscan");
    if (existsSync(p)) return p;
  }
  return null;
}
const CLI = cliBinary();

/** Every case, less those skip.json names (each with its reason there). */
function loadCases() {
  const skipFile = path.join(CORPUS, "skip.json");
  const skip = existsSync(skipFile) ? JSON.parse(readFileSync(skipFile, "utf8")) : {};
  const cases = [];
  for (const f of readdirSync(CORPUS).filter((f) => f.endsWith(".jsonl")).sort()) {
    for (const line of readFileSync(path.join(CORPUS, f), "utf8").split("\n")) {
      if (!line.trim()) continue;
      const c = JSON.parse(line);
      if (!(c.id in skip)) cases.push(c);
    }
  }
  return cases;
}

function implemented(c) {
  try {
    new Parser({ format: c.format }).free();
    return true;
  } catch (e) {
    if (e instanceof UnknownFormatError) return false;
    throw e;
  }
}

const CASES = loadCases();
const RUN = CASES.filter(implemented);

// The command line's ids: seeded from 0.
const options = (c) => ({ format: c.format, ids: "seeded", seed: 0, tools: c.tools ?? undefined });

function run(c, pieces) {
  const p = new Parser(options(c));
  try {
    const events = [];
    for (const piece of pieces) events.push(...p.feed(piece));
    events.push(...p.finish());
    return events;
  } finally {
    p.free();
  }
}

/** Consecutive text, reasoning and same-call argument deltas merged; arguments parsed (the binary prints them as an object). */
function coalesce(events) {
  const out = [];
  for (const e of events) {
    const last = out.at(-1);
    const merges = ["text", "reasoning", "tool_call_args"].includes(e.type);
    if (last && merges && last.type === e.type && last.index === e.index) {
      last.delta += e.delta;
    } else if (e.type === "tool_call_end" && typeof e.arguments === "string") {
      out.push({ ...e, arguments: JSON.parse(e.arguments) });
    } else {
      out.push({ ...e });
    }
  }
  return out;
}

const fixed = (seq, n) => {
  const out = [];
  for (let i = 0; i < seq.length; i += n) out.push(seq.slice(i, i + n));
  return out.length ? out : [seq];
};

/** A small seeded generator (mulberry32), so that failures reproduce. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomCuts(seq, seed, most) {
  const next = rng(seed);
  const out = [];
  for (let i = 0; i < seq.length; ) {
    const n = 1 + Math.floor(next() * most);
    out.push(seq.slice(i, i + n));
    i += n;
  }
  return out.length ? out : [seq];
}

function* chunkings(text) {
  const bytes = new TextEncoder().encode(text);
  // Strings are cut by UTF-16 unit, so a surrogate pair may be cut too (the
  // encoder then writes U+FFFD, as any JS consumer of such a split would);
  // the corpus's astral characters are cut by code point instead.
  const chars = Array.from(text);
  const join = (parts) => parts.map((p) => p.join(""));
  yield ["whole", [text]];
  yield ["1 char", join(fixed(chars, 1))];
  yield ["7 chars", join(fixed(chars, 7))];
  for (const seed of [1, 2, 3]) yield [`random chars ${seed}`, join(randomCuts(chars, seed, 16))];
  yield ["whole bytes", [bytes]];
  yield ["1 byte", fixed(bytes, 1)];
  yield ["3 bytes", fixed(bytes, 3)];
  for (const seed of [4, 5]) yield [`random bytes ${seed}`, randomCuts(bytes, seed, 7)];
}

/** The case's expectations, as the Rust testkit compares them. */
function checkExpect(expect, events) {
  const text = events
    .filter((e) => e.type === "text")
    .map((e) => e.delta)
    .join("");
  assert.equal(text.split(/\s+/).filter(Boolean).join(" "), expect.text ?? "", "text");
  const calls = events.filter((e) => e.type === "tool_call_end");
  const want = expect.tool_calls ?? [];
  assert.equal(calls.length, want.length, `${calls.length} calls, want ${want.length}`);
  calls.forEach((got, i) => {
    const w = want[i];
    assert.equal(got.name, w.name ?? "");
    assert.deepEqual(JSON.parse(got.arguments), w.arguments);
    if ("id" in w) assert.equal(got.id, w.id);
    assert.notEqual(got.id, "");
  });
  if (typeof expect.diagnostics === "number") {
    assert.equal(events.filter((e) => e.type === "diagnostic").length, expect.diagnostics, "diagnostics");
  }
}

const TMP = mkdtempSync(path.join(tmpdir(), "toolscan-corpus-"));
process.on("exit", () => rmSync(TMP, { recursive: true, force: true }));

function cliEvents(c) {
  const args = ["parse", "--format", c.format, "--output", "events"];
  if (c.tools != null) {
    const tools = path.join(TMP, "tools.json");
    writeFileSync(tools, JSON.stringify(c.tools));
    args.push("--tools", tools);
  }
  const out = spawnSync(CLI, args, { input: c.input, encoding: "utf8" });
  assert.equal(out.status, 0, `toolscan parse failed: ${out.stderr}`);
  return out.stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

test("the corpus is there", () => {
  assert.ok(CASES.length >= 500, `${CASES.length} cases`);
  assert.ok(RUN.length >= 450, `${RUN.length} cases run`);
});

test("every corpus case equals its expectation and the binary's events, under every chunking", () => {
  if (CLI == null) console.log("no toolscan binary built: the comparison with it is skipped");
  for (const c of RUN) {
    const reference = coalesce(run(c, [c.input]));
    if (CLI != null) {
      assert.deepEqual(reference, coalesce(cliEvents(c)), `${c.id}: not what \`toolscan parse\` prints`);
    }
    for (const [name, pieces] of chunkings(c.input)) {
      const events = run(c, pieces);
      assert.equal(events.at(-1).type, "done", `${c.id} [${name}]`);
      try {
        checkExpect(c.expect, events);
      } catch (e) {
        e.message = `${c.id} [${name}]: ${e.message}`;
        throw e;
      }
      assert.deepEqual(coalesce(events), reference, `${c.id} [${name}]`);
    }
  }
});
