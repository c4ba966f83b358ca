//! Guarantees of the renderer and of calls held inside reasoning (issue
//! 29, round 4, items 12 and 13).
//!
//! - Rendering is iterative: a response of thousands of calls, or one
//!   call of thousands of keys, renders on a thread with a small stack
//!   (no frame per call or per key), or is refused by a limit with a
//!   [`RenderError::Limit`] — never a stack overflow.
//! - Rendering is linear: what it allocates at 2n calls (or keys) is
//!   about twice what it allocates at n (counted by the testkit's
//!   counting allocator, never timed).
//! - Calls held inside a reasoning block cost the same order fed in one
//!   chunk as in small chunks: the bytes the parser copies and scans
//!   (counted by the allocator) grow linearly with the calls, and the
//!   events are the same.

use serde_json::json;
use toolscan::{render::Call, Event, Format, Options, Parser, Registry, RenderError, RenderLimit};
use toolscan_testkit::alloc::{mark, since, Counting};
use toolscan_testkit::check::same_coalesced;
use toolscan_testkit::chunk::{self, Api, Plan};

#[global_allocator]
static ALLOC: Counting = Counting;

/// A thread's stack far smaller than a test thread's 2 MiB: a frame per
/// call or key would overflow it long before a thousand.
const SMALL_STACK: usize = 256 << 10;

fn format(name: &str) -> Format {
    Registry::builtin()
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("`{name}` is built in"))
}

/// `n` calls of `get_weather`, each with its own city and id.
fn calls(n: usize) -> Vec<Call> {
    (0..n)
        .map(|i| {
            Call::from_value("get_weather", &json!({"city": format!("city {i}")}))
                .expect("an object")
                .with_id(format!("call_{i}"))
        })
        .collect()
}

/// One call of `write` with `n` string parameters.
fn keys(n: usize) -> Vec<Call> {
    let args: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| (format!("key_{i}"), json!(format!("value {i}"))))
        .collect();
    vec![Call::from_value("write", &serde_json::Value::Object(args)).expect("an object")]
}

/// Runs `f` on a thread with a small stack (a panic, not an abort, if it
/// fails; an overflow would abort the whole test binary).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("the rendering returned")
}

/// Renders `calls` in `name` on a small stack: what `render` answers.
fn render_small(name: &'static str, calls: Vec<Call>) -> Result<String, RenderError> {
    on_small_stack(move || format(name).render("Let me check.\n", &calls, None))
}

/// The calls `out` reads back as in `name`: (name, arguments as JSON).
fn read_back(name: &str, out: &str) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    let grammar = Registry::builtin().grammar(name).expect("built in");
    toolscan::parse(grammar, toolscan::Options::default(), out.as_bytes())
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.parse().expect("JSON")))
        .collect()
}

fn wanted(calls: &[Call]) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.parse().expect("JSON")))
        .collect()
}

// The formats of the issue whose history overflowed a proxy's stack: one
// assistant message of many `tool_calls` (hermes, as `hermes.jinja` writes
// `<tool_call>` blocks; deepseek-v3.2; kimi-k3; qwen3-coder).
#[test]
fn five_thousand_calls_render_on_a_small_stack() {
    for name in ["hermes", "deepseek-v3.2", "kimi-k3", "qwen3-coder"] {
        let want = calls(5_000);
        let out =
            render_small(name, want.clone()).unwrap_or_else(|e| panic!("{name}: 5 000 calls: {e}"));
        assert_eq!(read_back(name, &out), wanted(&want), "{name}");
    }
}

// One call of 5 000 keys, in the formats that write a tag per key
// (qwen3-coder's `<parameter=KEY>`, glm's `<arg_key>`, claude-xml's
// `<parameter name="KEY">`).
#[test]
fn a_call_of_five_thousand_keys_renders_on_a_small_stack() {
    for name in ["qwen3-coder", "glm45", "claude-xml"] {
        let want = keys(5_000);
        let out =
            render_small(name, want.clone()).unwrap_or_else(|e| panic!("{name}: 5 000 keys: {e}"));
        assert_eq!(read_back(name, &out), wanted(&want), "{name}");
    }
}

// Every built-in format: many calls, or many keys, render or are refused
// with an error — on a small stack, never an overflow.
#[test]
fn every_format_answers_thousands_of_calls_and_keys_on_a_small_stack() {
    for f in Registry::builtin().formats() {
        let name = f.name().to_owned();
        for (what, response) in [("calls", calls(2_000)), ("keys", keys(2_000))] {
            let f = f.clone();
            let want = wanted(&response);
            let got = on_small_stack(move || f.render("", &response, None));
            if let Ok(out) = got {
                assert_eq!(read_back(&name, &out), want, "{name}: {what}");
            }
        }
    }
}

#[test]
fn a_response_over_a_limit_is_refused_by_that_limit() {
    let hermes = format("hermes");
    let over = RenderLimit::Calls.max() + 1;
    assert_eq!(
        hermes.render("", &calls(over), None),
        Err(RenderError::Limit(RenderLimit::Calls))
    );
    let over = RenderLimit::Params.max() + 1;
    assert_eq!(
        format("qwen3-coder").render("", &keys(over), None),
        Err(RenderError::Limit(RenderLimit::Params))
    );
    let text = "x".repeat(RenderLimit::Bytes.max() + 1);
    assert_eq!(
        hermes.render(&text, &calls(1), None),
        Err(RenderError::Limit(RenderLimit::Bytes))
    );
    let message = RenderError::Limit(RenderLimit::Calls).to_string();
    assert!(message.contains("10000 calls"), "{message}");
}

/// What rendering `response` in `name` allocates: (allocations, peak
/// live bytes above the start).
fn cost(name: &str, response: &[Call]) -> (u64, i64) {
    let f = format(name);
    let m = mark();
    let out = f.render("", response, None).expect("renders");
    let c = since(m);
    drop(out);
    c
}

/// Asserts that doubling the size about doubles the cost — the square
/// would quadruple it (a fixed cost, the grammar's, and buffers that grow
/// by doubling keep the ratio off 2 either way).
fn assert_linear(what: &str, small: (u64, i64), big: (u64, i64)) {
    let allocs = big.0 as f64 / small.0 as f64;
    let peak = big.1 as f64 / small.1 as f64;
    assert!(
        (1.3..2.8).contains(&allocs) && (1.3..2.8).contains(&peak),
        "{what}: 2n costs {allocs:.2}× the allocations and {peak:.2}× the peak of n \
         ({small:?} → {big:?})"
    );
}

#[test]
fn rendering_costs_grow_linearly_with_the_calls() {
    for name in ["hermes", "deepseek-v3.2", "qwen3-coder"] {
        let small = cost(name, &calls(1_000));
        let big = cost(name, &calls(2_000));
        assert_linear(name, small, big);
    }
}

#[test]
fn rendering_costs_grow_linearly_with_the_keys() {
    for name in ["qwen3-coder", "glm45", "claude-xml", "hermes"] {
        let small = cost(name, &keys(1_000));
        let big = cost(name, &keys(2_000));
        assert_linear(name, small, big);
    }
}

// ---------------------------------------------------------------------------
// Calls held inside reasoning: one chunk costs what small chunks cost.

/// A response of `n` calls inside reasoning, with its options: `open`
/// the unclosed `<think>` (or none, the stream starting in reasoning),
/// `closed` a `</think>` and text after the calls.
fn held(call: &str, n: usize, open: bool, closed: bool) -> (Vec<u8>, Options) {
    let mut s = String::new();
    if open {
        s.push_str("<think>Let me call them all.\n");
    }
    for _ in 0..n {
        s.push_str(call);
    }
    if closed {
        s.push_str("</think>\nDone.");
    }
    let options = chunk::seeded_options().with_starts_in_reasoning(!open);
    (s.into_bytes(), options)
}

/// The events of `input` fed in chunks of `size`, and the bytes the
/// search for a reasoning closer read meanwhile.
fn held_run(format: &str, input: &[u8], options: &Options, size: usize) -> (Vec<Event>, u64) {
    let g = Registry::builtin().grammar(format).expect("built in");
    let before = toolscan::work::closer_search_bytes();
    let events = chunk::feed(
        Parser::new(g, options.clone()),
        Api::Sink,
        input,
        &Plan::fixed(input.len(), size),
    );
    (events, toolscan::work::closer_search_bytes() - before)
}

/// Calls inside reasoning fed in one chunk — an unclosed `<think>`, one
/// that closes after them, a stream that starts in reasoning — give the
/// events of 7-byte chunks, and the closer search reads each byte a
/// bounded number of times (it used to search the rest of the chunk for
/// each call: 2 MiB of hermes calls took 20 s). The calls are written as
/// `tool_chat_template_hermes.jinja` and `tool_chat_template_qwen3coder.jinja`
/// write them, and `tool_chat_template_llama3.1_json.jinja` its bare
/// objects; `auto` reads the hermes ones.
#[test]
fn calls_held_in_reasoning_cost_the_same_order_in_one_chunk() {
    let hermes = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n";
    let qwen = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n";
    // A bare JSON call, whose opener is read again as the body's start.
    let llama = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n";
    // Blocks that fail: each ends its hold, and the next hold of the chunk
    // must not search its rest again (found by the `held_linear` fuzz
    // target, `tests/fuzz_findings/held-failed-blocks-search-again.bin`).
    let broken =
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"max\": 2, xxxx}}\n</tool_call>\n";
    let cohere = "<|START_ACTION|>[{\"tool_name\": \"search\", \"parameters\": {\"max\": 2, xxxx}}]<|END_ACTION|>";
    // A block whose bytes are read again from the pending buffer: the kept
    // search answers for them by their place in the stream
    // (`tests/fuzz_findings/held-reread-bytes-search-again.bin`).
    let qwen_bad = "<tool_call>\n<function=calculate>\n<parameter=expression>\n2*3\n</parameter>\n\
        <parameter=scale>\n0.5\n</paramnction>\n</tool_call>\n<tool_call>\n<function=get_time>\n\
        </function>\n</tool_call>";
    let dsml = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"search\">\n\
        <｜DSML｜parameter name=\"max\" string=\"false\">10</｜DSML｜parameter>\n\
        </｜DSML｜invoke\n></｜DSML｜function_calls>";
    for (format, call) in [
        ("hermes", hermes),
        ("qwen3-coder", qwen),
        ("llama3-json", llama),
        ("auto", hermes),
        ("hermes", broken),
        ("command-r7b", cohere),
        ("qwen3-coder", qwen_bad),
        ("deepseek-v3.2", dsml),
    ] {
        for (open, closed) in [(true, false), (true, true), (false, false), (false, true)] {
            let what = format!("{format}, open {open}, closed {closed}");
            let mut costs = Vec::new();
            for n in [500, 1_000] {
                let (input, options) = held(call, n, open, closed);
                let (whole, cost) = held_run(format, &input, &options, input.len());
                let (small, _) = held_run(format, &input, &options, 7);
                same_coalesced(&whole, &small).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    cost <= 2 * input.len() as u64,
                    "{what}: {n} calls in one chunk of {} bytes: the closer search read {cost}",
                    input.len()
                );
                assert!(cost > 0, "{what}: the calls were held and searched");
                costs.push(cost);
            }
            assert!(
                costs[1] <= 3 * costs[0].max(1),
                "{what}: twice the calls, {costs:?} bytes searched"
            );
        }
    }
}
