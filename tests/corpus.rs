//! The conformance corpus: every case of `tests/corpus/*.jsonl` whose format
//! this build implements, under whole, 1-byte, fixed and random chunkings,
//! each fed through every parser API (`feed`, `feed_into`, the sink API,
//! `feed_str_with`): see `toolscan_testkit::corpus::check_case`.

use toolscan_testkit::corpus::{check_case, corpus_dir, implemented, load_corpus, target_format};

/// Cases that contradict the contract or the catalogue, with the reason
/// (none so far).
const SKIP: &[(&str, &str)] = &[];

#[test]
fn corpus_cases_pass_under_every_chunking() {
    let cases = load_corpus(&corpus_dir());
    assert!(cases.len() >= 500, "corpus copy is incomplete");
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut skipped: std::collections::BTreeMap<String, usize> = Default::default();
    for case in &cases {
        if let Some((_, why)) = SKIP.iter().find(|(id, _)| *id == case.id) {
            eprintln!("skip {}: {why}", case.id);
            continue;
        }
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
