//! The documentation shows what the binary does: every example of
//! `docs/formats.md` gives calls in its format, every built-in format has a
//! section there, and the README's main command prints what the README
//! shows (and is the one `.ci/run` runs).
//!
//! When one of these fails after a change of behaviour, update the document
//! with the output the failure message prints.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    let p = repo().join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `toolscan ARGS` (from the repository root) with `input` on stdin;
/// returns stdout, asserting exit status 0.
fn run(args: &[&str], input: &[u8]) -> String {
    let root = repo();
    let out =
        toolscan_testkit::process::run_ok(env!("CARGO_BIN_EXE_toolscan"), Some(&root), args, input);
    String::from_utf8(out).expect("UTF-8 output")
}

/// A fenced code block of a Markdown file.
#[derive(Debug)]
struct Block {
    /// The last heading before it.
    heading: String,
    /// The last non-blank line of prose before it.
    intro: String,
    /// Its info string (`text`, `sh`, `rust`…).
    info: String,
    /// Its lines, each ending in `\n`.
    body: String,
}

/// The fenced blocks of `markdown` (fences of three or more backticks; a
/// block ends at a fence of the same length).
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let (mut heading, mut intro) = (String::new(), String::new());
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        if ticks >= 3 {
            let fence = &line[..ticks];
            let mut body = String::new();
            for l in lines.by_ref() {
                if l == fence {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            out.push(Block {
                heading: heading.clone(),
                intro: intro.clone(),
                info: line[ticks..].trim().to_owned(),
                body,
            });
        } else if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_owned();
        } else if !line.trim().is_empty() {
            intro = line.trim().to_owned();
        }
    }
    out
}

/// The built-in formats, as `toolscan formats --json` lists them.
fn builtin_formats() -> Vec<String> {
    run(&["formats", "--json"], b"")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON line");
            v["name"].as_str().expect("name").to_owned()
        })
        .collect()
}

/// The format a section heading names: "`hermes`" → "hermes".
fn format_of(heading: &str) -> Option<&str> {
    heading.strip_prefix('`')?.strip_suffix('`')
}

#[test]
fn every_builtin_format_has_a_section_with_an_example() {
    let doc = read("docs/formats.md");
    let documented: Vec<String> = blocks(&doc)
        .iter()
        .filter_map(|b| format_of(&b.heading).map(str::to_owned))
        .collect();
    for name in builtin_formats() {
        assert!(
            documented.contains(&name),
            "docs/formats.md has no section `### \\`{name}\\`` with an example"
        );
    }
}

#[test]
fn every_format_example_gives_calls_and_no_diagnostic() {
    let doc = read("docs/formats.md");
    let formats = builtin_formats();
    let mut seen = Vec::new();
    for block in blocks(&doc) {
        let Some(name) = format_of(&block.heading) else {
            continue;
        };
        if name == "auto" || seen.iter().any(|s| s == name) {
            continue; // only the first block of a section is its example
        }
        seen.push(name.to_owned());
        assert!(
            formats.iter().any(|f| f == name),
            "docs/formats.md documents `{name}`, which is not a built-in format"
        );
        let input = block.body.as_bytes();
        let whole = run(&["parse", "--format", name, "--output", "final"], input);
        let chunked = run(
            &[
                "parse", "--format", name, "--output", "final", "--chunk", "1",
            ],
            input,
        );
        assert_eq!(whole, chunked, "{name}: the example depends on chunking");
        let v: Value = serde_json::from_str(&whole).expect("final object");
        let calls = v["tool_calls"].as_array().map_or(0, Vec::len);
        assert!(calls > 0, "{name}: the example gives no call: {whole}");
        assert_eq!(
            v["diagnostics"],
            serde_json::json!([]),
            "{name}: the example gives diagnostics: {whole}"
        );
    }
}

#[test]
fn the_events_example_is_what_the_binary_prints() {
    let doc = read("docs/formats.md");
    let all = blocks(&doc);
    let hermes = all
        .iter()
        .find(|b| b.heading == "`hermes`")
        .expect("a hermes section");
    let shown = all
        .iter()
        .find(|b| b.heading == "Events" && b.intro.contains("--output coalesced"))
        .expect("an events example under `## Events`");
    let printed = run(&["parse", "--output", "coalesced"], hermes.body.as_bytes());
    assert_eq!(
        shown.body, printed,
        "docs/formats.md's events example is out of date; the binary prints:\n{printed}"
    );
}

/// The README's main command: its arguments after `cargo run --release --`.
fn readme_main_command(readme: &str) -> Vec<String> {
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- parse"))
        .expect("README shows `cargo run --release -- parse …`");
    let args = line
        .strip_prefix("cargo run --release --")
        .expect("prefix checked");
    args.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn the_readme_shows_the_main_commands_output() {
    let readme = read("README.md");
    let args = readme_main_command(&readme);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let all = blocks(&readme);
    let at = all
        .iter()
        .position(|b| b.body.starts_with("cargo run --release -- parse"))
        .expect("the main command's block");
    let shown = all
        .get(at + 1)
        .filter(|b| b.info == "jsonl")
        .expect("a ```jsonl block with its output right after the main command");
    let printed = run(&args, b"");
    assert_eq!(
        shown.body,
        printed,
        "README's output of `{}` is out of date; the binary prints:\n{printed}",
        args.join(" ")
    );
}

#[test]
fn ci_runs_the_readme_main_command() {
    let readme = read("README.md");
    let want = readme_main_command(&readme).join(" ");
    let ci = read(".ci/run");
    let runs = ci
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cargo run --quiet --"))
        .map(|rest| {
            let rest = rest.split(">/dev/null").next().unwrap_or(rest);
            rest.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .any(|args| args == want);
    assert!(
        runs,
        ".ci/run does not run the README's main command `{want}`"
    );
}
