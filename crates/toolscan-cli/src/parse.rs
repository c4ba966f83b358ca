//! `toolscan parse`: read model output, feed it to a parser in the planned
//! pieces, write events (or the final response) as JSON Lines.
//!
//! Everything that can fail because of the user's arguments (format name,
//! tools file, input file) is checked before the first byte is written.

use std::io::{self, Read, Write};

use toolscan_core::{Event, EventRef, Parser, Response, Sink as EventSink};

use crate::args::{Output, ParseArgs};
use crate::chunking::{ChunkPlan, Chunker};
use crate::failure::Failure;
use crate::setup::{grammar_and_options, open_input, Input};

/// Size of the blocks read from the input.
const READ_BLOCK: usize = 8 * 1024;

/// Runs `toolscan parse`.
pub fn run(args: ParseArgs) -> Result<(), Failure> {
    let (grammar, options) = grammar_and_options(&args.content)?;
    let input = open_input(args.input.as_deref())?;
    let mut parser = Parser::new(grammar, options);
    let mut chunker = Chunker::new(args.chunk.unwrap_or(ChunkPlan::AsRead));
    let stdout = io::stdout();
    let mut sink = Sink::new(
        args.output,
        io::BufWriter::new(stdout.lock()),
        args.content.reasoning,
    );
    stream(input, &mut parser, &mut chunker, &mut sink)
}

/// Reads the whole input block by block, feeding every piece of the plan,
/// then finishes the parser. Output is flushed after each block read, so
/// events stream out as the input arrives.
fn stream<W: Write>(
    input: Input,
    parser: &mut Parser,
    chunker: &mut Chunker,
    sink: &mut Sink<W>,
) -> Result<(), Failure> {
    let name = input.name().to_owned();
    let stdin = io::stdin();
    let mut reader: Box<dyn Read + '_> = match input {
        Input::Stdin => Box::new(stdin.lock()),
        Input::File(f, _) => Box::new(f),
    };
    let mut block = vec![0u8; READ_BLOCK];
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Usage(format!("cannot read `{name}`: {e}"))),
        };
        chunker.push(&block[..n], &mut |piece| feed(parser, piece, sink))?;
        sink.flush()?;
    }
    chunker.finish(&mut |piece| feed(parser, piece, sink))?;
    parser.finish_with(sink);
    sink.failed()?;
    sink.close()
}

/// Feeds one piece; its events go straight to `sink`, borrowed.
fn feed<W: Write>(parser: &mut Parser, piece: &[u8], sink: &mut Sink<W>) -> Result<(), Failure> {
    parser.feed_with(piece, sink);
    sink.failed()
}

/// Writes events as JSON Lines (one per event, or coalesced), or folds them
/// into the final response.
struct Sink<W: Write> {
    out: W,
    mode: Mode,
    /// The first write error; nothing more is written after it.
    error: Option<io::Error>,
}

/// What a [`Sink`] does with events.
enum Mode {
    /// `--output events`: one line per event.
    Events,
    /// `--output coalesced`: one line per run of deltas.
    Coalesced(Coalescer),
    /// `--output final`: the response being collected.
    Final(Response),
}

impl<W: Write> Sink<W> {
    fn new(output: Output, out: W, reasoning: bool) -> Self {
        let mode = match output {
            Output::Events => Mode::Events,
            Output::Coalesced => Mode::Coalesced(Coalescer::default()),
            // With reasoning separation on, the final object always has a
            // "reasoning" field, empty if there was none.
            Output::Final => {
                let mut r = Response::default();
                r.reasoning = reasoning.then(String::new);
                Mode::Final(r)
            }
        };
        Sink {
            out,
            mode,
            error: None,
        }
    }

    /// Takes owned events in order.
    #[cfg(test)]
    fn write_all(&mut self, events: impl Iterator<Item = Event>) -> Result<(), Failure> {
        for event in events {
            self.event(event.as_ref());
        }
        self.failed()
    }

    /// The first write error, if any.
    fn failed(&mut self) -> Result<(), Failure> {
        match self.error.take() {
            Some(e) => Err(Failure::Output(e)),
            None => Ok(()),
        }
    }

    /// Flushes what was written so far (a coalesced run stays open).
    fn flush(&mut self) -> Result<(), Failure> {
        self.out.flush().map_err(Failure::Output)
    }

    /// Ends the output: closes an open coalesced run or writes the final
    /// response, and flushes.
    fn close(&mut self) -> Result<(), Failure> {
        match &mut self.mode {
            Mode::Events => {}
            Mode::Coalesced(c) => c.close(&mut self.out).map_err(Failure::Output)?,
            Mode::Final(response) => {
                let response = std::mem::take(response);
                line(&mut self.out, |o| serde_json::to_writer(o, &response))
                    .map_err(Failure::Output)?;
            }
        }
        self.flush()
    }
}

/// The parser's events, borrowed, written as they come.
impl<W: Write> EventSink for Sink<W> {
    fn event(&mut self, event: EventRef<'_>) {
        if self.error.is_some() {
            return;
        }
        let r = match &mut self.mode {
            Mode::Events => line(&mut self.out, |o| serde_json::to_writer(o, &event)),
            Mode::Coalesced(c) => c.write(&mut self.out, event),
            Mode::Final(response) => {
                response.event(event);
                Ok(())
            }
        };
        if let Err(e) = r {
            self.error = Some(e);
        }
    }
}

/// Writes one line of JSON, produced by `write`.
fn line<W: Write>(
    out: &mut W,
    write: impl FnOnce(&mut W) -> serde_json::Result<()>,
) -> io::Result<()> {
    write(&mut *out)?;
    out.write_all(b"\n")
}

/// A run of deltas that merge into one line: `text`, `reasoning`, or the
/// `tool_call_args` of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Text,
    Reasoning,
    Args(usize),
}

impl Run {
    /// The run an event belongs to, and its delta; `None` for the other
    /// events.
    fn of(event: EventRef<'_>) -> Option<(Run, &str)> {
        match event {
            EventRef::Text(delta) => Some((Run::Text, delta)),
            EventRef::Reasoning(delta) => Some((Run::Reasoning, delta)),
            EventRef::ToolCallArgs { index, delta } => Some((Run::Args(index), delta)),
            _ => None,
        }
    }

    /// The event of this run with an empty delta.
    fn empty(self) -> Event {
        let delta = toolscan_core::Delta::default();
        match self {
            Run::Text => Event::Text { delta },
            Run::Reasoning => Event::Reasoning { delta },
            Run::Args(index) => Event::ToolCallArgs { index, delta },
        }
    }
}

/// `--output coalesced`: the event lines with each run of consecutive deltas
/// merged into one line, written as the deltas come.
///
/// A run's line is opened with its first delta and the JSON string of
/// `delta` is continued with each next one; the line is closed when an event
/// of another kind comes, or at the end. Because a JSON string's escaping is
/// done character by character, the line is byte for byte what serialising
/// the merged event would give; because the core's coalesced events do not
/// depend on chunking, neither does this output. Memory does not grow with
/// the length of a run.
#[derive(Debug, Default)]
struct Coalescer {
    /// The run whose line is open.
    open: Option<Run>,
}

impl Coalescer {
    /// Writes `event`: continues the open run, or closes it and writes the
    /// event (opening a new run if it is a delta).
    fn write(&mut self, out: &mut impl Write, event: EventRef<'_>) -> io::Result<()> {
        let run = Run::of(event);
        if let (Some(open), Some((run, delta))) = (self.open, run) {
            if open == run {
                return write_escaped(out, delta);
            }
        }
        self.close(out)?;
        match run {
            Some((run, delta)) => match open_line(&run.empty()) {
                Some(head) => {
                    out.write_all(head.as_bytes())?;
                    self.open = Some(run);
                    write_escaped(out, delta)
                }
                // The event does not serialise with `delta` last: no
                // merging, one line per event.
                None => line(out, |o| serde_json::to_writer(o, &event)),
            },
            None => line(out, |o| serde_json::to_writer(o, &event)),
        }
    }

    /// Closes the open run's line, if any.
    fn close(&mut self, out: &mut impl Write) -> io::Result<()> {
        match self.open.take() {
            Some(_) => out.write_all(b"\"}\n"),
            None => Ok(()),
        }
    }
}

/// The JSON of an event with an empty `delta` as its last field, cut just
/// after the opening quote of that delta: `{"type":"text","delta":"`.
fn open_line(empty: &Event) -> Option<String> {
    const EMPTY_DELTA: &str = "\"delta\":\"\"}";
    let json = serde_json::to_string(empty).ok()?;
    let head = json.strip_suffix(EMPTY_DELTA)?;
    Some(format!("{head}\"delta\":\""))
}

/// Writes `s` escaped as the inside of a JSON string.
fn write_escaped(out: &mut impl Write, s: &str) -> io::Result<()> {
    if s.is_empty() {
        return Ok(());
    }
    let quoted = serde_json::to_string(s)?;
    out.write_all(&quoted.as_bytes()[1..quoted.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_mode_writes_one_line_per_event() {
        let mut buf = Vec::new();
        let mut sink = Sink::new(Output::Events, &mut buf, false);
        sink.write_all(
            vec![
                Event::Text {
                    delta: "a\nb".into(),
                },
                Event::Done {
                    finish_reason: toolscan_core::FinishReason::Stop,
                },
            ]
            .into_iter(),
        )
        .unwrap();
        sink.close().unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text,
            "{\"type\":\"text\",\"delta\":\"a\\nb\"}\n{\"type\":\"done\",\"finish_reason\":\"stop\"}\n"
        );
    }

    #[test]
    fn final_mode_writes_one_object() {
        let mut buf = Vec::new();
        let mut sink = Sink::new(Output::Final, &mut buf, false);
        sink.write_all(vec![Event::Text { delta: "hi".into() }].into_iter())
            .unwrap();
        sink.close().unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["text"], "hi");
    }

    /// Events with deltas that need escaping, in runs of every kind.
    fn sample() -> Vec<Event> {
        let text = |d: &str| Event::Text { delta: d.into() };
        let args = |index, d: &str| Event::ToolCallArgs {
            index,
            delta: d.into(),
        };
        vec![
            text("a \"quoted\" \\ line\n"),
            text(""),
            text("\u{1} tab\t Zürich 東京 😀 \u{2028}"),
            Event::Reasoning { delta: "hm".into() },
            Event::Reasoning {
                delta: "m…".into()
            },
            Event::ToolCallStart {
                index: 0,
                id: "call_1".into(),
                name: "f".into(),
            },
            args(0, "{\"q\": "),
            args(0, "\"a\\\"b\"}"),
            args(1, "{}"),
            text("x"),
            Event::Done {
                finish_reason: toolscan_core::FinishReason::Stop,
            },
        ]
    }

    /// What `--output coalesced` must print: the core's coalesced events,
    /// one JSON line each.
    fn want_coalesced(events: Vec<Event>) -> String {
        toolscan_core::coalesce(events)
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect()
    }

    fn write_coalesced(events: &[Event], batch: usize) -> String {
        let mut buf = Vec::new();
        let mut sink = Sink::new(Output::Coalesced, &mut buf, false);
        for part in events.chunks(batch) {
            sink.write_all(part.iter().cloned()).unwrap();
            sink.flush().unwrap();
        }
        sink.close().unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn coalesced_mode_writes_the_merged_events() {
        let events = sample();
        let want = want_coalesced(events.clone());
        for batch in 1..=events.len() {
            assert_eq!(write_coalesced(&events, batch), want, "batch {batch}");
        }
    }

    #[test]
    fn coalesced_mode_merges_deltas_however_they_are_cut() {
        // The same text cut into deltas at every character boundary.
        let text = "a\"b\\c\nd\u{1}é東😀";
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for &cut in &cuts {
            let events = vec![
                Event::Text {
                    delta: text[..cut].into(),
                },
                Event::Text {
                    delta: text[cut..].into(),
                },
            ];
            assert_eq!(
                write_coalesced(&events, 1),
                want_coalesced(vec![Event::Text { delta: text.into() }]),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn every_run_kind_can_be_streamed() {
        for run in [Run::Text, Run::Reasoning, Run::Args(3)] {
            let head = open_line(&run.empty()).expect("delta is the last field");
            assert!(head.ends_with("\"delta\":\""), "{head}");
        }
    }

    #[test]
    fn coalesced_mode_with_no_deltas_and_at_the_end_of_a_run() {
        let done = Event::Done {
            finish_reason: toolscan_core::FinishReason::Stop,
        };
        assert_eq!(
            write_coalesced(std::slice::from_ref(&done), 1),
            want_coalesced(vec![done])
        );
        // A run open at the end is closed.
        let t = vec![Event::Text { delta: "t".into() }];
        assert_eq!(
            write_coalesced(&t, 1),
            "{\"type\":\"text\",\"delta\":\"t\"}\n"
        );
    }
}
