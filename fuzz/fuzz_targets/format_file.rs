//! Format-file descriptions (`Format::from_json`,
//! `Registry::register`): arbitrary text in, no panic; a description that
//! loads writes itself back (`to_json`) to an equal format, compiles, and
//! runs a parser over model output under the contract.
//!
//! Input layout:
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | options (`toolscan_fuzz::flag`, bits 0–4); bit 5: check that the format writes itself back; bits 6 and 7 (both): also read the output with `auto` once the format is registered beside the built-ins (compiling `auto` costs more than all the rest, so only a quarter of the inputs do it) |
//! | 1 | chunking (`toolscan_fuzz::chunks`) |
//! | 2.. | the description (JSON text), up to the first `0xFF` byte (never in UTF-8); after it, the model output |
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};
use toolscan_core::{parse, Format, Grammar, Options, Parser, Registry, Response};
use toolscan_fuzz::check::{one_run, same_events, Run};
use toolscan_fuzz::formats::{text_rule, TextRule};
use toolscan_fuzz::{chunks, flag, known, last, options, seed};

/// Bit of byte 0: write the format back and read it again.
const ROUND_TRIP: u8 = 1 << 5;
/// Bits of byte 0 (both): read the output with `auto` too.
const AUTO: u8 = 3 << 6;

/// Runs `input` through `grammar` whole and chunked, and checks the
/// contract.
fn exercise(
    grammar: &std::sync::Arc<Grammar>,
    opts: &Options,
    rule: TextRule,
    flags: u8,
    chunking: u8,
    input: &[u8],
) {
    let at_stop = flags & flag::AT_STOP != 0;
    let parser = || Parser::new(grammar.clone(), opts.clone());
    let chunked = chunks::run(parser(), input, chunking, at_stop);
    let whole = chunks::run(parser(), input, 0, at_stop);
    let lossy = String::from_utf8_lossy(input);
    let run = Run {
        input,
        lossy: &lossy,
        reasoning: flags & flag::REASONING != 0,
        rule,
    };
    one_run(&chunked, &run);
    one_run(&whole, &run);
    same_events(
        &chunked,
        &whole,
        &format_args!("format {}, chunking {chunking}", grammar.name()),
    );
    if !at_stop {
        assert_eq!(
            parse(grammar.clone(), opts.clone(), input),
            Response::from_events(&whole),
            "parse differs from the streamed events"
        );
    }
}
/// A loaded format writes itself back (`to_json`) to a description that
/// loads as the same format.
fn round_trip(format: &Format) {
    let written = format
        .to_json()
        .unwrap_or_else(|e| panic!("a loaded format does not write back: {e}"));
    match Format::from_json(&written) {
        Ok(again) => assert_eq!(
            &again, format,
            "the written description reads back another format:\n{written}"
        ),
        Err(e) => panic!("the written description does not load: {e}\n{written}"),
    }
}

fuzz_target!(init: seed::init(seeds), |data: &[u8]| -> Corpus {
    // A bare SIGSEGV was seen twice in this target, with no artifact.
    last::note(data);
    if known::run(|| check(data)) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});

fn check(data: &[u8]) {
    let [flags, chunking, rest @ ..] = data else {
        return;
    };
    let (description, input) = match rest.iter().position(|&b| b == 0xFF) {
        Some(k) => (&rest[..k], &rest[k + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(description) else {
        return;
    };
    let Ok(format) = Format::from_json(text) else {
        return;
    };
    if flags & ROUND_TRIP != 0 {
        round_trip(&format);
    }
    // Its markers were checked as a grammar checks them: it compiles.
    let grammar = Grammar::new(format.name(), &[&format])
        .unwrap_or_else(|e| panic!("a loaded format does not compile: {e}"))
        .shared();
    let opts = options(flags & 0x1f);
    exercise(
        &grammar,
        &opts,
        text_rule([&format], false),
        *flags,
        *chunking,
        input,
    );

    if flags & AUTO == AUTO {
        let mut reg = Registry::builtin();
        let builtin = reg.get(format.name()).is_some() || format.name() == "auto";
        match reg.register(format.clone()) {
            Ok(()) => assert!(!builtin, "registered over a built-in name"),
            Err(e) => {
                assert!(
                    builtin,
                    "a loaded format with a new name does not register: {e}"
                );
                return;
            }
        }
        // Beside the built-ins its markers may clash (one inside another):
        // that is a configuration error, not a panic.
        if let Ok(auto) = reg.grammar("auto") {
            let rule = text_rule(reg.formats(), true);
            exercise(&auto, &opts, rule, *flags, *chunking, input);
        }
    }
}

/// Every built-in format written as a description (renamed, so that it
/// registers beside the built-ins) and every example description, each
/// with up to three conformance inputs of its format.
fn seeds(repo: &seed::Repo) -> seed::Seeds {
    let mut s = seed::Seeds {
        words: seed::format_words(true),
        ..Default::default()
    };
    let mut descriptions: Vec<(String, serde_json::Value)> = Vec::new();
    let mut rendered: std::collections::HashMap<String, Vec<Vec<u8>>> = Default::default();
    for f in Registry::builtin().formats() {
        if let Some(v) = f.to_json().ok().and_then(|j| serde_json::from_str(&j).ok()) {
            descriptions.push((f.name().to_string(), v));
        }
        rendered.insert(f.name().to_string(), seed::rendered(f));
    }
    for (file, bytes) in repo.files("examples/formats", ".json") {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) {
            let of = v["name"]
                .as_str()
                .unwrap_or(&file)
                .trim_start_matches("file-")
                .to_string();
            descriptions.push((of, v));
        }
    }
    for (k, (of, mut v)) in descriptions.into_iter().enumerate() {
        v["name"] = format!("fuzz-{of}").into();
        let text = serde_json::to_string(&v).unwrap_or_default();
        let inputs: Vec<&str> = repo
            .cases
            .iter()
            .filter(|c| c.format == of)
            .map(|c| c.input.as_str())
            .take(3)
            .collect();
        // Its conformance cases, and what its renderer writes.
        let own: Vec<&[u8]> = rendered.get(&of).map_or(Vec::new(), |r| {
            r.iter().map(Vec::as_slice).take(2).collect()
        });
        for (j, input) in inputs
            .iter()
            .map(|i| i.as_bytes())
            .chain(own)
            .chain([&b""[..]])
            .enumerate()
        {
            let flags = ROUND_TRIP
                | if (k + j) % 5 == 0 { AUTO } else { 0 }
                | if j == 1 { flag::REASONING } else { 0 };
            let mut d = vec![flags, if j == 0 { 0 } else { 2 }];
            d.extend_from_slice(text.as_bytes());
            d.push(0xFF);
            d.extend_from_slice(input);
            s.inputs.push(d);
        }
    }
    s
}
