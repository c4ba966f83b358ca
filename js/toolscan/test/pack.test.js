// The package as a user gets it: `npm pack` makes the tarball, which is
// installed into a fresh folder (no network: the package has no runtime
// dependencies) and imported from there, main entry, core and middleware.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("npm pack gives a tarball that installs and imports in a fresh folder", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "toolscan-pack-"));
  try {
    const out = execFileSync(npm, ["pack", "--json", "--pack-destination", dir], { cwd: PKG, encoding: "utf8" });
    const [info] = JSON.parse(out);
    const files = info.files.map((f) => f.path).sort();
    assert.deepEqual(files, [
      "README.md",
      "ai-sdk.d.ts",
      "ai-sdk.js",
      "core.d.ts",
      "core.js",
      "index.d.ts",
      "index.js",
      "package.json",
      "toolscan.wasm",
    ]);
    const tarball = path.join(dir, info.filename);
    assert.ok(statSync(tarball).size > 100_000, "the .wasm is in the tarball");

    const app = path.join(dir, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync(npm, ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: app, stdio: "pipe" });
    assert.ok(readdirSync(path.join(app, "node_modules", "toolscan")).includes("toolscan.wasm"));
    writeFileSync(
      path.join(app, "main.js"),
      `import { Parser, version } from "toolscan";
import { initSync, parse } from "toolscan/core";
import { toolscanMiddleware } from "toolscan/ai-sdk";
const p = new Parser({ format: "hermes" });
const events = [...p.feed('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool'), ...p.feed("_call>"), ...p.finish()];
p.free();
initSync(new Uint8Array(0)); // already loaded by "toolscan": does nothing
const m = toolscanMiddleware({ format: "qwen3-coder" });
console.log(JSON.stringify({ version, events: events.map((e) => e.type), parsed: parse("hi").text, v3: m.specificationVersion }));
`,
    );
    const ran = JSON.parse(execFileSync(process.execPath, ["main.js"], { cwd: app, encoding: "utf8" }));
    assert.deepEqual(ran, {
      version: info.version,
      events: ["tool_call_start", "tool_call_args", "tool_call_end", "done"],
      parsed: "hi",
      v3: "v3",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
