//! The SSE rewrite: one upstream SSE block in, the bytes of zero or more
//! SSE events out, over the chunk rewrite ([`ChunkRewriter`]).
//!
//! - a block without fields (blank lines, comments) is dropped, one
//!   without `data` passed on as it came;
//! - `[DONE]` ends every choice, is sent once, last; the upstream is not
//!   read after it;
//! - any other `data` is a chunk for the [`ChunkRewriter`]: the chunk as it
//!   came is the event byte for byte, a rewritten chunk keeps the event's
//!   other fields (`event`, `id`, `retry`), an added chunk is an event of
//!   its own.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;

use crate::chunks::{ChunkRewriter, Emit};
use crate::config::Config;
use crate::error::{DecodeError, RewriteError};
use crate::sse::blocks::Blocks;
use crate::sse::fields::{fields, Fields, NotUtf8};
use crate::sse::write;

/// The stream [`rewrite_stream`](crate::rewrite_stream) returns: the
/// upstream's blocks, each rewritten, the bytes of what the blocks of one
/// upstream chunk became sent as one item. A `Stream` of its own rather
/// than an `unfold`, which moves its whole state into a new future and
/// back out for every item.
pub(crate) struct Rewritten<S, E> {
    upstream: Pin<Box<S>>,
    blocks: Blocks,
    rewriter: Rewriter,
    /// The bytes of the events to send; emptied into each item (its
    /// allocation is taken back once the items sent from it are dropped).
    out: BytesMut,
    /// A block sent as it came, the whole item so far: sent itself, not
    /// copied into `out` (which is empty while this is set).
    whole: Option<Bytes>,
    /// Nothing more is read: `[DONE]` was sent, the upstream ended or
    /// failed.
    ended: bool,
    /// The error that ends the stream, after what came before it.
    failed: Option<RewriteError<E>>,
    max_choices: usize,
}

// No field is pinned: the upstream is boxed.
impl<S, E> Unpin for Rewritten<S, E> {}

impl<S, E> Rewritten<S, E> {
    pub(crate) fn new(upstream: S, config: Config) -> Rewritten<S, E> {
        Rewritten {
            max_choices: config.max_choices,
            upstream: Box::pin(upstream),
            blocks: Blocks::new(),
            rewriter: Rewriter::new(config),
            out: BytesMut::new(),
            whole: None,
            ended: false,
            failed: None,
        }
    }

    /// Rewrites the blocks the input so far completes, until one ends the
    /// stream.
    fn rewrite_blocks(&mut self) {
        while !self.ended {
            let Some(block) = self.blocks.next() else {
                return;
            };
            if let Some(whole) = self.whole.take() {
                self.out.extend_from_slice(&whole);
            }
            let flow = match self.rewriter.block(&block, &mut self.out) {
                Ok(flow) => flow,
                Err(e) => {
                    self.ended = true;
                    self.failed = Some(RewriteError::Decode(DecodeError(e)));
                    return;
                }
            };
            match flow {
                Flow::Continue => {}
                Flow::AsItCame if self.out.is_empty() => self.whole = Some(block),
                Flow::AsItCame => self.out.extend_from_slice(&block),
                Flow::Done => self.ended = true,
                Flow::TooManyChoices => {
                    self.ended = true;
                    self.failed = Some(RewriteError::TooManyChoices(self.max_choices));
                }
            }
        }
    }
}

impl<S, E> Stream for Rewritten<S, E>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    type Item = Result<Bytes, RewriteError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let st = self.get_mut();
        loop {
            st.rewrite_blocks();
            if let Some(whole) = st.whole.take() {
                return Poll::Ready(Some(Ok(whole)));
            }
            if !st.out.is_empty() {
                return Poll::Ready(Some(Ok(st.out.split().freeze())));
            }
            if st.ended {
                return Poll::Ready(st.failed.take().map(Err));
            }
            match ready!(st.upstream.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => st.blocks.push(chunk),
                Some(Err(e)) => {
                    st.ended = true;
                    return Poll::Ready(Some(Err(RewriteError::Upstream(e))));
                }
                None => {
                    st.ended = true;
                    st.rewriter.end(&mut st.out);
                }
            }
        }
    }
}

/// Whether the stream goes on after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read the next event.
    Continue,
    /// The block is to be sent as it came (nothing was written for it):
    /// then read the next.
    AsItCame,
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

    /// Rewrites one upstream block (an event: its lines and the blank
    /// line after them); the output goes to `out`, unless the block is
    /// to be sent as it came ([`Flow::AsItCame`]: the caller sends it).
    /// An error when a field is not UTF-8.
    pub(crate) fn block(&mut self, block: &[u8], out: &mut BytesMut) -> Result<Flow, NotUtf8> {
        let Some(sse) = fields(block)? else {
            return Ok(Flow::Continue);
        };
        let Some(data) = sse.data.as_deref() else {
            return Ok(Flow::AsItCame);
        };
        if data.trim() == "[DONE]" {
            self.end(out);
            write::data(out, "[DONE]");
            return Ok(Flow::Done);
        }
        let mut emits = std::mem::take(&mut self.emits);
        self.chunks.chunk(data, &mut emits);
        let as_it_came = matches!(emits[..], [Emit::Upstream]);
        if as_it_came {
            emits.clear();
        } else {
            Self::send(&mut emits, Some((block, &sse)), out);
        }
        self.emits = emits;
        if self.chunks.too_many_choices() {
            if as_it_came {
                out.extend_from_slice(block);
            }
            return Ok(Flow::TooManyChoices);
        }
        Ok(if as_it_came {
            Flow::AsItCame
        } else {
            Flow::Continue
        })
    }

    /// Ends every choice that is still open (the upstream ended).
    pub(crate) fn end(&mut self, out: &mut BytesMut) {
        let mut emits = std::mem::take(&mut self.emits);
        self.chunks.end(&mut emits);
        Self::send(&mut emits, None, out);
        self.emits = emits;
    }

    /// Writes `emits` (drained) as SSE events; `upstream` is the block
    /// they answer and its fields, if any: it is sent as it came, or
    /// rewritten with its other fields kept.
    fn send(emits: &mut Vec<Emit>, mut upstream: Option<(&[u8], &Fields<'_>)>, out: &mut BytesMut) {
        for emit in emits.drain(..) {
            match emit {
                Emit::Upstream => {
                    if let Some((block, _)) = upstream.take() {
                        out.extend_from_slice(block);
                    }
                }
                Emit::Rewritten(data) => match upstream.take() {
                    Some((_, sse)) => {
                        let rewritten = Fields {
                            data: Some(data.as_str().into()),
                            event: sse.event,
                            id: sse.id,
                            retry: sse.retry,
                        };
                        if let Err(e) = write::write(out, &rewritten) {
                            tracing::warn!(field = ?e, "toolscan-sse: an SSE event could not be encoded");
                        }
                    }
                    None => write::data(out, &data),
                },
                Emit::Added(data) => write::data(out, &data),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use toolscan_core::Registry;

    /// An upstream chunk of one block the rewrite leaves alone is sent
    /// itself: the item is the upstream's bytes, not a copy.
    #[test]
    fn a_block_left_alone_is_the_item_itself() {
        let chunk = Bytes::from_static(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n",
        );
        let Ok(grammar) = Registry::builtin().grammar("hermes") else {
            panic!("hermes is built in");
        };
        let upstream = futures_util::stream::iter([Ok::<_, std::io::Error>(chunk.clone())]);
        let items: Vec<_> =
            futures::executor::block_on(Rewritten::new(upstream, Config::new(grammar)).collect());
        let Some(Ok(first)) = items.first() else {
            panic!("{items:?}");
        };
        assert_eq!(first, &chunk);
        assert_eq!(first.as_ptr(), chunk.as_ptr());
    }
}
