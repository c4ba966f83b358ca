//! The SSE rewriter (`toolscan_sse::rewrite_stream`): arbitrary upstream
//! SSE bytes, in arbitrary chunks, in; no panic, the same output bytes
//! under any chunking, and the output is SSE that decodes. Optionally the
//! same bytes as a whole `chat.completion` body (`rewrite_body`): no panic.
//!
//! Input layout:
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | the format, as in `feed_chunks` |
//! | 1 | bit 0 reasoning separation, bit 1 `Config::complete_at_stop`, bit 2 the tools list, bit 3 also `rewrite_body` |
//! | 2 | chunking of the upstream body (`toolscan_fuzz::chunks::Sizes`; the API bits are unused) |
//! | 3.. | the upstream body |
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::{fuzz_target, Corpus};
use toolscan_fuzz::chunks::Sizes;
use toolscan_fuzz::stream::drain;
use toolscan_fuzz::{flag, formats, known, options, seed};
use toolscan_sse::{rewrite_body, rewrite_stream, Config};

/// Bit of byte 1: `Config::complete_at_stop`.
const AT_STOP: u8 = 1 << 1;
/// Bit of byte 1: also rewrite the bytes as a whole body.
const BODY: u8 = 1 << 3;

/// The rewritten stream's bytes, and whether it ended with an error.
fn rewrite(body: &[u8], chunking: u8, config: Config) -> (Vec<u8>, bool) {
    let (mut sizes, _) = Sizes::new(chunking);
    let mut items = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let to = at + sizes.next(body.len() - at);
        items.push(Ok::<_, std::io::Error>(Bytes::copy_from_slice(
            &body[at..to],
        )));
        at = to;
    }
    let mut out = Vec::new();
    let mut failed = false;
    for item in drain(rewrite_stream(futures_util_iter(items), config)) {
        match item {
            Ok(b) => {
                assert!(!failed, "output after an error");
                out.extend_from_slice(&b);
            }
            Err(_) => {
                assert!(!failed, "two errors");
                failed = true;
            }
        }
    }
    (out, failed)
}

/// A stream of the items, always ready.
fn futures_util_iter<T: Unpin>(items: Vec<T>) -> impl futures_core::Stream<Item = T> + Unpin {
    struct Iter<T>(std::vec::IntoIter<T>);
    impl<T: Unpin> futures_core::Stream for Iter<T> {
        type Item = T;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<T>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Iter(items.into_iter())
}

fuzz_target!(init: seed::init(seeds), |data: &[u8]| -> Corpus {
    if known::run(|| check(data)) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});

fn check(data: &[u8]) {
    let [format, flags, chunking, body @ ..] = data else {
        return;
    };
    let entry = formats::pick(*format);
    let opts = options(flags & (flag::REASONING | flag::TOOLS));
    let config = || {
        toolscan_sse::Config::new(entry.grammar.clone())
            .with_options(opts.clone())
            .with_complete_at_stop(flags & AT_STOP != 0)
    };
    let (whole, whole_failed) = rewrite(body, 0, config());
    let (chunked, chunked_failed) = rewrite(body, *chunking, config());
    if whole_failed == chunked_failed {
        assert!(
            whole == chunked,
            "chunking changed the output (format {}, chunking {chunking}):\n  whole: {:?}\nchunked: {:?}",
            entry.name,
            String::from_utf8_lossy(&whole),
            String::from_utf8_lossy(&chunked)
        );
    } else {
        // A decoding error may be found at another point of the body
        // depending on the cuts; what came before it must agree.
        let n = whole.len().min(chunked.len());
        assert_eq!(
            whole[..n],
            chunked[..n],
            "chunking changed the output before an error"
        );
    }
    // What the rewrite sends is SSE its own decoder reads without error.
    let (_, again_failed) = rewrite(&whole, 0, config());
    assert!(
        !again_failed,
        "the rewritten stream is not valid SSE: {:?}",
        String::from_utf8_lossy(&whole)
    );

    if flags & BODY != 0 {
        if let Ok(out) = rewrite_body(body, &config()) {
            assert!(
                serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
                "rewrite_body returned a body that is not JSON"
            );
        }
    }
}

/// The bundled SSE recordings (`examples/data/sse`), under their format and
/// `auto`; and conformance cases wrapped as the content deltas of a stream
/// (a few per format), cut into small deltas, ending with `stop` and
/// `[DONE]`.
fn seeds(repo: &seed::Repo) -> seed::Seeds {
    let mut s = seed::Seeds {
        words: seed::format_words(false),
        ..Default::default()
    };
    for w in [
        "data: ",
        "data:",
        "event: ",
        "id: ",
        "retry: ",
        ": keep-alive",
        "\n\n",
        "\r\n",
        "[DONE]",
        "\"choices\"",
        "\"delta\"",
        "\"content\"",
        "\"finish_reason\"",
        "\"tool_calls\"",
        "\"index\"",
        "\"function\"",
        "\"arguments\"",
        "\"name\"",
        "\"reasoning_content\"",
        "\"usage\"",
        "\"role\"",
        "\"message\"",
        "\"stop\"",
        "\"length\"",
        "null",
        "\"assistant\"",
    ] {
        s.words.insert(w.as_bytes().to_vec());
    }
    let hermes = formats::index_of("hermes") as u8;
    let auto = formats::index_of("auto") as u8;
    for (_, body) in repo.files("examples/data/sse", ".sse") {
        for (f, flags, chunking) in [(hermes, 0, 0), (auto, 1, 3), (hermes, AT_STOP, 1)] {
            let mut d = vec![f, flags, chunking];
            d.extend_from_slice(&body);
            s.inputs.push(d);
        }
    }
    for (_, body) in repo.files("examples/data/sse", ".json") {
        let mut d = vec![hermes, BODY, 0];
        d.extend_from_slice(&body);
        s.inputs.push(d);
    }
    let mut per_format = std::collections::HashMap::new();
    for case in &repo.cases {
        let n = per_format.entry(case.format.as_str()).or_insert(0);
        *n += 1;
        if *n > 3 {
            continue;
        }
        let chunk = |content: serde_json::Value, finish: serde_json::Value| {
            let c = serde_json::json!({"id": "c1", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]});
            format!("data: {c}\n\n")
        };
        let mut body = String::new();
        let mut piece = String::new();
        for ch in case.input.chars() {
            piece.push(ch);
            if piece.len() >= 7 {
                body.push_str(&chunk(
                    std::mem::take(&mut piece).into(),
                    serde_json::Value::Null,
                ));
            }
        }
        body.push_str(&chunk(piece.into(), "stop".into()));
        body.push_str("data: [DONE]\n\n");
        let flags = if *n == 2 { AT_STOP | BODY } else { AT_STOP };
        let mut d = vec![formats::index_of(&case.format) as u8, flags, 4];
        d.extend_from_slice(body.as_bytes());
        s.inputs.push(d);
        // The same content as a whole response.
        let whole = serde_json::json!({"id": "c1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": case.input}, "finish_reason": "stop"}]});
        let mut d = vec![formats::index_of(&case.format) as u8, BODY, 0];
        d.extend_from_slice(whole.to_string().as_bytes());
        s.inputs.push(d);
    }
    s
}
