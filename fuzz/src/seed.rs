//! Seeds and dictionaries, written by the targets themselves.
//!
//! Each target's `init` calls [`init`]: when `TOOLSCAN_FUZZ_SEED_OUT`
//! names a directory, the target writes its seed inputs there (built from
//! the repository at `TOOLSCAN_FUZZ_REPO`: the conformance cases of
//! `tests/corpus/*.jsonl`, `examples/`) and, when `TOOLSCAN_FUZZ_DICT`
//! names a file, a libFuzzer dictionary of the literals its inputs are
//! made of; then it exits. `scripts/fuzz.sh` does this before each run, so
//! the byte layout of an input is written only in this crate.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolscan_core::Registry;
use toolscan_testkit::corpus::{load_corpus, Case};

/// What a target writes as seeds: inputs and dictionary entries.
#[derive(Default)]
pub struct Seeds {
    /// Seed inputs.
    pub inputs: Vec<Vec<u8>>,
    /// Dictionary entries.
    pub words: BTreeSet<Vec<u8>>,
}

/// The repository a seed writer reads.
pub struct Repo {
    /// Its root.
    pub root: PathBuf,
    /// Its conformance cases.
    pub cases: Vec<Case>,
}

impl Repo {
    /// Every file directly under `dir` (relative to the root) whose name
    /// ends with `ext`, in name order, with its contents.
    pub fn files(&self, dir: &str, ext: &str) -> Vec<(String, Vec<u8>)> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(ext) && p.is_file())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().into_owned();
                Some((name, std::fs::read(&p).ok()?))
            })
            .collect()
    }
}

/// If `TOOLSCAN_FUZZ_SEED_OUT` is set: writes the seeds `make` gives (and
/// the dictionary, with `TOOLSCAN_FUZZ_DICT`), then exits the process.
///
/// With `TOOLSCAN_FUZZ_FORMATS` set instead, prints the format table that
/// an input's format byte indexes (index, name, text rule) and exits.
///
/// Otherwise installs the filter of known panics ([`crate::known`]).
pub fn init(make: fn(&Repo) -> Seeds) {
    if std::env::var_os("TOOLSCAN_FUZZ_FORMATS").is_some() {
        for (k, e) in crate::formats::builtin().iter().enumerate() {
            println!("{k}\t{}\t{:?}", e.name, e.rule);
        }
        std::process::exit(0);
    }
    let Some(out) = std::env::var_os("TOOLSCAN_FUZZ_SEED_OUT") else {
        crate::known::install();
        return;
    };
    let root = std::env::var_os("TOOLSCAN_FUZZ_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".."));
    let repo = Repo {
        cases: load_corpus(&root.join("tests/corpus")),
        root,
    };
    let seeds = make(&repo);
    let out = Path::new(&out);
    std::fs::create_dir_all(out).expect("seed directory");
    for input in &seeds.inputs {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        input.hash(&mut h);
        let path = out.join(format!("seed-{:016x}", h.finish()));
        std::fs::write(&path, input).expect("seed written");
    }
    eprintln!("wrote {} seeds to {}", seeds.inputs.len(), out.display());
    if let Some(dict) = std::env::var_os("TOOLSCAN_FUZZ_DICT") {
        let mut text = String::new();
        for w in &seeds.words {
            text.push('"');
            for &b in w {
                match b {
                    b'"' | b'\\' => {
                        text.push('\\');
                        text.push(char::from(b));
                    }
                    0x20..=0x7e => text.push(char::from(b)),
                    _ => text.push_str(&format!("\\x{b:02X}")),
                }
            }
            text.push_str("\"\n");
        }
        std::fs::write(&dict, text).expect("dictionary written");
        eprintln!("wrote {} dictionary entries", seeds.words.len());
    }
    std::process::exit(0);
}

/// Every string of a JSON value (and, with `keys`, every object key).
pub fn strings(v: &Value, keys: bool, out: &mut BTreeSet<Vec<u8>>) {
    match v {
        Value::String(s) => {
            out.insert(s.as_bytes().to_vec());
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, keys, out)),
        Value::Object(o) => {
            for (k, x) in o {
                if keys {
                    out.insert(k.as_bytes().to_vec());
                }
                strings(x, keys, out);
            }
        }
        _ => {}
    }
}

/// The literals of every built-in format (its description's strings:
/// markers, closers, separators, keys) and the reasoning markers, as
/// dictionary entries; with `keys`, the description's keys too.
pub fn format_words(keys: bool) -> BTreeSet<Vec<u8>> {
    let mut words = BTreeSet::new();
    for f in Registry::builtin().formats() {
        if let Some(v) = f
            .to_json()
            .ok()
            .and_then(|j| serde_json::from_str::<Value>(&j).ok())
        {
            strings(&v, keys, &mut words);
        }
    }
    for (open, close) in toolscan_core::reasoning_markers() {
        words.insert(open.as_bytes().to_vec());
        words.insert(close.as_bytes().to_vec());
    }
    // Libfuzzer ignores entries longer than 64 bytes by default.
    words.retain(|w| !w.is_empty() && w.len() <= 64);
    words
}

/// Valid inputs of a format, written by its renderer
/// (`Format::render`): a few responses — text and calls of the tools of
/// [`crate::tools`] (strings with escapes, unicode and markup, numbers,
/// nested values, empty arguments, two calls) — each as the format writes
/// it. A response the format cannot hold is left out.
pub fn rendered(format: &toolscan_core::Format) -> Vec<Vec<u8>> {
    use serde_json::json;
    use toolscan_core::render::Call;
    let call = |name: &str, args: Value| Call::from_value(name, &args);
    let responses: Vec<(&str, Vec<Option<Call>>)> = vec![
        (
            "Let me check.\n",
            vec![call(
                "get_weather",
                json!({"city": "Zürich", "unit": "c", "days": 3}),
            )],
        ),
        (
            "",
            vec![call(
                "python",
                json!({"code": "print(\"a\\tb\" + 'c')\n# </tool_call> ``` ]"}),
            )],
        ),
        (
            "",
            vec![call(
                "search",
                json!({"query": "日本 😀", "max": 10, "filters": {"tags": ["a", "b"], "max": 2}}),
            )],
        ),
        (
            "Both.\n",
            vec![
                call(
                    "calculate",
                    json!({"expression": "2*3", "precise": true, "scale": 0.5, "extra": null}),
                ),
                call("get_time", json!({})),
            ],
        ),
    ];
    responses
        .into_iter()
        .filter_map(|(text, calls)| {
            let calls: Option<Vec<Call>> = calls.into_iter().collect();
            format
                .render(text, &calls?, Some(crate::tools()))
                .ok()
                .map(String::into_bytes)
        })
        .collect()
}
