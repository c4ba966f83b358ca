//! The conformance corpus: every case of `tests/corpus/*.jsonl` whose format
//! this build implements, under whole, 1-byte, fixed and random chunkings,
//! each fed through every parser API (`feed`, `feed_into`, the sink API,
//! `feed_str_with`): see `toolscan_testkit::corpus::check_case`. Cases
//! that contradict the contract or the catalogue are named, with the
//! reason, in `tests/corpus/skip.json` (`toolscan_testkit::corpus::skipped`).

use toolscan_testkit::corpus::{check_case, corpus_dir, implemented, load_corpus, target_format};

#[test]
fn corpus_cases_pass_under_every_chunking() {
    let cases = load_corpus(&corpus_dir());
    assert!(cases.len() >= 500, "corpus copy is incomplete");
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut skipped: std::collections::BTreeMap<String, usize> = Default::default();
    for case in &cases {
        if !implemented(case) {
            *skipped.entry(target_format(case).to_string()).or_default() += 1;
            continue;
        }
        ran += 1;
        if let Err(e) = check_case(case) {
            failures.push(format!("{} ({}): {e}", case.id, case.file));
        }
    }
    let n_skipped: usize = skipped.values().sum();
    eprintln!(
        "corpus: {ran} cases run, {n_skipped} skipped for formats not implemented yet: {}",
        skipped
            .iter()
            .map(|(f, n)| format!("{f} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Formats whose cases may be read otherwise by `auto`: their form is a
/// bare `{` or `[`, or a recipient at the start of the stream, which `auto`
/// does not read (prose is full of braces; any first line looks like a
/// recipient).
const BARE_FORMS: &[(&str, &str)] = &[
    ("json", "a bare or fenced JSON value"),
    ("xlam", "a bare or fenced JSON list"),
    (
        "llama3-json",
        "a bare call object (its <|python_tag|> form is in auto)",
    ),
    (
        "end-tool-request",
        "a bare call object before [END_TOOL_REQUEST]",
    ),
    (
        "functionary-v3.2",
        "a recipient line at the start of the stream",
    ),
    ("pythonic", "a bare `[` list of calls"),
    (
        "gemma-tool-code",
        "a ```tool_code fence: auto reads code fences as hermes' (the same marker)",
    ),
];

/// Cases whose input another format reads otherwise under `auto`, by the
/// documented precedence.
const AUTO_READS_OTHERWISE: &[(&str, &str)] = &[
    (
        "granite-20b-fc",
        "`<function_call>{…}` is hermes' wrapper, which needs `</function_call>`",
    ),
    (
        "p23-qwen35-served-as-hermes",
        "the case pins hermes failing on Qwen XML, which auto reads as qwen3-coder",
    ),
    (
        "gigachat3-bare-opener",
        "a completion that starts with GigaChat's `function call` header, which only the \
         format's start-of-stream program reads",
    ),
    (
        "p9-partial-marker-is-text",
        "under auto `[TOOL_CALL` also holds tool-call-json's `TOOL_CALL`, a definite marker",
    ),
];

#[test]
fn auto_reads_every_unambiguous_case_as_its_format_does() {
    use toolscan_core::{parse, Registry};
    use toolscan_testkit::corpus::{check_expect, options_for, Outcome};
    let auto = Registry::builtin().grammar("auto").unwrap();
    let (mut agreed, mut failures) = (0, Vec::new());
    for case in load_corpus(&corpus_dir()) {
        if case.format == "auto" || !implemented(&case) {
            continue;
        }
        let r = parse(auto.clone(), options_for(&case), case.input.as_bytes());
        match check_expect(&case.expect, &Outcome::from_response(&r)) {
            Ok(()) => agreed += 1,
            Err(_) if BARE_FORMS.iter().any(|(f, _)| *f == case.format) => {}
            Err(_) if AUTO_READS_OTHERWISE.iter().any(|(id, _)| *id == case.id) => {}
            Err(e) => failures.push(format!("{} ({}): {e}", case.id, case.format)),
        }
    }
    assert!(agreed >= 400, "only {agreed} cases agree");
    assert!(
        failures.is_empty(),
        "auto reads {} cases otherwise:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
