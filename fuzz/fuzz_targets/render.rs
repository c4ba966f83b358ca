//! Renders an arbitrary response — text and calls made from the input —
//! in any built-in format with `Format::render`, and checks what comes
//! back: never a panic (nor a stack overflow: the renderer keeps no
//! frame per call or key, so it runs here on a thread of 256 KiB, where
//! a frame per call of the size the recursive renderer had overflows
//! within a few dozen calls); a rendering reads back, with the format's
//! parser, as the calls given (names, arguments as JSON values); a
//! refusal is a `RenderError`, and a response over a bound
//! (`RenderLimit`) is refused by it.
//!
//! Input layout:
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | the format: an index into the built-in formats, modulo their number |
//! | 1 | bit 0: render with the tools list (`toolscan_fuzz::tools`); bit 1: the calls carry ids; bits 2–7 (`n`): how many times the calls are repeated — 1 to 4 times (`n` < 62), 100 times (`n` = 62: deeper than the small stack allows a frame per call), or once more than the call limit allows (`n` = 63, `RenderLimit::Calls`), so that most inputs cost microseconds |
//! | 2.. | the response, as text (invalid UTF-8 as U+FFFD): the pieces between `\u{1}` bytes are the text, then each call — its name, then its key/value pairs, each parted by `\u{2}` (a value that parses as JSON is that value, else a string) |
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};
use serde_json::{Map, Value};
use toolscan_core::render::Call;
use toolscan_core::{parse, Options, Registry, RenderError, RenderLimit};
use toolscan_fuzz::{known, seed};

fuzz_target!(init: seed::init(seeds), |data: &[u8]| -> Corpus {
    if known::run(|| check(data)) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});

/// The calls one piece of input stands for: its name, then key/value
/// pairs (a value that is JSON stays JSON).
fn call(piece: &str, id: Option<usize>) -> Option<Call> {
    let mut parts = piece.split('\u{2}');
    let name = parts.next()?;
    let mut args = Map::new();
    while let Some(k) = parts.next() {
        let v = parts.next().unwrap_or("");
        let v = serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.to_owned()));
        args.insert(k.to_owned(), v);
    }
    let c = Call::from_value(name, &Value::Object(args))?;
    Some(match id {
        Some(i) => c.with_id(format!("call_{i}")),
        None => c,
    })
}

fn check(data: &[u8]) {
    let [format, flags, input @ ..] = data else {
        return;
    };
    let registry = Registry::builtin();
    let formats = registry.formats();
    let f = &formats[usize::from(*format) % formats.len()];
    let text = String::from_utf8_lossy(input);
    let mut pieces = text.split('\u{1}');
    let prose = pieces.next().unwrap_or("");
    let unit: Vec<&str> = pieces.collect();
    let repeat = match flags >> 2 {
        n @ 0..=61 => 1 + usize::from(n % 4),
        62 => 100,
        _ => RenderLimit::Calls.max() / unit.len().max(1) + 1,
    };
    let mut calls = Vec::new();
    for r in 0..repeat {
        for (i, p) in unit.iter().enumerate() {
            let id = (flags & 2 != 0).then_some(r * unit.len() + i);
            calls.extend(call(p, id));
        }
    }
    let tools = (flags & 1 != 0).then(toolscan_fuzz::tools);
    std::thread::scope(|scope| {
        let checked = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, || render_and_read_back(f, prose, &calls, tools))
            .expect("a thread for the render");
        if let Err(panic) = checked.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

/// The stack the render runs on.
const STACK: usize = 256 << 10;

/// Renders `calls` after `prose` in `f` and checks what comes back.
fn render_and_read_back(
    f: &toolscan_core::Format,
    prose: &str,
    calls: &[Call],
    tools: Option<&toolscan_core::Tools>,
) {
    match f.render(prose, calls, tools) {
        Ok(out) => {
            let mut options = Options::default();
            if let Some(t) = tools {
                options = options.with_tools(t.clone());
            }
            let grammar = Registry::builtin()
                .grammar(f.name())
                .expect("a built-in format compiles");
            let back = parse(grammar, options, out.as_bytes());
            assert_eq!(back.tool_calls.len(), calls.len(), "{}: {out:?}", f.name());
            for (got, want) in back.tool_calls.iter().zip(calls) {
                assert_eq!(got.name, want.name, "{}: {out:?}", f.name());
                assert_eq!(
                    got.arguments.parse().ok(),
                    want.arguments.parse().ok(),
                    "{}: {out:?}",
                    f.name()
                );
            }
        }
        Err(RenderError::Limit(limit)) => {
            assert!(
                limit != RenderLimit::Calls || calls.len() > RenderLimit::Calls.max(),
                "{}: refused by the call limit with {} calls",
                f.name(),
                calls.len()
            );
        }
        Err(_) => {}
    }
}

/// A call of each shape, every format, once and repeated; the formats'
/// strings (markup in names, keys and values) as the dictionary.
fn seeds(_: &seed::Repo) -> seed::Seeds {
    let mut s = seed::Seeds {
        words: seed::format_words(true),
        ..Default::default()
    };
    let n = Registry::builtin().formats().len();
    let responses: [&[u8]; 4] = [
        b"Let me check.\n\x01get_weather\x02city\x02Paris",
        b"\x01get_weather\x02city\x02Z\xc3\xbcrich\x02days\x023\x01get_time",
        b"text\x01write\x02path\x02a.txt\x02content\x02</parameter> & \"q\"\x02nested\x02{\"a\": [1, {\"b\": null}]}",
        b"\x01f\x02a\x021\x02b\x022\x02c\x023\x02d\x024",
    ];
    for k in 0..n {
        for r in responses {
            // Many calls cost a fifth of a second each: the first response
            // only.
            let many: &[u8] = if r == responses[0] { &[62 << 2, 63 << 2] } else { &[] };
            for &flags in [0u8, 1, 2, 3 | 5 << 2].iter().chain(many) {
                let mut v = vec![k as u8, flags];
                v.extend_from_slice(r);
                s.inputs.push(v);
            }
        }
    }
    s
}
