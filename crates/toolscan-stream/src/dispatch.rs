//! Early dispatch: run a handler for every tool call the moment the call
//! is complete, while the model is still streaming the rest of its answer.
//!
//! A [`Dispatcher`] holds a handler (`FnMut(ToolCall) -> impl Future<Output
//! = Result<T, H>>`) and a bound on how many handlers run at once.
//! [`Dispatcher::dispatch`] wraps a stream of events (an
//! [`EventStream`](crate::EventStream), or any stream of
//! `Result<Event, Err>`) into a [`Dispatch`]: a stream that
//!
//! - passes every event through, as it arrives
//!   ([`Dispatched::Event`]);
//! - starts the handler of a call in the very poll that receives its
//!   [`Event::ToolCallEnd`] (or, when `max_concurrent` handlers are
//!   running, as soon as one of them finishes);
//! - yields each handler's result ([`Dispatched::Output`]) in call order,
//!   as soon as it and every result before it are ready, even when later
//!   calls finish first;
//! - ends once the event stream has ended and every handler has finished.
//!
//! A handler's error is that call's result (`Err(H)` in its
//! [`CallOutput`]); the other calls go on.
//!
//! # Where handlers run, and cancellation
//!
//! The handlers' futures live *inside* the [`Dispatch`] and are polled by
//! it (with a [`FuturesUnordered`]): they run concurrently with each other
//! and with the reading of the stream, on the task that polls the
//! `Dispatch`, and nothing is spawned. That keeps the dispatcher runtime
//! agnostic (it needs no tokio, only `futures-util`), needs no `'static` or
//! `Send` handler, and makes cancellation exact:
//!
//! - when the event stream yields an error, every running handler is
//!   dropped *before* the error is yielded, the calls not started yet are
//!   never started, and the stream ends;
//! - dropping the `Dispatch` drops every running handler, synchronously:
//!   no task outlives it.
//!
//! The price: handlers make progress only while the `Dispatch` is polled
//! (a consumer looping on `next().await` polls it all the time), and they
//! share one task. A handler that blocks or computes for long should move
//! that work off the task itself (`tokio::task::spawn_blocking`, say); a
//! handler that panics makes the poll of the `Dispatch` panic.
//!
//! ```
//! use futures::{executor::block_on, stream, StreamExt};
//! use toolscan_core::{Parser, ToolCall};
//! use toolscan_stream::{Dispatched, Dispatcher, EventStreamExt};
//!
//! let chunks = stream::iter([
//!     Ok::<_, std::io::Error>(&b"<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}"[..]),
//!     Ok(b"</tool_call> and then some more text"),
//! ]);
//! let events = chunks.tool_events(Parser::for_format("hermes").unwrap());
//!
//! // The tool: adds two numbers (an async fn would do as well).
//! let add = |call: ToolCall| async move {
//!     let args = call.arguments.parse().map_err(|e| e.to_string())?;
//!     let a = args.get("a").and_then(|v| v.as_i64()).ok_or("no a")?;
//!     let b = args.get("b").and_then(|v| v.as_i64()).ok_or("no b")?;
//!     Ok::<i64, String>(a + b)
//! };
//!
//! let mut dispatch = Dispatcher::new(add, 4).dispatch(events);
//! block_on(async {
//!     while let Some(item) = dispatch.next().await {
//!         match item.unwrap() {
//!             Dispatched::Event(event) => println!("{event:?}"),
//!             Dispatched::Output(out) => {
//!                 assert_eq!(out.name, "add");
//!                 assert_eq!(out.result, Ok(5));
//!             }
//!         }
//!     }
//! });
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::stream::{FusedStream, Stream};
use futures_util::stream::FuturesUnordered;
use pin_project_lite::pin_project;
use toolscan_core::{Diagnostic, Event, ToolCall};

/// Runs a handler for every tool call of a stream as soon as the call is
/// complete; see [the module docs](self).
///
/// ```
/// use toolscan_core::ToolCall;
/// use toolscan_stream::Dispatcher;
///
/// // At most two tools at a time.
/// let dispatcher = Dispatcher::new(
///     |call: ToolCall| async move { Ok::<_, std::io::Error>(call.name.len()) },
///     2,
/// );
/// assert_eq!(dispatcher.max_concurrent(), 2);
/// ```
#[derive(Clone)]
pub struct Dispatcher<F> {
    handler: F,
    max_concurrent: usize,
}

impl<F> Dispatcher<F> {
    /// A dispatcher that runs `handler` for every call, at most
    /// `max_concurrent` at a time (`0` is taken as `1`).
    pub fn new(handler: F, max_concurrent: usize) -> Dispatcher<F> {
        Dispatcher {
            handler,
            max_concurrent: max_concurrent.max(1),
        }
    }

    /// How many handlers may run at once.
    pub fn max_concurrent(&self) -> usize {
        self.max_concurrent
    }

    /// Dispatches the calls of `events`: see [`Dispatch`].
    ///
    /// `events` is any stream of `Result<Event, Err>`: an
    /// [`EventStream`](crate::EventStream) (then `Err` is
    /// [`StreamError<E>`](crate::StreamError)), or events from elsewhere.
    pub fn dispatch<S, Err, Fut, T, H>(self, events: S) -> Dispatch<S, F, Fut>
    where
        S: Stream<Item = Result<Event, Err>>,
        F: FnMut(ToolCall) -> Fut,
        Fut: Future<Output = Result<T, H>>,
    {
        Dispatch {
            events,
            handler: self.handler,
            max_concurrent: self.max_concurrent,
            running: FuturesUnordered::new(),
            waiting: VecDeque::new(),
            slots: VecDeque::new(),
            first_slot: 0,
            next_seq: 0,
            events_done: false,
            failed: false,
            open_call: None,
        }
    }
}

impl<F> fmt::Debug for Dispatcher<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("max_concurrent", &self.max_concurrent)
            .finish_non_exhaustive()
    }
}

/// What a [`Dispatch`] yields.
#[derive(Clone, Debug, PartialEq)]
pub enum Dispatched<T, H> {
    /// An event of the input stream, passed through as it arrived (every
    /// event, [`Event::ToolCallEnd`] included).
    Event(Event),
    /// A handler finished, and so did every handler of the calls before
    /// it: its result, in call order.
    Output(CallOutput<T, H>),
}

/// The result of one call's handler.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutput<T, H> {
    /// The call's index in the response (as in its events).
    pub index: usize,
    /// The call id (for the `tool_call_id` of the tool's answer).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// What the handler returned.
    pub result: Result<T, H>,
}

/// A call's handler, tagged with the call's place in the output order.
struct Running<Fut> {
    seq: usize,
    index: usize,
    id: String,
    name: String,
    future: Pin<Box<Fut>>,
}

/// A finished handler's output, `R` its `Result`.
struct Finished<R> {
    index: usize,
    id: String,
    name: String,
    result: R,
}

impl<Fut: Future> Future for Running<Fut> {
    type Output = (usize, Finished<Fut::Output>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `Running` is `Unpin`: the handler's future is boxed.
        let result = match self.future.as_mut().poll(cx) {
            Poll::Ready(result) => result,
            Poll::Pending => return Poll::Pending,
        };
        let this = &mut *self;
        Poll::Ready((
            this.seq,
            Finished {
                index: this.index,
                id: std::mem::take(&mut this.id),
                name: std::mem::take(&mut this.name),
                result,
            },
        ))
    }
}

pin_project! {
    /// The stream [`Dispatcher::dispatch`] returns: the events of the
    /// input stream, with each call's handler result
    /// ([`Dispatched::Output`]) added in call order; see
    /// [the module docs](self).
    ///
    /// It yields `Result<Dispatched<T, H>, Err>`: an `Err` is the input
    /// stream's error, after which every running handler has been dropped
    /// and the stream ends. Dropping it drops every running handler.
    ///
    /// [`results`](Dispatch::results) drives it to the end and keeps only
    /// the results.
    #[project = DispatchProj]
    #[must_use = "streams do nothing unless polled"]
    pub struct Dispatch<S, F, Fut>
    where
        Fut: Future,
    {
        #[pin]
        events: S,
        handler: F,
        max_concurrent: usize,
        // The handlers that run (at most `max_concurrent`).
        running: FuturesUnordered<Running<Fut>>,
        // Complete calls whose handler has not started (all slots taken).
        waiting: VecDeque<(usize, usize, ToolCall)>,
        // One entry a call whose result is not yielded yet, in call order,
        // `first_slot` the sequence number of the first: `Some` once its
        // handler finished.
        slots: VecDeque<Option<Finished<Fut::Output>>>,
        first_slot: usize,
        // Sequence number of the next call.
        next_seq: usize,
        // The input stream ended (normally): never poll it again.
        events_done: bool,
        // The input stream failed: the error was yielded, nothing follows.
        failed: bool,
        // The diagnostics since the open call's `tool_call_start` (its
        // `ToolCall::diagnostics`), while a call is open.
        open_call: Option<Vec<Diagnostic>>,
    }
}

impl<S, F, Fut: Future> Dispatch<S, F, Fut> {
    /// Handlers running now.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Complete calls waiting for a free slot to start.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The input stream of events.
    pub fn get_ref(&self) -> &S {
        &self.events
    }
}

impl<S, F, Fut, Err, T, H> Dispatch<S, F, Fut>
where
    S: Stream<Item = Result<Event, Err>>,
    F: FnMut(ToolCall) -> Fut,
    Fut: Future<Output = Result<T, H>>,
{
    /// Drives the dispatch to the end; returns every call's output, in
    /// call order, or the input stream's error (the handlers still running
    /// then are dropped). The events themselves are dropped.
    ///
    /// ```
    /// use futures::{executor::block_on, stream};
    /// use toolscan_core::{Parser, ToolCall};
    /// use toolscan_stream::{Dispatcher, EventStreamExt};
    ///
    /// let response = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n\
    ///                 <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
    /// let events = stream::iter([Ok::<_, std::io::Error>(response)])
    ///     .tool_events(Parser::for_format("hermes").unwrap());
    /// let outputs = block_on(
    ///     Dispatcher::new(|call: ToolCall| async move { Ok::<_, ()>(call.name) }, 8)
    ///         .dispatch(events)
    ///         .results(),
    /// )
    /// .unwrap();
    /// let names: Vec<_> = outputs.into_iter().map(|o| o.result.unwrap()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// ```
    pub async fn results(self) -> Result<Vec<CallOutput<T, H>>, Err> {
        let mut this = std::pin::pin!(self);
        let mut outputs = Vec::new();
        while let Some(item) = std::future::poll_fn(|cx| this.as_mut().poll_next(cx)).await {
            if let Dispatched::Output(output) = item? {
                outputs.push(output);
            }
        }
        Ok(outputs)
    }
}

impl<S, F, Fut, Err, T, H> Stream for Dispatch<S, F, Fut>
where
    S: Stream<Item = Result<Event, Err>>,
    F: FnMut(ToolCall) -> Fut,
    Fut: Future<Output = Result<T, H>>,
{
    type Item = Result<Dispatched<T, H>, Err>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        if *this.failed {
            return Poll::Ready(None);
        }
        loop {
            // Start what may start, then let the handlers run.
            start_and_poll(&mut this, cx);

            // The next result in call order, if it is ready.
            if let Some(Some(_)) = this.slots.front() {
                if let Some(Some(done)) = this.slots.pop_front() {
                    *this.first_slot += 1;
                    return Poll::Ready(Some(Ok(Dispatched::Output(CallOutput {
                        index: done.index,
                        id: done.id,
                        name: done.name,
                        result: done.result,
                    }))));
                }
            }

            if *this.events_done {
                if this.slots.is_empty() {
                    return Poll::Ready(None);
                }
                return Poll::Pending;
            }

            match this.events.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(event))) => {
                    match &event {
                        Event::ToolCallStart { .. } => *this.open_call = Some(Vec::new()),
                        Event::Diagnostic(d) => {
                            if let Some(notes) = this.open_call.as_mut() {
                                notes.push(d.clone());
                            }
                        }
                        _ => {}
                    }
                    if let Event::ToolCallEnd {
                        index,
                        id,
                        name,
                        arguments,
                    } = &event
                    {
                        let seq = *this.next_seq;
                        *this.next_seq += 1;
                        this.slots.push_back(None);
                        this.waiting.push_back((
                            seq,
                            *index,
                            ToolCall {
                                id: id.clone(),
                                name: name.clone(),
                                arguments: arguments.clone(),
                                diagnostics: this.open_call.take().unwrap_or_default(),
                            },
                        ));
                        // Start its handler now, before the event goes
                        // out: the first poll of the handler runs here.
                        start_and_poll(&mut this, cx);
                    }
                    return Poll::Ready(Some(Ok(Dispatched::Event(event))));
                }
                Poll::Ready(Some(Err(e))) => {
                    // Cancel: drop every handler before passing the error on.
                    *this.failed = true;
                    this.running.clear();
                    this.waiting.clear();
                    this.slots.clear();
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => *this.events_done = true,
                Poll::Pending => {
                    // The input stream has the waker; so do the handlers,
                    // if any runs. Nothing more can happen in this poll.
                    return Poll::Pending;
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Every call still owes its output.
        (self.slots.len(), None)
    }
}

/// Starts the waiting calls that fit and polls the running handlers (so a
/// new one begins its work now) until none is ready; each finished one
/// frees a slot for the next waiting call, and its output is stored in its
/// slot.
fn start_and_poll<S, F, Fut>(this: &mut DispatchProj<'_, S, F, Fut>, cx: &mut Context<'_>)
where
    F: FnMut(ToolCall) -> Fut,
    Fut: Future,
{
    loop {
        while this.running.len() < *this.max_concurrent {
            let Some((seq, index, call)) = this.waiting.pop_front() else {
                break;
            };
            let (id, name) = (call.id.clone(), call.name.clone());
            let future = Box::pin((this.handler)(call));
            this.running.push(Running {
                seq,
                index,
                id,
                name,
                future,
            });
        }
        match Pin::new(&mut *this.running).poll_next(cx) {
            Poll::Ready(Some((seq, output))) => {
                let slot = seq
                    .checked_sub(*this.first_slot)
                    .and_then(|i| this.slots.get_mut(i));
                if let Some(slot) = slot {
                    *slot = Some(output);
                }
            }
            // None running, or none finished (the running ones have the
            // waker).
            Poll::Ready(None) | Poll::Pending => return,
        }
    }
}

impl<S, F, Fut, Err, T, H> FusedStream for Dispatch<S, F, Fut>
where
    S: Stream<Item = Result<Event, Err>>,
    F: FnMut(ToolCall) -> Fut,
    Fut: Future<Output = Result<T, H>>,
{
    fn is_terminated(&self) -> bool {
        self.failed || (self.events_done && self.slots.is_empty())
    }
}

impl<S: fmt::Debug, F, Fut: Future> fmt::Debug for Dispatch<S, F, Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatch")
            .field("events", &self.events)
            .field("max_concurrent", &self.max_concurrent)
            .field("running", &self.running.len())
            .field("waiting", &self.waiting.len())
            .field("pending_outputs", &self.slots.len())
            .finish_non_exhaustive()
    }
}
