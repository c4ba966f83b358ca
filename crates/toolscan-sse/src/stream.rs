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

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::{Stream, TryStream};
use sse_stream::{Sse, SseByteStream};

use crate::chunks::{ChunkRewriter, Emit};
use crate::config::Config;
use crate::error::{DecodeError, RewriteError};

/// The stream [`rewrite_stream`](crate::rewrite_stream) returns: the
/// upstream's events decoded, each rewritten, the bytes of what it became
/// sent as one item. A `Stream` of its own rather than an `unfold`, which
/// moves its whole state into a new future and back out for every item.
pub(crate) struct Rewritten<S: TryStream> {
    events: Pin<Box<SseByteStream<S>>>,
    rewriter: Rewriter,
    /// The bytes of the events to send; emptied into each item (its
    /// allocation is taken back once the items sent from it are dropped).
    out: BytesMut,
    /// Nothing more is read: `[DONE]` was sent, the upstream ended or
    /// failed.
    ended: bool,
    /// The error that ends the stream, after what came before it.
    failed: Option<RewriteError<S::Error>>,
    max_choices: usize,
}

// No field is pinned: the decoder is boxed.
impl<S: TryStream> Unpin for Rewritten<S> {}

impl<S: TryStream> Rewritten<S> {
    pub(crate) fn new(events: SseByteStream<S>, config: Config) -> Rewritten<S> {
        Rewritten {
            max_choices: config.max_choices,
            events: Box::pin(events),
            rewriter: Rewriter::new(config),
            out: BytesMut::new(),
            ended: false,
            failed: None,
        }
    }
}

impl<S, E> Stream for Rewritten<S>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    type Item = Result<Bytes, RewriteError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let st = self.get_mut();
        loop {
            if st.ended {
                return Poll::Ready(st.failed.take().map(Err));
            }
            let out = &mut st.out;
            match ready!(st.events.as_mut().poll_next(cx)) {
                Some(Ok(event)) => match st.rewriter.event(event, out) {
                    Flow::Continue => {}
                    Flow::Done => st.ended = true,
                    Flow::TooManyChoices => {
                        st.ended = true;
                        st.failed = Some(RewriteError::TooManyChoices(st.max_choices));
                    }
                },
                Some(Err(e)) => {
                    st.ended = true;
                    return Poll::Ready(Some(Err(upstream_error(e))));
                }
                None => {
                    st.ended = true;
                    st.rewriter.end(out);
                }
            }
            if !st.out.is_empty() {
                return Poll::Ready(Some(Ok(st.out.split().freeze())));
            }
        }
    }
}

/// The decoder's error, with the upstream's own error taken back out of
/// it.
fn upstream_error<E: std::error::Error + Send + Sync + 'static>(
    e: sse_stream::Error,
) -> RewriteError<E> {
    match e {
        sse_stream::Error::Body(boxed) => match boxed.downcast::<E>() {
            Ok(e) => RewriteError::Upstream(*e),
            Err(other) => RewriteError::Decode(DecodeError(sse_stream::Error::Body(other))),
        },
        other => RewriteError::Decode(DecodeError(other)),
    }
}

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
