//! The `Bytes` adapter: the same events as the owned adapter, deltas
//! sliced out of the chunks they came in.

use bytes::Bytes;
use futures::{executor::block_on, stream, StreamExt};
use toolscan_core::{Event, Options, Parser, Registry};
use toolscan_stream::{ByteEvent, EventStreamExt};

fn parser(format: &str) -> Parser {
    let g = Registry::builtin().grammar(format).expect("built in");
    Parser::new(
        g,
        Options::new()
            .with_ids(toolscan_core::IdMint::Seeded(0))
            .with_reasoning(true),
    )
}

fn chunks(input: &[u8], size: usize) -> Vec<Bytes> {
    input.chunks(size).map(Bytes::copy_from_slice).collect()
}

fn byte_events(format: &str, chunks: &[Bytes]) -> Vec<ByteEvent> {
    let s = stream::iter(chunks.iter().cloned().map(Ok::<_, std::io::Error>));
    block_on(
        s.tool_byte_events(parser(format))
            .map(Result::unwrap)
            .collect(),
    )
}

fn owned_events(format: &str, chunks: &[Bytes]) -> Vec<Event> {
    let s = stream::iter(chunks.iter().cloned().map(Ok::<_, std::io::Error>));
    block_on(s.tool_events(parser(format)).map(Result::unwrap).collect())
}

/// Byte events as owned ones, coalesced (consecutive deltas merged).
fn as_events(events: &[ByteEvent]) -> Vec<Event> {
    let owned: Vec<Event> = events
        .iter()
        .map(|e| match e {
            ByteEvent::Text(b) => Event::Text {
                delta: std::str::from_utf8(b).expect("UTF-8").into(),
            },
            ByteEvent::Reasoning(b) => Event::Reasoning {
                delta: std::str::from_utf8(b).expect("UTF-8").into(),
            },
            ByteEvent::ToolCallArgs { index, delta } => Event::ToolCallArgs {
                index: *index,
                delta: std::str::from_utf8(delta).expect("UTF-8").into(),
            },
            ByteEvent::Event(e) => e.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    toolscan_core::coalesce(owned)
}

#[test]
fn byte_events_are_the_owned_events_under_any_chunking() {
    let inputs: [(&str, &str); 3] = [
        (
            "hermes",
            "<think>Paris, then.</think>Sure — <tool_call>{\"name\": \"get_weather\", \
             \"arguments\": {\"city\": \"Zürich\", \"n\": [1, 2]}}</tool_call> done ☂️",
        ),
        (
            "qwen3-coder",
            "Let me see.<tool_call>\n<function=f>\n<parameter=q>\ncafé \"x\"\n</parameter>\n</function>\n</tool_call>",
        ),
        ("mistral", "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"s\": \"\\u00e9\\n\"}}]"),
    ];
    for (format, input) in inputs {
        let want =
            toolscan_core::coalesce(owned_events(format, &chunks(input.as_bytes(), input.len())));
        for size in [1, 2, 3, 5, 8, 64] {
            let c = chunks(input.as_bytes(), size);
            assert_eq!(
                as_events(&byte_events(format, &c)),
                want,
                "{format}, chunks of {size}"
            );
        }
    }
}

/// Plain text read straight from a chunk is that chunk's memory.
#[test]
fn text_deltas_are_slices_of_their_chunks() {
    let c = vec![
        Bytes::from_static(b"The weather "),
        Bytes::from_static(b"in Paris is "),
        Bytes::from_static(b"mild."),
    ];
    let events = byte_events("hermes", &c);
    let texts: Vec<&Bytes> = events
        .iter()
        .filter_map(|e| match e {
            ByteEvent::Text(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(texts.len(), 3, "{events:?}");
    for (t, chunk) in texts.iter().zip(&c) {
        assert_eq!(t.as_ptr(), chunk.as_ptr());
        assert_eq!(t.len(), chunk.len());
    }
    // (Argument deltas are assembled in the parser's own buffer today:
    // they come as copies, whose text is checked by the test above.)
    let call = Bytes::from_static(b"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
    let events = byte_events("hermes", std::slice::from_ref(&call));
    assert!(matches!(
        events.last(),
        Some(ByteEvent::Event(Event::Done { .. }))
    ));
}
