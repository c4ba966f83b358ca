//! Calls sent whole ([`WholeCalls`]): a call's start and argument deltas
//! wait for its end, and a call that never ends is never seen. The rule a
//! client needs when it must not act on (or show) a call the model did not
//! finish: the OpenAI delta rules (`toolscan-sse`), the JavaScript
//! middleware (through the WebAssembly module) and the Python wrapper all
//! take it from here.

use crate::event::EventRef;
use crate::sink::Sink;

/// Holds each call until its end. A call's [`ToolCallStart`] and
/// [`ToolCallArgs`] events wait; its [`ToolCallEnd`] sends the call whole,
/// as three events in a row (its start, all its arguments as one delta,
/// its end). A call that fails is dropped by what the parser sends next
/// (its markup, as text or reasoning; another call; the end of the
/// stream): nothing of it was sent, and its bytes arrive as text. Every
/// other event passes as it comes, diagnostics included (a call with an
/// unknown tool is still a call).
///
/// [`ToolCallStart`]: EventRef::ToolCallStart
/// [`ToolCallArgs`]: EventRef::ToolCallArgs
/// [`ToolCallEnd`]: EventRef::ToolCallEnd
///
/// ```
/// use toolscan_core::sink::WholeCalls;
/// use toolscan_core::{Event, Parser};
///
/// let mut p = Parser::for_format("hermes").unwrap();
/// let mut whole = WholeCalls::new();
/// let mut events: Vec<Event> = Vec::new();
/// p.feed_str_with(r#"Sure. <tool_call>{"name": "f", "argu"#, &mut whole.sink(&mut events));
/// assert_eq!(events.len(), 1, "the text; the call waits: {events:?}");
/// p.feed_str_with(r#"ments": {"a": 1}}</tool_call>"#, &mut whole.sink(&mut events));
/// assert!(matches!(
///     &events[1..],
///     [Event::ToolCallStart { .. }, Event::ToolCallArgs { .. }, Event::ToolCallEnd { .. }]
/// ));
///
/// // A call cut short: its markup comes back as text, and nothing else.
/// let mut p = Parser::for_format("hermes").unwrap();
/// let mut whole = WholeCalls::new();
/// let mut events: Vec<Event> = Vec::new();
/// p.feed_str_with(r#"<tool_call>{"name": "f", "arguments": {"a": "#, &mut whole.sink(&mut events));
/// p.finish_with(&mut whole.sink(&mut events));
/// assert!(!events.iter().any(|e| matches!(e, Event::ToolCallStart { .. })));
/// ```
#[derive(Clone, Debug, Default)]
pub struct WholeCalls {
    /// The parser index of the call begun and not yet ended, if any: its
    /// events wait.
    open: Option<usize>,
}

/// What [`WholeCalls::pass`] makes of an event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Gated<'e> {
    /// Sent as it came.
    Pass(EventRef<'e>),
    /// Waits with its call (a start or an argument delta): nothing now.
    Wait,
    /// The end of a call (this [`ToolCallEnd`](EventRef::ToolCallEnd)):
    /// send its start, its arguments and then this event
    /// ([`Gated::for_each`] does).
    Whole(EventRef<'e>),
}

impl<'e> Gated<'e> {
    /// The events to send now, in order: none, the event, or a call's
    /// start, arguments and end.
    pub fn for_each(self, mut f: impl FnMut(EventRef<'e>)) {
        match self {
            Gated::Pass(e) => f(e),
            Gated::Wait => {}
            Gated::Whole(end) => {
                if let EventRef::ToolCallEnd {
                    index,
                    id,
                    name,
                    arguments,
                } = end
                {
                    f(EventRef::ToolCallStart { index, id, name });
                    if !arguments.is_empty() {
                        f(EventRef::ToolCallArgs {
                            index,
                            delta: arguments,
                        });
                    }
                }
                f(end);
            }
        }
    }
}

impl WholeCalls {
    /// A gate with no call open.
    pub fn new() -> WholeCalls {
        WholeCalls::default()
    }

    /// What to send for `event`. A call's start and arguments wait; its end
    /// is the whole call (the end carries its id, name and all its
    /// arguments, which are the argument deltas concatenated). Text,
    /// reasoning, another call's start and the end of the stream drop a
    /// call that did not end.
    pub fn pass<'e>(&mut self, event: EventRef<'e>) -> Gated<'e> {
        match event {
            EventRef::ToolCallStart { index, .. } => {
                self.open = Some(index);
                Gated::Wait
            }
            EventRef::ToolCallArgs { index, .. } if self.open == Some(index) => Gated::Wait,
            // Deltas of no open call: of a call already dropped.
            EventRef::ToolCallArgs { .. } => Gated::Wait,
            EventRef::ToolCallEnd { .. } => {
                self.open = None;
                Gated::Whole(event)
            }
            EventRef::Diagnostic(_) => Gated::Pass(event),
            EventRef::Text(_) | EventRef::Reasoning(_) | EventRef::Done { .. } => {
                self.open = None;
                Gated::Pass(event)
            }
        }
    }

    /// Whether a call has begun and not ended (its events wait).
    pub fn holding(&self) -> bool {
        self.open.is_some()
    }

    /// A sink that passes what the gate lets through to `inner`.
    pub fn sink<'a, S: Sink + ?Sized>(&'a mut self, inner: &'a mut S) -> WholeSink<'a, S> {
        WholeSink { gate: self, inner }
    }
}

/// The sink of [`WholeCalls::sink`].
#[derive(Debug)]
pub struct WholeSink<'a, S: ?Sized> {
    gate: &'a mut WholeCalls,
    inner: &'a mut S,
}

impl<S: Sink + ?Sized> Sink for WholeSink<'_, S> {
    fn event(&mut self, event: EventRef<'_>) {
        let inner = &mut *self.inner;
        self.gate.pass(event).for_each(|e| inner.event(e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Diagnostic, DiagnosticKind, Event, FinishReason};

    fn start(index: usize) -> EventRef<'static> {
        EventRef::ToolCallStart {
            index,
            id: "c",
            name: "f",
        }
    }
    fn args(index: usize, delta: &'static str) -> EventRef<'static> {
        EventRef::ToolCallArgs { index, delta }
    }
    fn end(index: usize) -> EventRef<'static> {
        EventRef::ToolCallEnd {
            index,
            id: "c",
            name: "f",
            arguments: "{\"a\": 1}",
        }
    }

    /// What the gate sends for `input`, as owned events (merged as a
    /// `Vec<Event>` merges them).
    fn run(input: &[EventRef<'_>]) -> Vec<Event> {
        let mut gate = WholeCalls::new();
        let mut out: Vec<Event> = Vec::new();
        let mut sink = gate.sink(&mut out);
        for e in input {
            sink.event(*e);
        }
        out
    }

    fn whole(index: usize) -> Vec<Event> {
        let mut out: Vec<Event> = Vec::new();
        for e in [start(index), args(index, "{\"a\": 1}"), end(index)] {
            out.event(e);
        }
        out
    }

    #[test]
    fn a_call_waits_for_its_end_and_goes_out_whole() {
        let d = Diagnostic {
            kind: DiagnosticKind::UnknownTool,
            offset: 3,
            message: "unknown".into(),
        };
        // (input, what goes out)
        let rows: Vec<(Vec<EventRef<'_>>, Vec<Event>)> = vec![
            // Whole, its deltas however they fell.
            (
                vec![start(0), args(0, "{\"a\""), args(0, ": 1}"), end(0)],
                whole(0),
            ),
            // A diagnostic inside the call passes at once; the call still ends.
            (
                vec![
                    start(0),
                    EventRef::Diagnostic(&d),
                    args(0, "{\"a\": 1}"),
                    end(0),
                ],
                [vec![Event::Diagnostic(d.clone())], whole(0)].concat(),
            ),
            // Broken: its markup comes back as text; nothing else of it.
            (
                vec![start(0), args(0, "{\"a\""), EventRef::Text("<tool_call>{")],
                vec![Event::Text {
                    delta: "<tool_call>{".into(),
                }],
            ),
            // Broken inside reasoning: the same.
            (
                vec![start(0), EventRef::Reasoning("x")],
                vec![Event::Reasoning { delta: "x".into() }],
            ),
            // Cut by the end of the stream.
            (
                vec![
                    start(0),
                    args(0, "{"),
                    EventRef::Done {
                        finish_reason: FinishReason::Stop,
                    },
                ],
                vec![Event::Done {
                    finish_reason: FinishReason::Stop,
                }],
            ),
            // A call that failed, then the next one, which ends.
            (
                vec![
                    start(0),
                    args(0, "{"),
                    start(1),
                    args(1, "{\"a\": 1}"),
                    end(1),
                ],
                whole(1),
            ),
            // Late deltas of a dropped call stay dropped.
            (
                vec![start(0), EventRef::Text("t"), args(0, "{")],
                vec![Event::Text { delta: "t".into() }],
            ),
            // An end with no start seen is a whole call still.
            (vec![end(2)], whole(2)),
        ];
        for (i, (input, want)) in rows.iter().enumerate() {
            assert_eq!(&run(input), want, "row {i}");
        }
    }

    #[test]
    fn it_holds_only_between_a_start_and_what_ends_it() {
        let mut gate = WholeCalls::new();
        assert!(!gate.holding());
        assert_eq!(gate.pass(start(0)), Gated::Wait);
        assert!(gate.holding());
        assert_eq!(gate.pass(end(0)), Gated::Whole(end(0)));
        assert!(!gate.holding());
        assert_eq!(
            gate.pass(EventRef::Text("t")),
            Gated::Pass(EventRef::Text("t"))
        );
    }
}
