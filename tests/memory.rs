//! What the parser allocates, counted by a global allocator that keeps
//! per-thread counts (tests run on several threads at once):
//!
//! - the text path allocates nothing per feed through the sink API;
//! - 100 MB of prose leave the peak heap under 1 MB beyond the chunk;
//! - one call with a 1 MB argument peaks at most 2.5× the call;
//! - an unclosed raw parameter value peaks within the call limit (its
//!   bytes are kept once, not once more as the value);
//! - so does a string-typed one, which streams as argument deltas while
//!   it arrives; dispatching it costs one copy of its arguments text;
//! - memory does not grow with the number of calls, nor with blocks that
//!   fail: it is O(largest call), not O(response).

use toolscan::{
    sink, DiagnosticKind, Event, EventRef, IdMint, Limits, Options, Parser, Registry, Tools,
};
use toolscan_testkit::alloc::{mark, since, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Deterministic prose with characters that start markers (`<`, `[`, a
/// backtick, `T`, `:`), partial markers and non-ASCII text, written into
/// `buf` (reused) without allocating.
struct Prose {
    state: u64,
}

impl Prose {
    const WORDS: [&'static str; 16] = [
        "the ",
        "model ",
        "<to",
        "ast> ",
        "[TOOL",
        " Zürich ",
        "東京 ",
        "TOOL ",
        "a: ",
        "b`c ",
        "<tool_ca",
        "ll ",
        "[THINK ",
        "done.\n",
        "<｜tool ",
        "x ",
    ];

    fn fill(&mut self, buf: &mut String, size: usize) {
        buf.clear();
        while buf.len() + 16 < size {
            self.state = self
                .state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            buf.push_str(Self::WORDS[(self.state >> 60) as usize]);
        }
    }
}

fn parser(format: &str) -> Parser {
    Parser::new(
        Registry::builtin().grammar(format).expect("built in"),
        Options::new().with_ids(IdMint::Seeded(0)),
    )
}

#[test]
fn the_text_path_allocates_nothing_per_feed() {
    for format in ["hermes", "auto", "deepseek-v3.1", "tool-call-json"] {
        let mut p = parser(format);
        let mut text = 0usize;
        let mut s = sink::from_fn(|e: EventRef<'_>| {
            if let EventRef::Text(t) = e {
                text += t.len();
            }
        });
        let mut prose = Prose { state: 7 };
        let mut buf = String::with_capacity(1 << 16);
        prose.fill(&mut buf, 1 << 16);
        // Warm up: the pending buffer reaches its size.
        for piece in buf.as_bytes().chunks(4) {
            p.feed_with(piece, &mut s);
        }
        let m = mark();
        let mut feeds = 0;
        for _ in 0..4 {
            for piece in buf.as_bytes().chunks(4) {
                p.feed_with(piece, &mut s);
                feeds += 1;
            }
            let mut at = 0;
            while at < buf.len() {
                let mut end = (at + 5).min(buf.len());
                while !buf.is_char_boundary(end) {
                    end += 1;
                }
                p.feed_str_with(&buf[at..end], &mut s);
                at = end;
                feeds += 1;
            }
        }
        let (allocs, _) = since(m);
        assert_eq!(allocs, 0, "{format}: {allocs} allocations in {feeds} feeds");
        p.finish_with(&mut s);
        assert!(text > 4 * (1 << 16), "{format}: {text}");
    }
}

/// `feed`, the convenience API, returns the one event of a token-sized
/// chunk inline: no allocation either (a `Vec` cost one per chunk).
#[test]
fn the_convenience_feed_allocates_nothing_per_token() {
    for format in ["hermes", "auto"] {
        let mut p = parser(format);
        let mut prose = Prose { state: 11 };
        let mut buf = String::with_capacity(1 << 16);
        prose.fill(&mut buf, 1 << 16);
        let pieces: Vec<&[u8]> = buf.as_bytes().chunks(4).collect();
        let (warm, timed) = pieces.split_at(pieces.len() / 2);
        for piece in warm {
            drop(p.feed(piece));
        }
        let m = mark();
        let mut text = 0usize;
        for piece in timed {
            for event in p.feed(piece) {
                if let Event::Text { delta } = event {
                    text += delta.len();
                }
            }
        }
        let (allocs, _) = since(m);
        assert_eq!(
            allocs,
            0,
            "{format}: {allocs} allocations in {} feeds",
            timed.len()
        );
        assert!(text > (1 << 14), "{format}: {text}");
    }
}

#[test]
fn one_hundred_megabytes_of_prose_stay_within_a_megabyte() {
    let mut p = parser("auto");
    let mut s = sink::Discard;
    let mut prose = Prose { state: 1 };
    let mut buf = String::with_capacity(1 << 16);
    let m = mark();
    let mut fed = 0;
    while fed < 100 << 20 {
        prose.fill(&mut buf, 1 << 16);
        p.feed_str_with(&buf, &mut s);
        fed += buf.len();
    }
    p.finish_with(&mut s);
    let (_, peak) = since(m);
    assert!(peak < 1 << 20, "peak {peak} bytes over 100 MB of prose");
}

#[test]
fn a_one_megabyte_argument_peaks_under_two_and_a_half_times_the_call() {
    let content: String = "0123456789abcdef\\n\\\"ü".repeat((1 << 20) / 21);
    let call = format!(
        "<tool_call>{{\"name\": \"write\", \"arguments\": {{\"content\": \"{content}\"}}}}</tool_call>"
    );
    for chunk in [4096, 1 << 16] {
        let mut p = parser("hermes");
        let mut args = 0usize;
        let mut ended = 0;
        let mut s = sink::from_fn(|e: EventRef<'_>| match e {
            EventRef::ToolCallArgs { delta, .. } => args += delta.len(),
            EventRef::ToolCallEnd { arguments, .. } => ended = arguments.len(),
            _ => {}
        });
        let m = mark();
        for piece in call.as_bytes().chunks(chunk) {
            p.feed_with(piece, &mut s);
        }
        p.finish_with(&mut s);
        let (_, peak) = since(m);
        assert!(ended > 1 << 20 && args == ended, "{ended} {args}");
        let ratio = peak as f64 / call.len() as f64;
        assert!(
            ratio <= 2.5,
            "chunk {chunk}: peak {peak} = {ratio:.2}× the call"
        );
    }
}

#[test]
fn an_unclosed_parameter_value_peaks_within_the_call_limit() {
    const LIMIT: usize = 4 << 20;
    let limits = Limits::new().with_max_call_bytes(LIMIT);
    let line = "let x = \"<value>\"; // a line of code, never closed\n";
    for (format, head) in [
        (
            "qwen3-coder",
            "<tool_call>\n<function=write>\n<parameter=content>\n",
        ),
        (
            "glm47",
            "<tool_call>write<arg_key>content</arg_key><arg_value>",
        ),
    ] {
        // Past the limit (a `limit` diagnostic), and ended by the stream
        // inside the value (`truncated`).
        for (size, kind) in [
            (LIMIT + (LIMIT >> 1), DiagnosticKind::Limit),
            (LIMIT - (LIMIT >> 2), DiagnosticKind::Truncated),
        ] {
            let body = line.repeat(size / line.len());
            let mut p = Parser::new(
                Registry::builtin().grammar(format).expect("built in"),
                Options::new()
                    .with_ids(IdMint::Seeded(0))
                    .with_limits(limits),
            );
            let mut text = 0usize;
            let mut kinds = Vec::new();
            let mut s = sink::from_fn(|e: EventRef<'_>| match e {
                EventRef::Text(t) => text += t.len(),
                EventRef::Diagnostic(d) => kinds.push(d.kind),
                _ => {}
            });
            let m = mark();
            p.feed_str_with(head, &mut s);
            for piece in body.as_bytes().chunks(1 << 16) {
                p.feed_with(piece, &mut s);
            }
            p.finish_with(&mut s);
            let (_, peak) = since(m);
            assert_eq!(text, head.len() + body.len(), "{format}: nothing lost");
            assert_eq!(kinds, [kind], "{format}");
            assert!(
                peak as usize <= LIMIT + (64 << 10),
                "{format}, {size} bytes of value: peak {peak} = {:.2}× the call limit",
                peak as f64 / LIMIT as f64
            );
        }
    }
}

/// Parameter formats, each with the markup before a `write` call's
/// `content` value and the markup that closes the value and the call.
const STRING_FORMATS: [(&str, &str, &str); 4] = [
    (
        "qwen3-coder",
        "<tool_call>\n<function=write>\n<parameter=content>\n",
        "\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "glm47",
        "<tool_call>write<arg_key>content</arg_key><arg_value>",
        "</arg_value></tool_call>",
    ),
    (
        "minimax-m2",
        "<minimax:tool_call><invoke name=\"write\"><parameter name=\"content\">",
        "</parameter></invoke></minimax:tool_call>",
    ),
    (
        // Decodes entities: a value without `&` is its input as it stands.
        "claude-xml",
        "<function_calls><invoke name=\"write\"><parameter name=\"content\">",
        "</parameter></invoke></function_calls>",
    ),
];

/// A parser whose tools say `write`'s `content` is a string.
fn string_parser(format: &str, limit: usize) -> Parser {
    let tools = serde_json::json!([{
        "type": "function",
        "function": {
            "name": "write",
            "parameters": {
                "type": "object",
                "properties": { "content": { "type": "string" } }
            }
        }
    }]);
    Parser::new(
        Registry::builtin().grammar(format).expect("built in"),
        Options::new()
            .with_ids(IdMint::Seeded(0))
            .with_tools(Tools::from_json(&tools).expect("tools"))
            .with_limits(Limits::new().with_max_call_bytes(limit)),
    )
}

/// A line of code with bytes a JSON string escapes (quotes, a newline).
const CODE_LINE: &str = "let x = \"<value>\"; // a line of code, never closed\n";

#[test]
fn an_unclosed_string_value_streams_and_peaks_within_the_call_limit() {
    const LIMIT: usize = 4 << 20;
    for (format, head, _) in STRING_FORMATS {
        // Past the limit (a `limit` diagnostic), and ended by the stream
        // inside the value (`truncated`).
        for (size, kind) in [
            (LIMIT + (LIMIT >> 1), DiagnosticKind::Limit),
            (LIMIT - (LIMIT >> 2), DiagnosticKind::Truncated),
        ] {
            let body = CODE_LINE.repeat(size / CODE_LINE.len());
            let mut p = string_parser(format, LIMIT);
            let mut text = 0usize;
            let mut args = 0usize;
            let mut kinds = Vec::new();
            let mut s = sink::from_fn(|e: EventRef<'_>| match e {
                EventRef::Text(t) => text += t.len(),
                EventRef::ToolCallArgs { delta, .. } => args += delta.len(),
                EventRef::Diagnostic(d) => kinds.push(d.kind),
                _ => {}
            });
            let m = mark();
            p.feed_str_with(head, &mut s);
            for piece in body.as_bytes().chunks(1 << 16) {
                p.feed_with(piece, &mut s);
            }
            p.finish_with(&mut s);
            let (_, peak) = since(m);
            assert_eq!(text, head.len() + body.len(), "{format}: nothing lost");
            assert_eq!(kinds, [kind], "{format}");
            // It streamed: the value's deltas came as it arrived.
            assert!(
                args > size.min(LIMIT) / 2,
                "{format}: {args} bytes of deltas"
            );
            let ratio = peak as f64 / LIMIT as f64;
            assert!(
                ratio <= 1.2,
                "{format}, {size} bytes of value: peak {peak} = {ratio:.2}× the call limit"
            );
        }
    }
}

/// While a long string value streams, the call costs its bytes once (the
/// pending input, in a buffer that grows by doubling); when it is
/// dispatched, `tool_call_end` borrows the whole arguments text, made then:
/// one copy of the escaped value besides its input, for that moment only.
#[test]
fn a_dispatched_string_value_costs_one_copy_of_its_arguments() {
    const LIMIT: usize = 4 << 20;
    for (format, head, tail) in STRING_FORMATS {
        let body = CODE_LINE.repeat((LIMIT - (LIMIT >> 2)) / CODE_LINE.len());
        let call = body.len() + head.len() + tail.len();
        let mut p = string_parser(format, LIMIT);
        // Room made before measuring, so that keeping what the events
        // carry costs the measurement nothing.
        let mut args = String::with_capacity(2 * LIMIT);
        let mut arguments = String::with_capacity(2 * LIMIT);
        let mut s = sink::from_fn(|e: EventRef<'_>| match e {
            EventRef::ToolCallArgs { delta, .. } => args.push_str(delta),
            EventRef::ToolCallEnd { arguments: a, .. } => arguments.push_str(a),
            _ => {}
        });
        let m = mark();
        p.feed_str_with(head, &mut s);
        for piece in body.as_bytes().chunks(1 << 16) {
            p.feed_with(piece, &mut s);
        }
        let (_, streaming) = since(m);
        p.feed_str_with(tail, &mut s);
        let (_, dispatching) = since(m);
        p.finish_with(&mut s);
        assert_eq!(args, arguments, "{format}: the deltas are the arguments");
        let value: serde_json::Value = serde_json::from_str(&arguments).expect(format);
        let content = value["content"].as_str().unwrap_or_default();
        // (Qwen's template: the newline before the closing tag is markup.)
        assert!(
            content == body || content == &body[..body.len() - 1],
            "{format}"
        );
        // Within the limit, as an unclosed value (the buffer's capacity is
        // a power of two: 4/3 of this call).
        let streaming_ratio = streaming as f64 / LIMIT as f64;
        assert!(
            streaming_ratio <= 1.2,
            "{format}: streaming peak {streaming_ratio:.2}× the limit"
        );
        // Dispatch adds the arguments text (the value escaped: a few
        // percent longer than its input), and nothing else.
        let extra = (dispatching - streaming) as f64 / arguments.len() as f64;
        assert!(
            extra <= 1.05,
            "{format}: dispatch adds {extra:.2}× the arguments"
        );
        eprintln!(
            "{format}: peak {:.2}× the call while streaming, {:.2}× at dispatch",
            streaming as f64 / call as f64,
            dispatching as f64 / call as f64
        );
    }
}

#[test]
fn memory_does_not_grow_with_calls_or_failed_blocks() {
    for (format, unit) in [
        (
            "hermes",
            "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>\n",
        ),
        ("function-tag", "<function=a>{x"),
        ("mistral-v11", "[TOOL_CALLS]f[CALL_ID]abc123xyz[ARGS]{}"),
        ("json", "{\"name\": \"f\", \"arguments\": {}} "),
    ] {
        let mut p = parser(format);
        let mut calls = 0;
        let mut s = sink::from_fn(|e: EventRef<'_>| {
            if let EventRef::ToolCallEnd { .. } = e {
                calls += 1;
            }
        });
        let block = unit.repeat(1000);
        // Warm up, then the live heap after 200 000 more units must be
        // what it was after the first thousand.
        p.feed_str_with(&block, &mut s);
        let before = mark().live();
        for _ in 0..200 {
            p.feed_str_with(&block, &mut s);
        }
        let after = mark().live();
        assert!(
            after - before < 4096,
            "{format}: live heap grew by {} bytes",
            after - before
        );
        p.finish_with(&mut s);
        if !unit.contains("{x") {
            assert_eq!(calls, 201_000, "{format}");
        }
    }
}
