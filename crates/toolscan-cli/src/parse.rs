//! `toolscan parse`: read model output, feed it to a parser in the planned
//! pieces, write events (or the final response) as JSON Lines.
//!
//! Everything that can fail because of the user's arguments (format name,
//! tools file, input file) is checked before the first byte is written.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use toolscan_core::{format_for_model, Event, Options, Parser, Registry, Response, Tools};

use crate::args::{Output, ParseArgs};
use crate::chunking::{ChunkPlan, Chunker};
use crate::failure::{warn, Failure};

/// Size of the blocks read from the input.
const READ_BLOCK: usize = 8 * 1024;

/// Runs `toolscan parse`.
pub fn run(args: ParseArgs) -> Result<(), Failure> {
    let format = resolve_format(args.format.as_deref(), args.model.as_deref());
    let grammar = Registry::builtin()
        .grammar(&format)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let options = Options {
        tools,
        ids: args.ids.mint(),
        reasoning: args.reasoning,
        ..Options::default()
    };
    let input = open_input(args.input.as_deref())?;
    let mut parser = Parser::new(grammar, options);
    let mut chunker = Chunker::new(args.chunk.unwrap_or(ChunkPlan::AsRead));
    let stdout = io::stdout();
    let mut sink = Sink::new(
        args.output,
        io::BufWriter::new(stdout.lock()),
        args.reasoning,
    );
    stream(input, &mut parser, &mut chunker, &mut sink)
}

/// The format to use: `--format` if given, else the one `--model` maps to,
/// else `auto` (with a warning when `--model` named an unknown model).
fn resolve_format(format: Option<&str>, model: Option<&str>) -> String {
    if let Some(name) = format {
        return name.to_owned();
    }
    let Some(model) = model else {
        return "auto".to_owned();
    };
    match format_for_model(model) {
        Some(name) if Registry::builtin().get(name).is_some() => name.to_owned(),
        Some(name) => {
            warn(&format!(
                "model `{model}` writes format `{name}`, which this build does not implement yet; \
                 detecting it from the content (--format auto)"
            ));
            "auto".to_owned()
        }
        None => {
            warn(&format!(
                "no known format for model `{model}`; detecting it from the content (--format auto)"
            ));
            "auto".to_owned()
        }
    }
}

/// Reads and checks the `--tools` file.
fn read_tools(path: &Path) -> Result<Tools, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read tools file `{}`: {e}", path.display())))?;
    Tools::from_json_str(&text)
        .map_err(|e| Failure::Usage(format!("tools file `{}`: {e}", path.display())))
}

/// Opens the input: a file, or stdin for `-` or no argument.
fn open_input(path: Option<&Path>) -> Result<Input, Failure> {
    match path {
        None => Ok(Input::Stdin),
        Some(p) if p.as_os_str() == "-" => Ok(Input::Stdin),
        Some(p) => File::open(p)
            .map(|f| Input::File(f, p.display().to_string()))
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", p.display()))),
    }
}

/// Where the model output comes from.
enum Input {
    /// Standard input (`-` or no FILE).
    Stdin,
    /// The file and its name for messages.
    File(File, String),
}

impl Input {
    /// The name used in messages.
    fn name(&self) -> &str {
        match self {
            Input::Stdin => "<stdin>",
            Input::File(_, name) => name,
        }
    }
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
    let mut events = Vec::new();
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Usage(format!("cannot read `{name}`: {e}"))),
        };
        chunker.push(&block[..n], &mut |piece| {
            feed(parser, piece, &mut events, sink)
        })?;
        sink.flush()?;
    }
    chunker.finish(&mut |piece| feed(parser, piece, &mut events, sink))?;
    parser.finish_into(&mut events);
    sink.write_all(events.drain(..))?;
    sink.close()
}

/// Feeds one piece and passes the events it completes to `sink`.
fn feed<W: Write>(
    parser: &mut Parser,
    piece: &[u8],
    events: &mut Vec<Event>,
    sink: &mut Sink<W>,
) -> Result<(), Failure> {
    parser.feed_into(piece, events);
    sink.write_all(events.drain(..))
}

/// Writes events as JSON Lines, or folds them into the final response.
struct Sink<W: Write> {
    out: W,
    /// `Some` for `--output final`.
    response: Option<Response>,
}

impl<W: Write> Sink<W> {
    fn new(output: Output, out: W, reasoning: bool) -> Self {
        let response = match output {
            Output::Events => None,
            // With reasoning separation on, the final object always has a
            // "reasoning" field (contract §1), empty if there was none.
            Output::Final => Some(Response {
                reasoning: reasoning.then(String::new),
                ..Response::default()
            }),
        };
        Sink { out, response }
    }

    /// Takes events in order.
    fn write_all(&mut self, events: impl Iterator<Item = Event>) -> Result<(), Failure> {
        for event in events {
            match &mut self.response {
                Some(response) => response.push(&event),
                None => self.line(|out| serde_json::to_writer(out, &event))?,
            }
        }
        Ok(())
    }

    /// Writes one line of JSON, produced by `write`.
    fn line(
        &mut self,
        write: impl FnOnce(&mut W) -> serde_json::Result<()>,
    ) -> Result<(), Failure> {
        write(&mut self.out).map_err(|e| Failure::Output(e.into()))?;
        self.out.write_all(b"\n").map_err(Failure::Output)
    }

    fn flush(&mut self) -> Result<(), Failure> {
        self.out.flush().map_err(Failure::Output)
    }

    /// Writes the final response (if any) and flushes.
    fn close(&mut self) -> Result<(), Failure> {
        if let Some(response) = self.response.take() {
            self.line(|out| serde_json::to_writer(out, &response))?;
        }
        self.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_format_wins_over_model() {
        assert_eq!(
            resolve_format(Some("hermes"), Some("Qwen/Qwen3-8B")),
            "hermes"
        );
        assert_eq!(resolve_format(Some("auto"), None), "auto");
    }

    #[test]
    fn defaults_to_auto() {
        assert_eq!(resolve_format(None, None), "auto");
        assert_eq!(resolve_format(None, Some("no-such/model-xyz")), "auto");
    }

    #[test]
    fn model_maps_to_its_format() {
        let model = "Qwen/Qwen3-8B";
        let want = format_for_model(model).unwrap_or("auto");
        assert_eq!(resolve_format(None, Some(model)), want);
    }

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
}
