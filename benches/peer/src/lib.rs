//! Shared pieces of the side-by-side benchmarks (`benches/peer.rs`) and of
//! the report tool (`src/main.rs`): the deterministic inputs, the one place
//! that calls toolscan ([`ours`]), and the one place that calls the peer
//! crate `tool-parser` ([`peer`]).

pub mod input {
    //! Deterministic inputs: the same bytes on every run and every machine.

    use std::ops::Range;

    /// Seed of the prose generator.
    pub const PROSE_SEED: u64 = 0x5EED_0001;
    /// Size of the marker-free prose fed in 64 KiB chunks.
    pub const PROSE_BIG: usize = 64 << 20;
    /// Size of the marker-free prose fed in 4-byte chunks.
    pub const PROSE_SMALL: usize = 1 << 20;
    /// Chunk size of the `prose_64KiB_chunks` group.
    pub const BIG_CHUNK: usize = 64 << 10;
    /// Nominal chunk size of the small-chunk groups (about one token).
    pub const SMALL_CHUNK: usize = 4;
    /// The `content` sizes of the argument groups.
    pub const ARG_SMALL: usize = 4 << 10;
    /// See [`ARG_SMALL`].
    pub const ARG_BIG: usize = 64 << 10;

    /// The workspace test kit's seeded generator (SplitMix64), with a
    /// pick from a list.
    pub struct SplitMix64(toolscan_testkit::rng::Rng);

    impl SplitMix64 {
        /// A generator from a seed.
        pub fn new(seed: u64) -> SplitMix64 {
            SplitMix64(toolscan_testkit::rng::Rng::new(seed))
        }

        /// Uniform-ish in `0..n`.
        pub fn below(&mut self, n: usize) -> usize {
            self.0.below(n)
        }

        /// One element of `items`.
        pub fn choose<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// Vocabulary of the prose. Mostly plain English, some accented and CJK
    /// words so the text has multi-byte characters at random places.
    const VOCABULARY: &[&str] = &[
        "river",
        "morning",
        "light",
        "across",
        "the",
        "the",
        "the",
        "a",
        "a",
        "of",
        "of",
        "and",
        "and",
        "to",
        "in",
        "quiet",
        "valley",
        "small",
        "town",
        "where",
        "people",
        "walk",
        "slowly",
        "through",
        "narrow",
        "streets",
        "past",
        "bakery",
        "window",
        "garden",
        "letter",
        "evening",
        "market",
        "bread",
        "coffee",
        "rain",
        "station",
        "north",
        "south",
        "old",
        "new",
        "bright",
        "was",
        "is",
        "were",
        "never",
        "often",
        "because",
        "while",
        "before",
        "after",
        "year",
        "every",
        "house",
        "paper",
        "music",
        "distance",
        "travelers",
        "remember",
        "winter",
        "summer",
        "harbor",
        "lantern",
        "bridge",
        "mountain",
        "clouds",
        "silver",
        "answer",
        "question",
        "between",
        "almost",
        "nothing",
        "everything",
        "café",
        "résumé",
        "déjà",
        "naïve",
        "élan",
        "crème",
        "brûlée",
        "fiancée",
        "東京",
        "京都",
        "駅",
        "Zürich",
        "São",
        "Paulo",
        "Ångström",
        "façade",
        "señor",
        "Kraków",
    ];

    /// What follows a word inside a sentence (weighted by repetition).
    const JOINERS: &[&str] = &[
        " ", " ", " ", " ", " ", " ", " ", " ", ", ", ", ", "; ", ": ", " - ", " — ",
    ];

    /// What ends a sentence.
    const ENDINGS: &[&str] = &[". ", ". ", ". ", ".\n", "? ", "! ", "...\n"];

    /// Bytes that could begin a marker of some built-in format (or a bare
    /// JSON call). None of them may occur in the prose.
    pub const MARKER_STARTS: &[u8] = b"<[`{";

    /// `len` bytes of English-like prose with punctuation, quotes,
    /// parentheses, newlines and non-ASCII words, and none of
    /// [`MARKER_STARTS`], nor an upper-case `TOOL`: nothing in it can begin
    /// a tool call in any format. Ends on a character boundary (the last
    /// bytes are ASCII padding to reach exactly `len`).
    pub fn prose(len: usize, seed: u64) -> String {
        let mut rng = SplitMix64::new(seed);
        let mut s = String::with_capacity(len + 64);
        while s.len() < len {
            let sentences = 2 + rng.below(6);
            for _ in 0..sentences {
                let words = 4 + rng.below(16);
                for i in 0..words {
                    let w = rng.choose(VOCABULARY);
                    let (open, close) = match rng.below(40) {
                        0 => ("\"", "\""),
                        1 => ("(", ")"),
                        2 => ("'", "'"),
                        _ => ("", ""),
                    };
                    s.push_str(open);
                    if i == 0 {
                        let mut cs = w.chars();
                        if let Some(first) = cs.next() {
                            s.extend(first.to_uppercase());
                            s.push_str(cs.as_str());
                        }
                    } else {
                        s.push_str(w);
                    }
                    s.push_str(close);
                    if i + 1 < words {
                        s.push_str(rng.choose(JOINERS));
                    }
                }
                s.push_str(rng.choose(ENDINGS));
            }
            s.push('\n');
        }
        let mut cut = len;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        while s.len() < len {
            s.push('.');
        }
        assert!(!s.bytes().any(|b| MARKER_STARTS.contains(&b)));
        assert!(!s.contains("TOOL"));
        s
    }

    /// Cuts `text` into chunks of `size` bytes, each extended to the next
    /// character boundary (so a 4-byte chunk is 4 to 7 bytes long). Every
    /// contender of a group gets the same cut list.
    pub fn cuts(text: &str, size: usize) -> Vec<Range<usize>> {
        let mut out = Vec::with_capacity(text.len() / size + 1);
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            out.push(start..end);
            start = end;
        }
        out
    }

    /// The chunks of `text` at `cuts`, as `&str`.
    pub fn slices<'a>(text: &'a str, cuts: &[Range<usize>]) -> Vec<&'a str> {
        cuts.iter().map(|r| &text[r.clone()]).collect()
    }

    /// Pieces of the file content: newlines, quotes, backslashes, tabs,
    /// braces, `<`, and non-ASCII text, so its JSON encoding has escapes.
    const CONTENT_PIECES: &[&str] = &[
        "Dear reader,\n",
        "she said \"hello\" and left.\n",
        "path = C:\\data\\notes.txt\n",
        "\tindented line with a tab\n",
        "if (a < b) { swap(a, b); }\n",
        "Grüße aus Zürich, 東京 und São Paulo — ☂\n",
        "plain words for a plain line of text\n",
        "quote \" backslash \\ newline\n",
        "emoji 😀 and accents é à ü\n",
    ];

    /// A string of exactly `len` bytes built from [`CONTENT_PIECES`].
    pub fn content(len: usize) -> String {
        let mut rng = SplitMix64::new(0xC0_4E_7E_47 ^ len as u64);
        let mut s = String::with_capacity(len + 64);
        while s.len() < len {
            s.push_str(rng.choose(CONTENT_PIECES));
        }
        let mut cut = len;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        while s.len() < len {
            s.push('x');
        }
        s
    }

    /// The `content` size of the Qwen3-Coder group.
    pub const XML_BIG: usize = 256 << 10;

    /// One Qwen3-Coder call writing `content` to `a.txt`, as its chat
    /// template writes it: each parameter value on lines of its own.
    pub fn qwen3_coder_call(content: &str) -> String {
        format!(
            "<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n\
             <parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
        )
    }

    /// One hermes / Qwen 2.5 call writing `content` to `a.txt`:
    /// `<tool_call>\n{"name": "write_file", "arguments": {...}}\n</tool_call>`.
    /// With `newlines` false the newlines around the JSON are left out.
    pub fn hermes_call(content: &str, newlines: bool) -> String {
        let nl = if newlines { "\n" } else { "" };
        let encoded = serde_json::to_string(content).expect("a string encodes");
        format!(
            "<tool_call>{nl}{{\"name\": \"write_file\", \"arguments\": \
             {{\"path\": \"a.txt\", \"content\": {encoded}}}}}{nl}</tool_call>"
        )
    }
}

pub mod ours {
    //! Every call into toolscan made by the benchmarks. Today's core has the
    //! owning `feed_into(&[u8], &mut Vec<Event>)`; the block marked
    //! `feed_bytes` and `feed_str` use the borrowing sink API, `feed_vec`
    //! the `Vec` API.

    use std::sync::Arc;

    use toolscan_core::{sink, Event, EventRef, Grammar, Options, Parser, Registry};

    /// The compiled grammar of a built-in format, or of `auto`.
    pub fn grammar(name: &str) -> Arc<Grammar> {
        Registry::builtin()
            .grammar(name)
            .unwrap_or_else(|e| panic!("toolscan grammar {name}: {e:?}"))
    }

    /// One response through toolscan. Counts the events so the work cannot
    /// be optimised away; a fresh `Run` per response.
    pub struct Run {
        parser: Parser,
        out: Vec<Event>,
        events: usize,
    }

    impl Run {
        /// A parser for one response, default options.
        pub fn new(grammar: &Arc<Grammar>) -> Run {
            Run::with(grammar, Options::default())
        }

        /// A parser for one response with these options.
        pub fn with(grammar: &Arc<Grammar>, options: Options) -> Run {
            Run {
                parser: Parser::new(Arc::clone(grammar), options),
                out: Vec::new(),
                events: 0,
            }
        }

        /// Feeds a chunk given as bytes, through the sink API (UTF-8 is
        /// checked once; events borrow their text).
        #[inline]
        pub fn feed_bytes(&mut self, chunk: &[u8]) {
            let n = &mut self.events;
            self.parser
                .feed_with(chunk, &mut sink::from_fn(|_: EventRef<'_>| *n += 1));
        }

        /// Feeds a chunk given as text, through the sink API.
        #[inline]
        pub fn feed_str(&mut self, chunk: &str) {
            let n = &mut self.events;
            self.parser
                .feed_str_with(chunk, &mut sink::from_fn(|_: EventRef<'_>| *n += 1));
        }

        /// Feeds a chunk given as bytes, through the `Vec` API (owned
        /// events, cleared after every feed as a consumer would).
        #[inline]
        pub fn feed_vec(&mut self, chunk: &[u8]) {
            self.parser.feed_into(chunk, &mut self.out);
            self.events += self.out.len();
            self.out.clear();
        }

        /// Feeds a chunk given as bytes, through the convenience `feed`
        /// (a new `Events` list of owned events for every chunk).
        #[inline]
        pub fn feed_new_vec(&mut self, chunk: &[u8]) {
            self.events += self.parser.feed(chunk).len();
        }

        /// Ends the response; the number of events it produced.
        pub fn finish(mut self) -> usize {
            self.parser.finish_into(&mut self.out);
            self.events + self.out.len()
        }
    }

    /// Every event of `chunks` fed in order, then finished. Not timed: the
    /// checks that run before the benchmarks use it.
    pub fn collect<'a>(
        grammar: &Arc<Grammar>,
        chunks: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<Event> {
        collect_with(grammar, Options::default(), chunks)
    }

    /// The same with these options.
    pub fn collect_with<'a>(
        grammar: &Arc<Grammar>,
        options: Options,
        chunks: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<Event> {
        let mut p = Parser::new(Arc::clone(grammar), options);
        let mut out = Vec::new();
        for c in chunks {
            p.feed_into(c, &mut out);
        }
        p.finish_into(&mut out);
        out
    }

    /// Options with the `write_file` tool (both parameters strings): a
    /// format whose values are raw text needs the schema to stream a
    /// string parameter as it comes.
    pub fn write_file_options() -> Options {
        let tools = toolscan_core::Tools::from_json(&serde_json::json!([{
            "type": "function",
            "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}}}}
        }]))
        .expect("the tools parse");
        let mut o = Options::default();
        o.tools = Some(tools);
        o
    }

    /// The text of `events` and the completed calls, as (name, arguments).
    pub fn summarize(events: &[Event]) -> (String, Vec<(String, serde_json::Value)>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        for e in events {
            match e {
                Event::Text { delta } => text.push_str(delta),
                Event::ToolCallEnd {
                    name, arguments, ..
                } => calls.push((
                    name.clone(),
                    serde_json::Value::Object(arguments.parse().expect("arguments are an object")),
                )),
                _ => {}
            }
        }
        (text, calls)
    }
}

pub mod peer {
    //! Every call into the peer crate `tool-parser` 1.10.0.
    //!
    //! Its streaming entry point is the async trait method
    //! `ToolParser::parse_incremental(&mut self, chunk: &str, tools: &[Tool])
    //! -> ParserResult<StreamingParseResult>`; at the end of a stream the
    //! caller collects `get_unstreamed_tool_args()` and
    //! `take_unstreamed_normal_text()`. Parsers come from `ParserFactory`:
    //! by model id (`registry().create_for_model`) or by name
    //! (`registry().create_parser`).
    //!
    //! One response is driven by one `block_on` of a current-thread tokio
    //! runtime built once: the per-chunk cost is the `parse_incremental`
    //! call itself, including the boxed future that `async_trait` makes for
    //! every call (part of the peer's API), not any runtime entry.

    use openai_protocol::common::Tool;
    use tokio::runtime::Runtime;
    use tool_parser::{ParserFactory, ToolParser};

    /// A model id the peer's factory maps to its Qwen (hermes) parser.
    pub const QWEN_MODEL: &str = "Qwen/Qwen2.5-7B-Instruct";
    /// A model id the peer's factory does not know: it falls back to its
    /// default parser.
    pub const UNKNOWN_MODEL: &str = "some-org/some-unknown-model";

    /// One peer parser with its runtime and the request's tool list.
    pub struct Peer {
        rt: Runtime,
        parser: Box<dyn ToolParser>,
        tools: Vec<Tool>,
    }

    /// The peer's output for one response, for the checks.
    #[derive(Debug, Default)]
    pub struct Collected {
        /// All `normal_text`, plus the end-of-stream leftover.
        pub text: String,
        /// Per call index: the name (if announced) and the argument text.
        pub calls: Vec<(Option<String>, String)>,
        /// How many `parse_incremental` calls returned an error.
        pub errors: usize,
    }

    impl Peer {
        fn with(parser: Box<dyn ToolParser>) -> Peer {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a current-thread runtime");
            Peer {
                rt,
                parser,
                tools: tools(),
            }
        }

        /// The parser the peer's factory picks for `model`.
        pub fn for_model(model: &str) -> Peer {
            let parser = ParserFactory::new()
                .registry()
                .create_for_model(model)
                .expect("the factory falls back to its default parser");
            Peer::with(parser)
        }

        /// The parser registered under `name` in the peer's factory.
        pub fn named(name: &str) -> Peer {
            let parser = ParserFactory::new()
                .registry()
                .create_parser(name)
                .unwrap_or_else(|| panic!("peer parser {name} not registered"));
            Peer::with(parser)
        }

        /// One response: resets the parser (keeps its buffers' capacity),
        /// feeds every chunk, then takes what the end-of-stream flush gives.
        /// Returns a tally of the output (bytes of text plus call items) so
        /// the work cannot be optimised away.
        pub fn run<'a>(&mut self, chunks: impl IntoIterator<Item = &'a str>) -> usize {
            let Peer { rt, parser, tools } = self;
            parser.reset();
            rt.block_on(async {
                let mut tally = 0usize;
                for chunk in chunks {
                    match parser.parse_incremental(chunk, tools).await {
                        Ok(r) => tally += r.normal_text.len() + r.calls.len(),
                        Err(_) => tally += 1,
                    }
                }
                if let Some(items) = parser.get_unstreamed_tool_args() {
                    tally += items.len();
                }
                tally + parser.take_unstreamed_normal_text().len()
            })
        }

        /// Like [`Peer::run`], but keeps the output. Not timed.
        pub fn collect<'a>(&mut self, chunks: impl IntoIterator<Item = &'a str>) -> Collected {
            let Peer { rt, parser, tools } = self;
            parser.reset();
            rt.block_on(async {
                let mut got = Collected::default();
                let add = |got: &mut Collected, items: Vec<tool_parser::types::ToolCallItem>| {
                    for item in items {
                        if got.calls.len() <= item.tool_index {
                            got.calls.resize(item.tool_index + 1, (None, String::new()));
                        }
                        let call = &mut got.calls[item.tool_index];
                        if item.name.is_some() {
                            call.0 = item.name;
                        }
                        call.1.push_str(&item.parameters);
                    }
                };
                for chunk in chunks {
                    match parser.parse_incremental(chunk, tools).await {
                        Ok(r) => {
                            got.text.push_str(&r.normal_text);
                            add(&mut got, r.calls);
                        }
                        Err(_) => got.errors += 1,
                    }
                }
                if let Some(items) = parser.get_unstreamed_tool_args() {
                    add(&mut got, items);
                }
                got.text.push_str(&parser.take_unstreamed_normal_text());
                got
            })
        }
    }

    /// The request's tool list: the one tool the argument benchmarks call.
    /// The peer's JSON-style parsers only stream calls of listed tools.
    fn tools() -> Vec<Tool> {
        serde_json::from_value(serde_json::json!([{
            "type": "function",
            "function": {
                "name": "write_file",
                "description": "Write a file.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"}
                    },
                    "required": ["path", "content"]
                }
            }
        }]))
        .expect("a valid tool list")
    }
}

pub mod cpu_time {
    //! A criterion measurement of the benchmarking thread's CPU time
    //! (`CLOCK_THREAD_CPUTIME_ID`, user and system), in nanoseconds.
    //!
    //! Every contender runs on the thread that times it (the peer's tokio
    //! runtime is a current-thread one, driven by `block_on` on that
    //! thread), so on an idle machine this equals the wall time; on a
    //! machine shared with other work it leaves out the time the thread
    //! spent descheduled. It does not remove contention for caches and
    //! memory bandwidth.

    use criterion::measurement::{Measurement, ValueFormatter};
    use criterion::Throughput;

    /// The measurement; see the module documentation.
    pub struct ThreadCpuTime;

    fn now_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a
        // constant Linux and the BSDs define.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    impl Measurement for ThreadCpuTime {
        type Intermediate = u64;
        type Value = u64;

        fn start(&self) -> u64 {
            now_ns()
        }
        fn end(&self, start: u64) -> u64 {
            now_ns().saturating_sub(start)
        }
        fn add(&self, a: &u64, b: &u64) -> u64 {
            a + b
        }
        fn zero(&self) -> u64 {
            0
        }
        fn to_f64(&self, v: &u64) -> f64 {
            *v as f64
        }
        fn formatter(&self) -> &dyn ValueFormatter {
            &Nanos
        }
    }

    /// Formats nanoseconds as criterion's wall-time formatter does.
    struct Nanos;

    impl ValueFormatter for Nanos {
        fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
            let (factor, unit) = if typical < 1e3 {
                (1.0, "ns")
            } else if typical < 1e6 {
                (1e-3, "µs")
            } else if typical < 1e9 {
                (1e-6, "ms")
            } else {
                (1e-9, "s")
            };
            for v in values {
                *v *= factor;
            }
            unit
        }

        fn scale_throughputs(
            &self,
            typical: f64,
            throughput: &Throughput,
            values: &mut [f64],
        ) -> &'static str {
            let (per_iter, units) = match *throughput {
                Throughput::Bytes(n) | Throughput::BytesDecimal(n) => {
                    (n as f64, ["B/s", "KiB/s", "MiB/s", "GiB/s"])
                }
                Throughput::Bits(n) => (n as f64 / 8.0, ["B/s", "KiB/s", "MiB/s", "GiB/s"]),
                Throughput::Elements(n) | Throughput::ElementsAndBytes { elements: n, .. } => {
                    (n as f64, ["elem/s", "Kielem/s", "Mielem/s", "Gielem/s"])
                }
            };
            let rate = per_iter * 1e9 / typical;
            let mut step = 0;
            while step < 3 && rate >= 1024f64.powi(step as i32 + 1) {
                step += 1;
            }
            let denom = 1024f64.powi(step as i32);
            for v in values {
                *v = per_iter * 1e9 / *v / denom;
            }
            units[step]
        }

        fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
            "ns"
        }
    }
}
