//! Calls written in Python-like notation (`pythonic`, `olmo3`, `lfm2`,
//! `gemma-tool-code`, `functiongemma`, `gemma4`, and Llama 3.1's built-in
//! tools under `llama3-json`): argument deltas are prefixes of the final
//! arguments and strings stream while they arrive, what is not a literal
//! (a nested call, a positional argument) turns the block back into text
//! with one diagnostic, non-ASCII text and every string quoting, and the
//! limits trip at the byte that exceeds them.
//!
//! Every input runs under every chunking of the test kit
//! (`chunk::invariant`: whole, fixed sizes, seeded random sizes, each
//! through every feeding API, which must agree and keep the event
//! contract), and the one-shot `parse` must give what the events collect to.

use serde_json::{json, Value};
use toolscan::{DiagnosticKind, Event, Limits, Options};
use toolscan_testkit::check::{calls_of as calls, diagnostics_of, text_of};
use toolscan_testkit::chunk::{self, Plan};

/// The coalesced events of `input` under every chunking and API.
fn run(format: &str, opts: &Options, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, opts, input)
}

fn seeded() -> Options {
    chunk::seeded_options()
}

fn limited(limits: Limits) -> Options {
    seeded().with_limits(limits)
}

/// The events of `input` fed one byte at a time, not coalesced.
fn bytewise(format: &str, input: &str) -> Vec<Event> {
    let plan = Plan::fixed(input.len(), 1);
    chunk::feed(
        chunk::parser(format, seeded()),
        chunk::Api::Feed,
        input.as_bytes(),
        &plan,
    )
}

/// One call of each notation, with strings, numbers, nesting and non-ASCII
/// text; the arguments every one of them must give.
fn samples() -> Vec<(&'static str, String, Value)> {
    let args = json!({"city": "東京", "n": -3, "r": 1.5e-05, "ok": true,
                      "tags": ["a", "b"], "meta": {"k": null}});
    vec![
        (
            "pythonic",
            "[f(city='東京', n=-3, r=1.5e-05, ok=True, tags=['a', \"b\"], meta={'k': None})]"
                .into(),
            args.clone(),
        ),
        (
            "olmo3",
            "<function_calls>f(city=\"東京\", n=-3, r=1.5e-05, ok=true, tags=('a', 'b'), \
             meta={\"k\": null})</function_calls>"
                .into(),
            args.clone(),
        ),
        (
            "lfm2",
            "<|tool_call_start|>[f(city='''東京''', n=-3, r=1.5e-05, ok=True, tags=['a','b'], \
             meta={'k': None})]<|tool_call_end|>"
                .into(),
            args.clone(),
        ),
        (
            "gemma-tool-code",
            "```tool_code\nf(city=\"\\u6771\\u4eac\", n=-3, r=1.5e-05, ok=True, tags=['a', 'b'], \
             meta={'k': None})\n```"
                .into(),
            args.clone(),
        ),
        (
            "functiongemma",
            "<start_function_call>call:f{city:<escape>東京<escape>,n:-3,r:1.5e-05,ok:true,\
             tags:[<escape>a<escape>,<escape>b<escape>],meta:{k:null}}<end_function_call>"
                .into(),
            args.clone(),
        ),
        (
            "gemma4",
            "<|tool_call>call:f{city:<|\"|>東京<|\"|>,meta:{k:null},n:-3,ok:true,r:1.5e-05,\
             tags:[<|\"|>a<|\"|>,<|\"|>b<|\"|>]}<tool_call|>"
                .into(),
            args,
        ),
    ]
}

#[test]
fn every_notation_gives_the_same_arguments_under_every_chunking_and_auto() {
    for (format, input, args) in samples() {
        // (a bare opener and the tool_code fence are not in auto)
        let in_auto = !matches!(format, "pythonic" | "gemma-tool-code");
        for grammar in [format, "auto"] {
            if grammar == "auto" && !in_auto {
                continue;
            }
            let ev = run(grammar, &seeded(), &input);
            assert_eq!(
                calls(&ev),
                vec![("f".to_string(), args.clone())],
                "{grammar}: {input}"
            );
            assert_eq!(text_of(&ev), "", "{grammar}");
            assert!(diagnostics_of(&ev).is_empty(), "{grammar}: {ev:?}");
        }
    }
}

#[test]
fn argument_deltas_are_prefixes_of_the_final_arguments() {
    for (format, input, _) in samples() {
        let ev = bytewise(format, &input);
        let mut sent = String::new();
        let mut deltas = 0;
        let mut ended = false;
        for e in &ev {
            match e {
                Event::ToolCallArgs { delta, .. } => {
                    sent.push_str(delta);
                    deltas += 1;
                }
                Event::ToolCallEnd { arguments, .. } => {
                    assert_eq!(sent, arguments.to_string(), "{format}");
                    ended = true;
                }
                _ => {}
            }
        }
        assert!(ended, "{format}");
        // keys and values go out as they are read, not at the end
        assert!(deltas > 10, "{format}: {deltas} deltas");
    }
}

#[test]
fn a_string_value_streams_before_it_ends() {
    let long = "x".repeat(40);
    for (format, input) in [
        ("pythonic", format!("[f(s='{long}')]")),
        (
            "gemma4",
            format!("<|tool_call>call:f{{s:<|\"|>{long}<|\"|>}}<tool_call|>"),
        ),
        (
            "olmo3",
            format!("<function_calls>f(s=\"\"\"{long}\"\"\")</function_calls>"),
        ),
    ] {
        let ev = bytewise(format, &input);
        let end = ev
            .iter()
            .position(|e| matches!(e, Event::ToolCallEnd { .. }))
            .expect("a call");
        // the string's bytes arrive as deltas while it is being read
        let partial: Vec<&Event> = ev[..end]
            .iter()
            .filter(|e| matches!(e, Event::ToolCallArgs { delta, .. } if delta == "x"))
            .collect();
        assert_eq!(partial.len(), 40, "{format}");
    }
}

#[test]
fn a_nested_call_turns_the_block_into_text_with_one_diagnostic() {
    for (format, input) in [
        ("pythonic", "[f(x=g(1))]"),
        ("pythonic", "<|python_start|>[f(x=g(y=1))]<|python_end|>"),
        (
            "olmo3",
            "<function_calls>f(x=os.system('ls'))</function_calls>",
        ),
        (
            "lfm2",
            "<|tool_call_start|>[f(a=1, x=g())]<|tool_call_end|>",
        ),
        ("gemma-tool-code", "```tool_code\nf(x=g(1))\n```"),
    ] {
        let ev = run(format, &seeded(), input);
        assert!(calls(&ev).is_empty(), "{format}: {input}");
        assert_eq!(text_of(&ev), input, "{format}");
        let d = diagnostics_of(&ev);
        assert_eq!(d.len(), 1, "{format}: {d:?}");
        assert_eq!(d[0].0, DiagnosticKind::Malformed, "{format}");
        let message = ev
            .iter()
            .find_map(|e| match e {
                Event::Diagnostic(d) => Some(d.message.clone()),
                _ => None,
            })
            .unwrap_or_default();
        assert!(message.contains("call inside the arguments"), "{message}");
    }
}

#[test]
fn a_positional_argument_or_a_name_is_not_read() {
    for (format, input, words) in [
        (
            "olmo3",
            "<function_calls>f('Paris')</function_calls>",
            "positional",
        ),
        (
            "olmo3",
            "<function_calls>f(city=paris)</function_calls>",
            "a name",
        ),
        (
            "gemma4",
            "<|tool_call>call:f{city:Paris}<tool_call|>",
            "a name",
        ),
        (
            "lfm2",
            "<|tool_call_start|>[f(x=(1))]<|tool_call_end|>",
            "tuple",
        ),
    ] {
        let ev = run(format, &seeded(), input);
        assert!(calls(&ev).is_empty(), "{input}");
        assert_eq!(text_of(&ev), input);
        let messages: Vec<String> = ev
            .iter()
            .filter_map(|e| match e {
                Event::Diagnostic(d) => Some(d.message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(messages.len(), 1, "{input}: {messages:?}");
        assert!(messages[0].contains(words), "{input}: {messages:?}");
    }
    // in prose, a bracket that does not lead to keyword arguments is text,
    // silently
    let prose = "See [f(x)] and [1, 2] or [note(s)]. [a b(c=1)]";
    let ev = run("pythonic", &seeded(), prose);
    assert_eq!(text_of(&ev), prose);
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
}

#[test]
fn non_ascii_text_is_kept_byte_for_byte() {
    let ev = run(
        "pythonic",
        &seeded(),
        "東京は? [weather(city='東京', note=\"naïve — 🎉\", 名前='値')] 晴れ",
    );
    assert_eq!(
        calls(&ev),
        vec![(
            "weather".to_string(),
            json!({"city": "東京", "note": "naïve — 🎉", "名前": "値"})
        )]
    );
    assert_eq!(text_of(&ev), "東京は?  晴れ");
    let ev = run(
        "gemma4",
        &seeded(),
        "<|tool_call>call:weather{都市:<|\"|>東京<|\"|>,表示 名:<|\"|>Zoë<|\"|>}<tool_call|>",
    );
    assert_eq!(
        calls(&ev),
        vec![(
            "weather".to_string(),
            json!({"都市": "東京", "表示 名": "Zoë"})
        )]
    );
}

#[test]
fn triple_quoted_strings_hold_quotes_and_lines() {
    let input =
        "<function_calls>write(path='a.py', body=\"\"\"def f():\n    return \"x\" + 'y'\n\"\"\", \
                 note='''it's ''fine''')</function_calls>";
    let ev = run("olmo3", &seeded(), input);
    assert_eq!(
        calls(&ev),
        vec![(
            "write".to_string(),
            json!({"path": "a.py", "body": "def f():\n    return \"x\" + 'y'\n",
                   "note": "it's ''fine"})
        )]
    );
}

#[test]
fn llama_built_in_tools_are_read_after_the_python_tag() {
    for grammar in ["llama3-json", "auto"] {
        let ev = run(
            grammar,
            &seeded(),
            "<|python_tag|>brave_search.call(query=\"latest price of 1oz gold\")<|eom_id|>",
        );
        assert_eq!(
            calls(&ev),
            vec![(
                "brave_search".to_string(),
                json!({"query": "latest price of 1oz gold"})
            )],
            "{grammar}"
        );
        assert_eq!(text_of(&ev), "");
        let ev = run(
            grammar,
            &seeded(),
            "Let me compute.\n<|python_tag|>wolfram_alpha.call(query='integral of x^2'); \
             {\"name\": \"get_time\", \"parameters\": {}}",
        );
        assert_eq!(
            calls(&ev),
            vec![
                (
                    "wolfram_alpha".to_string(),
                    json!({"query": "integral of x^2"})
                ),
                ("get_time".to_string(), json!({})),
            ],
            "{grammar}"
        );
        assert_eq!(text_of(&ev), "Let me compute.\n");
    }
}

#[test]
fn the_call_limit_trips_at_the_byte_that_exceeds_it() {
    let input = "<|tool_call>call:write{body:<|\"|>0123456789abcdef<|\"|>}<tool_call|>";
    let n = input.len();
    for max in [30, 40, n - 1, n] {
        let ev = run(
            "gemma4",
            &limited(Limits::new().with_max_call_bytes(max)),
            input,
        );
        if max >= n {
            assert_eq!(calls(&ev).len(), 1);
        } else {
            assert!(calls(&ev).is_empty());
            assert_eq!(
                diagnostics_of(&ev),
                vec![(DiagnosticKind::Limit, max as u64)]
            );
            assert_eq!(text_of(&ev), input);
        }
    }
}

#[test]
fn the_depth_limit_trips_at_the_bracket_that_exceeds_it() {
    for (format, input) in [
        ("pythonic", "[f(a=[[{'k': [1]}]])]"),
        ("gemma4", "<|tool_call>call:f{a:[[{k:[1]}]]}<tool_call|>"),
    ] {
        // the arguments object and four containers in it
        for max in [2, 3, 4, 5] {
            let ev = run(format, &limited(Limits::new().with_max_depth(max)), input);
            if max >= 5 {
                assert_eq!(calls(&ev).len(), 1, "{format}");
            } else {
                // the opening bracket of container number `max` inside the
                // arguments
                let at = input
                    .char_indices()
                    .filter(|&(k, c)| {
                        (c == '[' || c == '{') && k > input.find(['(', '{']).unwrap_or(0)
                    })
                    .nth(max - 1)
                    .map(|(k, _)| k as u64)
                    .expect("bracket");
                assert_eq!(
                    diagnostics_of(&ev),
                    vec![(DiagnosticKind::Limit, at)],
                    "{format} {max}"
                );
                assert_eq!(text_of(&ev), input);
            }
        }
    }
}

#[test]
fn a_truncated_call_comes_back_as_text() {
    for (format, input) in [
        ("pythonic", "[f(s='''abc"),
        ("olmo3", "<function_calls>f(a=1, b=[2,"),
        (
            "functiongemma",
            "<start_function_call>call:f{s:<escape>ab<esc",
        ),
        ("gemma4", "<|tool_call>call:f{s:<|\"|>ab<|\"|>}"),
    ] {
        let ev = run(format, &seeded(), input);
        assert!(calls(&ev).is_empty(), "{format}");
        assert_eq!(text_of(&ev), input, "{format}");
        assert_eq!(diagnostics_of(&ev).len(), 1, "{format}: {ev:?}");
    }
}

// ------------------------------------------------------------ random calls

use toolscan_testkit::rng::Rng;

/// Characters strings are drawn from: quotes, backslashes, the bytes of
/// the delimiters, brackets, whitespace and control characters, non-ASCII.
const CHARS: &[char] = &[
    'a', 'Z', '0', ' ', '\'', '"', '\\', '<', '|', '>', '{', '}', '[', ']', '(', ')', ',', ':',
    '=', '\n', '\t', '\r', '\u{1}', 'é', '東', '京', '😀', 'e', 'x', 'u', 'N',
];

fn random_string(rng: &mut Rng) -> String {
    (0..rng.below(8))
        .map(|_| CHARS[rng.below(CHARS.len())])
        .collect()
}

/// A bare key: letters, digits and inner spaces.
fn random_key(rng: &mut Rng) -> String {
    let mut k: String = (0..1 + rng.below(6))
        .map(|_| ['k', 'Q', '7', '_', ' ', 'é'][rng.below(6)])
        .collect();
    k = k.trim().to_string();
    if k.is_empty() {
        k.push('k');
    }
    k
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 5 } else { 7 }) {
        0 => Value::String(random_string(rng)),
        1 => json!(rng.below(2000) as i64 - 1000),
        2 => json!((rng.below(4000) as f64 - 2000.0) / 64.0),
        3 => json!([true, false][rng.below(2)]),
        4 => Value::Null,
        5 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|_| (random_key(rng), random_value(rng, depth + 1)))
                .collect(),
        ),
    }
}

/// A Python string literal of `s` in a random quoting, escaped as needed.
fn py_string(rng: &mut Rng, s: &str) -> String {
    let q = ['\'', '"'][rng.below(2)];
    let triple = rng.below(3) == 0;
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' if !triple => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' if rng.below(2) == 0 => out.push_str("\\t"),
            '\u{1}' => out.push_str("\\x01"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if !c.is_ascii() && rng.below(3) == 0 => {
                let n = c as u32;
                if n > 0xFFFF {
                    out.push_str(&format!("\\U{n:08x}"));
                } else {
                    out.push_str(&format!("\\u{n:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    let quotes: String = std::iter::repeat_n(q, if triple { 3 } else { 1 }).collect();
    format!("{quotes}{out}{quotes}")
}

/// `v` in Python's notation (JSON's literals too where `json_literals`).
fn py_value(rng: &mut Rng, v: &Value, json_literals: bool) -> String {
    let sep = [",", ", ", " ,\n "][rng.below(3)];
    match v {
        Value::String(s) => py_string(rng, s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => match (json_literals && rng.below(2) == 0, b) {
            (true, b) => b.to_string(),
            (false, true) => "True".into(),
            (false, false) => "False".into(),
        },
        Value::Null if json_literals && rng.below(2) == 0 => "null".into(),
        Value::Null => "None".into(),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|x| py_value(rng, x, json_literals))
                .collect();
            if rng.below(3) == 0 {
                // a tuple: one item needs its comma
                let comma = if parts.len() == 1 { "," } else { "" };
                format!("({}{comma})", parts.join(sep))
            } else {
                format!("[{}]", parts.join(sep))
            }
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", py_string(rng, k), py_value(rng, x, json_literals)))
                .collect();
            format!("{{{}}}", parts.join(sep))
        }
    }
}

/// `v` in the brace notation, strings between `delim`s.
fn brace_value(v: &Value, delim: &str) -> String {
    match v {
        Value::String(s) => format!("{delim}{s}{delim}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(|x| brace_value(x, delim)).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{k}:{}", brace_value(x, delim)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// Random arguments: identifiers as keys (they are keyword names too).
fn random_args(rng: &mut Rng) -> serde_json::Map<String, Value> {
    (0..rng.below(4))
        .map(|i| (format!("k{i}"), random_value(rng, 0)))
        .collect()
}

#[test]
fn random_calls_in_every_notation_give_their_arguments() {
    for seed in 0..150 {
        let mut rng = Rng::new(seed);
        let args = random_args(&mut rng);
        let expect = vec![("f".to_string(), Value::Object(args.clone()))];
        let kwargs = |rng: &mut Rng, json_literals: bool| {
            let parts: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k}={}", py_value(rng, v, json_literals)))
                .collect();
            parts.join(", ")
        };
        let brace = |delim: &str| {
            let parts: Vec<String> = args
                .iter()
                .map(|(k, v)| format!("{k}:{}", brace_value(v, delim)))
                .collect();
            parts.join(",")
        };
        let no_delims = |delim: &str| !args.values().any(|v| v.to_string().contains(delim));
        let mut inputs = vec![
            (
                "pythonic",
                format!("Sure. [f({})] Done.", kwargs(&mut rng, false)),
            ),
            (
                "olmo3",
                format!(
                    "<function_calls>f({})</function_calls>",
                    kwargs(&mut rng, true)
                ),
            ),
            (
                "lfm2",
                format!(
                    "<|tool_call_start|>[f({})]<|tool_call_end|>",
                    kwargs(&mut rng, false)
                ),
            ),
        ];
        // (a string holding the delimiter cannot be written in that notation)
        if no_delims("<escape>") {
            inputs.push((
                "functiongemma",
                format!(
                    "<start_function_call>call:f{{{}}}<end_function_call>",
                    brace("<escape>")
                ),
            ));
        }
        if no_delims("<|\\\"|>") {
            inputs.push((
                "gemma4",
                format!("<|tool_call>call:f{{{}}}<tool_call|>", brace("<|\"|>")),
            ));
        }
        for (format, input) in inputs {
            if std::env::var_os("PRINT_INPUTS").is_some() {
                eprintln!("{format}: {input}");
            }
            let ev = run(format, &seeded(), &input);
            assert_eq!(calls(&ev), expect, "{format} (seed {seed}): {input:?}");
            assert!(diagnostics_of(&ev).is_empty(), "{format}: {input:?}");
        }
    }
}

/// Damaged calls: bytes of each sample replaced, dropped or repeated, and
/// cut short. Whatever they hold, every chunking and API gives the same
/// events, the event contract holds, and `parse` agrees.
#[test]
fn damaged_calls_keep_the_contract_under_every_chunking() {
    const NOISE: &[u8] = b"'\"\\()[]{},:=<|>_ xNe1.-\n";
    let samples = samples();
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed);
        let (format, input, _) = &samples[rng.below(samples.len())];
        let mut bytes = input.as_bytes().to_vec();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len());
            match rng.below(4) {
                0 => bytes[at] = NOISE[rng.below(NOISE.len())],
                1 => {
                    bytes.remove(at);
                }
                2 => bytes.insert(at, NOISE[rng.below(NOISE.len())]),
                _ => bytes.truncate(at),
            }
            if bytes.is_empty() {
                bytes.push(b'[');
            }
        }
        let input = String::from_utf8_lossy(&bytes).into_owned();
        for grammar in [*format, "auto"] {
            run(grammar, &seeded(), &input);
        }
    }
}

/// Under `auto`, markers that look alike are told apart: Gemma 4's
/// `<|tool_call>` and Hermes' `<tool_call>`, Olmo 3's and Claude's
/// `<function_calls>` (by the body's first byte), and Llama's
/// `<|python_tag|>` with a call object or a built-in tool.
#[test]
fn auto_tells_look_alike_markers_apart() {
    let input = "<|tool_call>call:a{x:1}<tool_call|>\n\
                 <tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 2}}</tool_call>\n\
                 <function_calls>c(x=3)</function_calls>\n\
                 <function_calls><invoke name=\"d\"><parameter name=\"x\">4</parameter></invoke></function_calls>\n\
                 <|python_tag|>e.call(x=5)\n\
                 <|tool_call_start|>[f(x=6)]<|tool_call_end|>\n\
                 <start_function_call>call:g{x:7}<end_function_call>\n\
                 <|python_start|>[h(x=8)]<|python_end|>";
    let ev = run("auto", &seeded(), input);
    let got: Vec<(String, Value)> = calls(&ev);
    let want: Vec<(String, Value)> = ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), json!({"x": i + 1})))
        .collect();
    assert_eq!(got, want);
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
    assert_eq!(text_of(&ev).trim(), "");
}

/// LFM2 asked for JSON writes a list of call objects between its tokens.
#[test]
fn lfm2_reads_a_list_of_json_call_objects_too() {
    for grammar in ["lfm2", "auto"] {
        let ev = run(
            grammar,
            &seeded(),
            "<|tool_call_start|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京\"}}, \
             {\"name\": \"get_time\", \"arguments\": {}}]<|tool_call_end|>Checking.",
        );
        assert_eq!(
            calls(&ev),
            vec![
                ("get_weather".to_string(), json!({"city": "東京"})),
                ("get_time".to_string(), json!({})),
            ],
            "{grammar}"
        );
        assert_eq!(text_of(&ev), "Checking.");
        assert!(diagnostics_of(&ev).is_empty());
    }
}

/// Every prefix of a call, cut after its opening marker and before the
/// byte that completes it, is a truncated call: no call, its bytes back as
/// text, one `truncated` diagnostic, `finish_reason: length`. From that
/// byte on, the call is there. (The byte is where byte-by-byte feeding
/// emits `tool_call_end`.)
#[test]
fn every_cut_inside_a_call_is_a_truncated_call() {
    use toolscan::FinishReason;
    let markers = [
        ("olmo3", "<function_calls>"),
        ("lfm2", "<|tool_call_start|>"),
        ("gemma-tool-code", "```tool_code"),
        ("functiongemma", "<start_function_call>"),
        ("gemma4", "<|tool_call>"),
    ];
    for (format, input, _) in samples() {
        let Some((_, marker)) = markers.iter().find(|(f, _)| *f == format) else {
            continue; // (a bare `[` is silent until a key shows)
        };
        let bytes = input.as_bytes();
        let mut checked = 0;
        let mut p = chunk::parser(format, seeded());
        let complete = (0..bytes.len())
            .find(|&k| {
                p.feed(&bytes[k..k + 1])
                    .iter()
                    .any(|e| matches!(e, Event::ToolCallEnd { .. }))
            })
            .map(|k| k + 1)
            .expect("the call completes");
        for cut in marker.len() + 1..bytes.len() {
            let Ok(prefix) = std::str::from_utf8(&bytes[..cut]) else {
                continue;
            };
            let mut p = chunk::parser(format, seeded());
            let mut ev = p.feed(prefix.as_bytes());
            ev.extend(p.finish());
            let finish = ev.iter().find_map(|e| match e {
                Event::Done { finish_reason } => Some(*finish_reason),
                _ => None,
            });
            checked += 1;
            if cut < complete {
                assert!(calls(&ev).is_empty(), "{format} cut {cut}");
                assert_eq!(text_of(&ev), prefix, "{format} cut {cut}");
                assert_eq!(
                    diagnostics_of(&ev),
                    vec![(DiagnosticKind::Truncated, cut as u64)],
                    "{format} cut {cut}: {prefix:?}"
                );
                assert_eq!(finish, Some(FinishReason::Length), "{format} cut {cut}");
            } else {
                assert_eq!(calls(&ev).len(), 1, "{format} cut {cut}: {prefix:?}");
                assert_eq!(finish, Some(FinishReason::ToolCalls), "{format} cut {cut}");
            }
        }
        assert!(checked > 50, "{format}: {checked} cuts");
    }
}

/// A bracket in prose before a long word (a link, say) is text, without
/// a diagnostic: a word too long to be a name there is not a limit hit.
#[test]
fn a_long_word_in_brackets_is_prose() {
    for n in [300, 400, 5000] {
        let input = format!(
            "See [https://example.com/{}] and [{}(x=1)] ok",
            "a".repeat(n),
            "b".repeat(n)
        );
        let ev = run("pythonic", &seeded(), &input);
        assert_eq!(text_of(&ev), input);
        assert!(
            diagnostics_of(&ev).is_empty(),
            "{n}: {:?}",
            diagnostics_of(&ev)
        );
    }
    // a definite opener still reports the limit
    let input = format!("<function_calls>{}(x=1)</function_calls>", "b".repeat(400));
    let ev = run("olmo3", &seeded(), &input);
    assert_eq!(diagnostics_of(&ev).len(), 1);
    assert_eq!(diagnostics_of(&ev)[0].0, DiagnosticKind::Limit);
}
