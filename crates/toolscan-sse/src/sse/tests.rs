//! The decoder against `sse_stream`'s, on streams of SSE-like pieces cut
//! anywhere: the same events, and an error for the same streams.

use bytes::Bytes;
use proptest::prelude::*;

use super::blocks::Blocks;
use super::fields::fields;

/// One decoded event: `event`, `data`, `id`, `retry`.
type Decoded = (Option<String>, Option<String>, Option<String>, Option<u64>);

/// What our decoder makes of `input` pushed in `cuts`: its events, and
/// whether it failed.
fn ours(input: &[u8], cuts: &[usize]) -> (Vec<Decoded>, bool) {
    let mut blocks = Blocks::new();
    let mut events = Vec::new();
    for chunk in pieces(input, cuts) {
        blocks.push(Bytes::copy_from_slice(chunk));
        while let Some(block) = blocks.next() {
            match fields(&block) {
                Ok(Some(f)) => events.push((
                    f.event.map(str::to_owned),
                    f.data.map(|d| d.into_owned()),
                    f.id.map(str::to_owned),
                    f.retry,
                )),
                Ok(None) => {}
                Err(_) => return (events, true),
            }
        }
    }
    (events, false)
}

/// What `sse_stream` makes of the same.
fn theirs(input: &[u8], cuts: &[usize]) -> (Vec<Decoded>, bool) {
    use futures_util::StreamExt;
    let chunks: Vec<Result<Bytes, std::io::Error>> = pieces(input, cuts)
        .into_iter()
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let decoded: Vec<_> = futures::executor::block_on(
        sse_stream::SseByteStream::new(futures_util::stream::iter(chunks)).collect::<Vec<_>>(),
    );
    let mut events = Vec::new();
    for item in decoded {
        match item {
            Ok(sse) => events.push((sse.event, sse.data, sse.id, sse.retry)),
            Err(_) => return (events, true),
        }
    }
    (events, false)
}

/// `input` cut at `cuts` (positions, taken modulo its length, in any order).
fn pieces<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    at.push(0);
    at.push(input.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &input[w[0]..w[1]]).collect()
}

/// Pieces streams are made of: field names, separators, every line end,
/// values, the byte-order mark, a NUL and a byte that is not UTF-8.
fn piece() -> impl Strategy<Value = &'static [u8]> {
    prop::sample::select(vec![
        &b"data"[..],
        b"event",
        b"id",
        b"retry",
        b"other",
        b":",
        b": ",
        b" ",
        b"\n",
        b"\r",
        b"\r\n",
        b"\n\n",
        b"{\"a\": 1}",
        b"[DONE]",
        b"12",
        b"x",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"\0",
        b"\xff",
        "é".as_bytes(),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Streams that end with a block's end (an unfinished block at the
    /// end is where the two may differ: ours reads no line of it).
    #[test]
    fn the_same_events_as_sse_stream(
        parts in prop::collection::vec(piece(), 0..24),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let mut input: Vec<u8> = parts.concat();
        input.extend_from_slice(b"\n\n");
        prop_assert_eq!(ours(&input, &cuts), theirs(&input, &[]));
    }
}

/// The cases the property found worth keeping, and the ones it names.
#[test]
fn streams_of_note() {
    let cases: &[&[u8]] = &[
        b"\xEF\xBB\xBFdata: a\n\n",
        b"\xEF\xBB\xBF\n\ndata: a\n\n",
        b"data: a\r\r\ndata: b\n\n",
        b": ping\n\n\ndata: a\n\n",
        b"data: a\n\n\xEF\xBB\xBFdata: b\n\n",
        b"data: \xff\n\ndata: a\n\n",
    ];
    for input in cases {
        for cut in 0..=input.len() {
            assert_eq!(
                ours(input, &[cut]),
                theirs(input, &[]),
                "{:?} cut at {cut}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
