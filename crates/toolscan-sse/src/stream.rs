//! The SSE rewrite: one upstream SSE event in, the bytes of zero or more
//! SSE events out, over the chunk rewrite ([`ChunkRewriter`]).
//!
//! - an event without `data` is passed on unchanged;
//! - `[DONE]` ends every choice, is sent once, last; the upstream is not
//!   read after it;
//! - any other `data` is a chunk for the [`ChunkRewriter`]: the chunk as it
//!   came is the event byte for byte, a rewritten chunk keeps the event's
//!   other fields (`event`, `id`, `retry`), an added chunk is an event of
//!   its own.

use bytes::BytesMut;
use sse_stream::Sse;

use crate::chunks::{ChunkRewriter, Emit};
use crate::config::Config;

/// Whether the stream goes on after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read the next event.
    Continue,
    /// `[DONE]` was sent: stop.
    Done,
    /// The chunk brought more choices than `Config::max_choices`: stop,
    /// with an error.
    TooManyChoices,
}

/// The state of one streaming rewrite.
#[derive(Debug)]
pub(crate) struct Rewriter {
    chunks: ChunkRewriter,
    /// What the chunk rewrite said of the current event (kept to reuse its
    /// allocation).
    emits: Vec<Emit>,
}

impl Rewriter {
    pub(crate) fn new(config: Config) -> Rewriter {
        Rewriter {
            chunks: ChunkRewriter::new(config),
            emits: Vec::new(),
        }
    }

    /// Rewrites one upstream event; the output goes to `out`.
    pub(crate) fn event(&mut self, sse: Sse, out: &mut BytesMut) -> Flow {
        let Some(data) = sse.data.as_deref() else {
            write(out, sse);
            return Flow::Continue;
        };
        if data.trim() == "[DONE]" {
            self.end(out);
            write(out, Sse::default().data("[DONE]"));
            return Flow::Done;
        }
        let mut emits = std::mem::take(&mut self.emits);
        self.chunks.chunk(data, &mut emits);
        self.send(&mut emits, Some(sse), out);
        self.emits = emits;
        if self.chunks.too_many_choices() {
            return Flow::TooManyChoices;
        }
        Flow::Continue
    }

    /// Ends every choice that is still open (the upstream ended).
    pub(crate) fn end(&mut self, out: &mut BytesMut) {
        let mut emits = std::mem::take(&mut self.emits);
        self.chunks.end(&mut emits);
        self.send(&mut emits, None, out);
        self.emits = emits;
    }

    /// Writes `emits` (drained) as SSE events; `upstream` is the event they
    /// answer, if any.
    fn send(&self, emits: &mut Vec<Emit>, mut upstream: Option<Sse>, out: &mut BytesMut) {
        for emit in emits.drain(..) {
            match emit {
                Emit::Upstream => {
                    if let Some(sse) = upstream.take() {
                        write(out, sse);
                    }
                }
                Emit::Rewritten(data) => match upstream.take() {
                    Some(sse) => write(
                        out,
                        Sse {
                            data: Some(data),
                            ..sse
                        },
                    ),
                    None => write(out, Sse::default().data(data)),
                },
                Emit::Added(data) => write(out, Sse::default().data(data)),
            }
        }
    }
}

/// Appends the encoding of `sse` to `out`. The events come from the
/// decoder (or are made here), so their metadata always encodes; if it
/// ever did not, the event is dropped with a warning.
fn write(out: &mut BytesMut, sse: Sse) {
    if let Err(e) = crate::encode::write(out, &sse) {
        tracing::warn!(field = ?e, "toolscan-sse: an SSE event could not be encoded");
    }
}
