//! Running a block's program: each step a small reader fed with the
//! block's bytes (the step parsers of `steps.rs`, the value, Python and
//! JSON readers), the pending buffer keeping those bytes until the block's
//! fate is known, and what each outcome means — a call dispatched, a block
//! that ends, a block that fails and becomes text.
//!
//! `run.rs` holds the loop ([`run`]): it only dispatches: it guards against programs that spin, works
//! out the room the limits leave, and hands the step to its reader — one
//! file per kind of step: `marks.rs` (steps that read nothing), `bytes.rs`
//! (literals, blanks, words, forks), `capture.rs`, `then.rs`, `value.rs`,
//! `python.rs` (Python arguments and the reading over of a failed list
//! element), `json.rs`. What a reader sees of the block, and the `Flow` it
//! returns, are in `reader.rs`; `fail.rs` says what a failure does,
//! `end.rs` what the end of the stream does.

mod reader;

mod bytes;
mod capture;
mod end;
mod fail;
mod json;
mod marks;
mod python;
mod run;
mod steady;
mod then;
mod value;

pub(crate) use end::{finish_step, Finish};
pub(crate) use reader::{Block, BlockCtx, Outcome};
pub(crate) use run::{direct, run, steady};

/// Each reader, through [`run`], against a table of states (fresh, part
/// read) × inputs (what completes the step, what continues it, a byte that
/// fails it, a limit).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::call::calls::Session;
    use crate::engine::pending::{Chunk, Pending};
    use crate::event::{DiagnosticKind, Event};
    use crate::ids::{IdMint, IdSource};
    use crate::lang::format::{ByteSet, Label, Lit, PyStep, Step, ValueStep};
    use crate::lang::program::compile;
    use crate::lang::program::Op;
    use crate::offset::Offset;
    use crate::options::Limits;

    /// What a run ended with: where in its chunk, how, at which step.
    #[derive(Debug, PartialEq, Eq)]
    struct Ran {
        at: usize,
        outcome: &'static str,
        pc: usize,
    }

    /// Runs the program made of `steps` and a final `#` literal over each
    /// chunk in turn (the block's marker already read); the last run's
    /// result, and every event.
    fn run_steps(steps: Vec<Step>, chunks: &[&str], limits: Limits) -> (Ran, Vec<Event>) {
        drive(steps, chunks, limits, false)
    }

    /// [`run_steps`], each chunk offered to [`steady`] and [`direct`]
    /// first when `direct`.
    fn drive(steps: Vec<Step>, chunks: &[&str], limits: Limits, direct: bool) -> (Ran, Vec<Event>) {
        drive_with(steps, chunks, limits, direct, None)
    }

    /// [`drive`] with the request's tools.
    fn drive_with(
        steps: Vec<Step>,
        chunks: &[&str],
        limits: Limits,
        direct: bool,
        tools: Option<crate::tools::Tools>,
    ) -> (Ran, Vec<Event>) {
        let mut steps = steps;
        steps.push(Step::lit("#"));
        let prog = compile(&steps).expect("the program compiles");
        let mut b = Block::new(0, false);
        let mut pending = Pending::default();
        let mut session = Session::new(IdSource::new(&IdMint::Seeded(0)), tools, limits);
        let mut out: Vec<Event> = Vec::new();
        let (mut base, mut ran) = (Offset::START, None);
        for chunk in chunks {
            let ch = Chunk::from_str(chunk, base);
            base = base.after(chunk.len());
            let mut env = BlockCtx {
                pending: &mut pending,
                session: &mut session,
                out: &mut out,
            };
            if direct
                && (steady(&mut b, env.pending, env.out, chunk)
                    || super::direct(&prog, &mut b, &mut env, chunk))
            {
                let (at, outcome, pc) = (chunk.len(), "need more", b.pc());
                ran = Some(Ran { at, outcome, pc });
                continue;
            }
            let (at, outcome) = run(&prog, &mut b, &mut env, &ch, 0);
            let outcome = match outcome {
                Outcome::NeedMore => "need more",
                Outcome::Text => "text",
                Outcome::Skip(_) => "skip",
                Outcome::Replay(_) => "replay",
                Outcome::Reread(_) => "reread",
            };
            ran = Some(Ran {
                at,
                outcome,
                pc: b.pc(),
            });
            if outcome != "need more" {
                // The block is over (the parser would go back to text).
                break;
            }
        }
        (ran.expect("at least one chunk"), out)
    }

    fn ran(at: usize, outcome: &'static str, pc: usize) -> Ran {
        Ran { at, outcome, pc }
    }

    #[test]
    fn readers_by_state_and_input() {
        let lit = || vec![Step::lit("<a>")];
        let fork = || {
            vec![
                Step::Fork(vec![(ByteSet::Bytes(b"x".to_vec()), Label::from("x"))]),
                Step::label("x"),
                Step::lit("x"),
            ]
        };
        let name = || vec![Step::name_until(">")];
        let then = || {
            vec![
                Step::OneOf(vec![(Lit::new("<b>"), Label::from("b"))]),
                Step::label("b"),
            ]
        };
        let value = || vec![Step::key_until("="), Step::Value(ValueStep::until("</v>"))];
        let py = || vec![Step::Py(PyStep::keywords())];
        // (steps, chunks, where the last run ended)
        let table: Vec<(&str, Vec<Step>, Vec<&str>, Ran)> = vec![
            // A literal: whole, cut, wrong byte. The part of it matched is
            // markup to read again (`replay`), but for the block's own first
            // character, which is text (else the same block would open
            // there again, without end).
            ("lit whole", lit(), vec!["<a>"], ran(3, "need more", 1)),
            ("lit cut", lit(), vec!["<", "a>"], ran(2, "need more", 1)),
            ("lit part", lit(), vec!["<"], ran(1, "need more", 0)),
            ("lit wrong", lit(), vec!["<b"], ran(1, "text", 0)),
            ("lit cut, wrong", lit(), vec!["<", "b"], ran(0, "text", 0)),
            (
                "lit wrong after markup",
                vec![Step::lit("["), Step::lit("<a>")],
                vec!["[<b"],
                ran(2, "replay", 1),
            ),
            // Blanks: any number, then the next step.
            ("ws", vec![Step::Ws], vec![" \n "], ran(3, "need more", 0)),
            (
                "ws then",
                vec![Step::Ws],
                vec![" ", " #"],
                ran(2, "text", 2),
            ),
            // A fork on the next byte, or a failure.
            ("fork", fork(), vec!["x"], ran(1, "need more", 2)),
            ("fork none", fork(), vec!["y"], ran(0, "text", 0)),
            // A word up to its delimiter; cut inside it.
            ("name", name(), vec!["get>"], ran(4, "need more", 1)),
            ("name cut", name(), vec!["ge", "t>"], ran(2, "need more", 1)),
            ("name part", name(), vec!["get"], ran(3, "need more", 0)),
            // (A blank may end the word: the byte after it fails.)
            ("name bad", name(), vec!["g t>"], ran(2, "text", 0)),
            // One of several literals, or a failure.
            ("one of", then(), vec!["<b>"], ran(3, "need more", 1)),
            (
                "one of cut",
                then(),
                vec!["<", "b>"],
                ran(2, "need more", 1),
            ),
            ("one of none", then(), vec!["<c"], ran(1, "text", 0)),
            // JSON arguments: whole, cut inside a string, bad.
            (
                "json",
                vec![Step::args()],
                vec!["{\"a\": 1}"],
                ran(8, "need more", 1),
            ),
            (
                "json cut",
                vec![Step::args()],
                vec!["{\"a\": \"x", "y\"}"],
                ran(3, "need more", 1),
            ),
            (
                "json bad",
                vec![Step::args()],
                vec!["{\"a\" 1}"],
                ran(5, "text", 0),
            ),
            // A raw value up to its closing tag, cut inside the tag.
            ("value", value(), vec!["k=v 1</v>"], ran(9, "need more", 2)),
            (
                "value cut",
                value(),
                vec!["k=v 1</", "v>"],
                ran(2, "need more", 2),
            ),
            ("value part", value(), vec!["k=v 1"], ran(5, "need more", 1)),
            // Python arguments up to the closing parenthesis; a bad byte.
            ("py", py(), vec!["a=1, b='x')"], ran(11, "need more", 1)),
            (
                "py cut",
                py(),
                vec!["a=1, b='", "x')"],
                ran(3, "need more", 1),
            ),
            ("py bad", py(), vec!["a=1 ?"], ran(4, "text", 0)),
        ];
        for (what, steps, chunks, want) in table {
            let (got, _) = run_steps(steps, &chunks, Limits::default());
            assert_eq!(got, want, "{what}");
        }
    }

    /// The direct path of a chunk inside a JSON string or a raw value
    /// gives exactly the events of the runner, one by one (not only once
    /// coalesced), and ends in the same state, under every chunking —
    /// and is taken.
    #[test]
    fn the_direct_path_is_the_runners() {
        let value = || vec![Step::key_until("="), Step::Value(ValueStep::until("</v>"))];
        let cases: Vec<(Vec<Step>, &str)> = vec![
            (
                vec![Step::args()],
                r#"{"content": "line one,\nsaid \"hi\" \\ é 東京 \u00e9 end", "n": 1}"#,
            ),
            (
                value(),
                "k=some value < with a lone angle, é 東京 & more</v>",
            ),
            (value(), "k=value with a closer cut </"),
            (value(), "k=a < b, a <= b, x</y and <</v> < </v"),
            (value(), "k=if (a < b) { a </ b } </w </v </v>"),
            (
                value(),
                "k=a \"quoted\" word,\ta tab, a \\ and\nnew lines\n</v>",
            ),
        ];
        for (steps, input) in cases {
            for size in 1..=6 {
                let chunks = toolscan_testkit::prose::pieces(input, size);
                let want = run_steps(steps.clone(), &chunks, Limits::default());
                let got = drive(steps.clone(), &chunks, Limits::default(), true);
                assert_eq!(got, want, "{input:?} in pieces of {size}");
            }
            // Taken: a chunk inside the string or value is read directly.
            let chunks = toolscan_testkit::prose::pieces(input, 2);
            let limits = Limits {
                max_call_bytes: input.len() / 2,
                ..Limits::default()
            };
            // Near a limit too: the same failure at the same byte.
            let want = run_steps(steps.clone(), &chunks, limits);
            let got = drive(steps.clone(), &chunks, limits, true);
            assert_eq!(got, want, "{input:?} with a limit");
        }
        for (steps, head, inside, end) in [
            (vec![Step::args()], "{\"a\": \"", "text", "x\""),
            (value(), "k=ab", "text", "x<"),
            (value(), "k=ab", "a < b", "x</"),
            (value(), "k=ab", "< b", "<x</"),
        ] {
            after_head(&steps, head, None, |prog, b, env| {
                assert!(direct(prog, b, env, inside), "{head}: inside");
                assert!(!direct(prog, b, env, end), "{head}: at markup");
            });
        }
    }

    /// Runs the program of `steps` over `head` (the block's marker already
    /// read), then hands the block to `then`.
    fn after_head(
        steps: &[Step],
        head: &str,
        tools: Option<crate::tools::Tools>,
        then: impl FnOnce(&[Op], &mut Block, &mut BlockCtx<'_>),
    ) {
        let prog = compile(steps).expect("compiles");
        let mut b = Block::new(0, false);
        let mut pending = Pending::default();
        let mut session = Session::new(IdSource::new(&IdMint::Seeded(0)), tools, Limits::default());
        let mut out: Vec<Event> = Vec::new();
        let mut env = BlockCtx {
            pending: &mut pending,
            session: &mut session,
            out: &mut out,
        };
        let head = Chunk::from_str(head, Offset::START);
        run(&prog, &mut b, &mut env, &head, 0);
        then(&prog, &mut b, &mut env);
    }

    /// The steady run (`steady.rs`) of a named call's string value or JSON
    /// string gives exactly the events of the runner, one by one, under
    /// every chunking, near a limit too; and it is taken.
    #[test]
    fn the_steady_run_is_the_runners() {
        use crate::lang::format::Trim;
        let tools = crate::tools::Tools::from_json(&serde_json::json!([{
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": { "k": { "type": "string" } }
                }
            }
        }]))
        .expect("tools");
        let value = |v: ValueStep| {
            vec![
                Step::name_until(">"),
                Step::key_until("="),
                Step::Value(v),
                Step::Dispatch,
            ]
        };
        let json = || vec![Step::name_until(">"), Step::args(), Step::Dispatch];
        let text = "plain words,\nsaid \"hi\"\t\\ é 東京 \u{1} ☂\n\nx\ny\n \n";
        let cases: Vec<(Vec<Step>, String)> = vec![
            (
                value(ValueStep::until("</v>").trim(Trim::Newline)),
                format!("f>k=\n{text}a < b\n<c <<\n</v>"),
            ),
            (
                value(ValueStep::until("</v>").trim(Trim::Newline)),
                format!("f>k=\n{text}\n\n</v>"),
            ),
            (
                value(ValueStep::until("</v>")),
                format!("f>k={text} a<<b <\n<w <</v>"),
            ),
            (
                value(ValueStep::until("</v>").trim(Trim::All)),
                format!("f>k= {text} a <b\n<</v>"),
            ),
            (
                value(ValueStep::until("</v>").entities()),
                format!("f>k={text} &amp; &lt;b&gt; &#233;</v>"),
            ),
            (
                json(),
                format!(
                    "f>{{\"k\": {}, \"n\": 1}}",
                    serde_json::to_string(&format!("{text}\u{1f}\\/")).expect("json")
                ),
            ),
        ];
        for (steps, input) in &cases {
            for size in 1..=8 {
                let chunks = toolscan_testkit::prose::pieces(input, size);
                let run = |direct, limits| {
                    drive_with(steps.clone(), &chunks, limits, direct, Some(tools.clone()))
                };
                let want = run(false, Limits::default());
                assert!(
                    want.1
                        .iter()
                        .any(|e| matches!(e, Event::ToolCallEnd { .. })),
                    "{input:?}: a call ({:?})",
                    want.1
                );
                assert_eq!(
                    run(true, Limits::default()),
                    want,
                    "{input:?} in pieces of {size}"
                );
                // A limit met inside the run: the same failure at the same byte.
                let limits = Limits {
                    max_call_bytes: input.len() * 2 / 3,
                    ..Limits::default()
                };
                assert_eq!(
                    run(true, limits),
                    run(false, limits),
                    "{input:?} with a limit"
                );
            }
        }
        // Taken: after a chunk read directly, the next is the run's.
        for (steps, head, stop) in [
            (
                value(ValueStep::until("</v>").trim(Trim::Newline)),
                "f>k=\nab",
                "</",
            ),
            (json(), "f>{\"k\": \"ab", "\""),
        ] {
            after_head(&steps, head, Some(tools.clone()), |prog, b, env| {
                assert!(!b.is_steady(), "{head}: no run yet");
                assert!(direct(prog, b, env, "cd"), "{head}: direct");
                assert!(b.is_steady(), "{head}: a run begins");
                assert!(steady(b, env.pending, env.out, "ef"), "{head}: the run's");
                assert!(!steady(b, env.pending, env.out, stop), "{head}: {stop}");
            });
        }
    }

    /// A reader that would pass the call limit fails at the byte that would
    /// exceed it, with a diagnostic of its kind; one that reads nothing more
    /// does not.
    #[test]
    fn readers_stop_at_the_call_limit() {
        let limits = Limits {
            max_call_bytes: 4,
            ..Limits::default()
        };
        for (what, steps, input) in [
            ("lit", vec![Step::lit("<abcdef>")], "<abcdef>"),
            ("name", vec![Step::name_until(">")], "getweather>"),
            ("json", vec![Step::args()], "{\"a\": 1}"),
        ] {
            let (got, events) = run_steps(steps, &[input], limits);
            assert_eq!(got.outcome, "text", "{what}: {got:?}");
            assert!(
                events
                    .iter()
                    .any(|e| matches!(e, Event::Diagnostic(d) if d.kind == DiagnosticKind::Limit)),
                "{what}: {events:?}"
            );
        }
    }
}
