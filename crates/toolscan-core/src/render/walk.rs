//! The walk: a format's programs run as writers. Each step writes what it
//! would read — a literal its bytes, a captured name the call's name, a
//! JSON step the arguments or the call object, a raw value each
//! parameter's value — and where the program branches (a fork, `one_of`,
//! `then`, a capture's delimiters), the branches are tried in turn
//! (a [`Hint`]'s preferred one first), depth first, until one writes every
//! call. A fork's branch holds only if the next byte written is one it
//! takes; a path that loops without writing anything of a call is given
//! up. The first complete path that reads back as the response wins (the
//! check is the caller's, passed as `accept`).
//!
//! The search is a loop over an explicit stack of choices, never a
//! recursion: a response of any number of calls and keys runs on any
//! stack. What is written lives once, on the [`Tape`]: since paths are
//! tried depth first, going back to a choice cuts the tape back to where
//! it stood there, and a choice keeps only the small rest of the state
//! ([`State`]: no byte written is in it). Time and memory are linear in
//! the steps run, which the budget bounds.

use std::collections::HashMap;

use crate::lang::format::{
    ByteSet, Capture, Close, Container, Field, Format, Hint, JsonStep, Label, Lit, Opener, PyArgs,
    Shape, Step, Style, TypeWords, ValueStep,
};
use crate::lang::hint::{Frame as TurnFrame, PyValues};
use crate::render::value::{json, py_args, py_repr, xml_escape, Node};
use crate::scan::marker::is_word;
use crate::tools::Tools;

/// A call to write: its name, its arguments (an object's members) and the
/// id it may carry.
pub(crate) struct Item<'a> {
    pub name: &'a str,
    pub args: &'a [(String, Node)],
    pub id: Option<&'a str>,
}

/// A byte the next write must (or must not) begin with.
#[derive(Clone)]
enum Pending<'a> {
    /// A fork took branch `chosen`: the next byte is in its set and in no
    /// set before it (the end of the stream, for an `End` set).
    Fork(&'a [(ByteSet, Label)], usize),
    /// A capture ended by a stop byte: the next byte is one of them (or
    /// the stream ends, if it may).
    Stop(&'a [u8], bool),
}

/// A container of parameters being written (nested parameter markup).
#[derive(Clone)]
struct Frame<'a> {
    items: Items<'a>,
    next: usize,
    /// The closer of the value that opened it (`</arg>`, `</item>`).
    close: Option<&'a Lit>,
}

#[derive(Clone, Copy)]
enum Items<'a> {
    Obj(&'a [(String, Node)]),
    Arr(&'a [Node]),
}

impl Items<'_> {
    fn len(&self) -> usize {
        match self {
            Items::Obj(m) => m.len(),
            Items::Arr(v) => v.len(),
        }
    }
}

/// How far the current call's arguments are written.
#[derive(Clone)]
enum Args<'a> {
    Untouched,
    Whole,
    /// The containers open, outermost first (as deep as the value nests).
    Params(Vec<Frame<'a>>),
}

/// The call being written.
#[derive(Clone)]
struct Current<'a> {
    named: bool,
    args: Args<'a>,
    /// The value of the parameter whose key was written last, and its key.
    value: Option<(&'a str, &'a Node)>,
    /// A nested container a value opened, and that value's closer.
    nested: Option<(&'a Node, Option<&'a Lit>)>,
    /// `string_param`: the next value is the tool's one string parameter.
    string_param: Option<&'a str>,
}

/// What the path being tried has written. One tape serves every path:
/// paths are tried depth first, so going back to a choice cuts the tape
/// back to its [`Mark`] there, and nothing written is ever copied.
#[derive(Default)]
pub(crate) struct Tape {
    /// The bytes written.
    pub out: String,
    /// What the frame wrote before the text (it reads back as text).
    pub before: String,
    /// What was written between blocks, and the frame's separators after
    /// the text (they read back as text).
    pub between: String,
    /// Which calls went out with their own id.
    pub id_written: Vec<bool>,
    /// Each change made to `id_written` (the call, its value before), in
    /// order: a cut undoes those made after its mark.
    undo: Vec<(usize, bool)>,
}

/// The tape's lengths at a choice.
#[derive(Clone, Copy)]
struct Mark {
    out: usize,
    between: usize,
    undo: usize,
}

impl Tape {
    fn mark(&self) -> Mark {
        Mark {
            out: self.out.len(),
            between: self.between.len(),
            undo: self.undo.len(),
        }
    }

    /// Back to `m`: what was written since is dropped.
    fn cut(&mut self, m: Mark) {
        self.out.truncate(m.out);
        self.between.truncate(m.between);
        while self.undo.len() > m.undo {
            if let Some((i, old)) = self.undo.pop() {
                self.id_written[i] = old;
            }
        }
    }

    fn set_id(&mut self, i: usize, written: bool) {
        if self.id_written[i] != written {
            self.undo.push((i, self.id_written[i]));
            self.id_written[i] = written;
        }
    }
}

/// Everything else a path has decided so far: small (as deep as a value
/// nests, as long as a program), so a choice keeps a copy of it.
#[derive(Clone)]
struct State<'a> {
    /// The next call to write.
    ci: usize,
    call: Option<Current<'a>>,
    /// Calls completed in the current block.
    block_calls: usize,
    hint: Option<&'a Hint>,
    pending: Option<Pending<'a>>,
    /// Steps run since something of a call was last written (a loop
    /// without progress is given up).
    seen: Vec<usize>,
    /// Where the current block began, and the marker it must begin with
    /// (a replayed marker is written by the program itself).
    block_start: usize,
    replay: Option<&'a [u8]>,
}

/// What a choice chooses between (the alternatives are indices into it).
#[derive(Clone, Copy)]
enum Kind<'a> {
    /// A new block: the format's openers.
    Openers { first: bool },
    /// A capture's delimiters, at step `pc` of opener `k`.
    Delims { k: usize, pc: usize, c: &'a Capture },
    /// A fork's branches.
    Fork {
        k: usize,
        alts: &'a [(ByteSet, Label)],
    },
    /// A `one_of`'s literals.
    OneOf { k: usize, opts: &'a [(Lit, Label)] },
    /// A `then`'s literals (the whitespace of a written closer first),
    /// or the block's end (`None`).
    Then {
        k: usize,
        opts: &'a [(Lit, Label)],
        lead: &'a str,
    },
    /// The nesting literals of a value that is an object or a list.
    Nest {
        k: usize,
        v: &'a ValueStep,
        value: &'a Node,
    },
}

/// A point where the path branched: the state there, the tape's mark,
/// and the alternatives in the order they are tried.
struct Choice<'a> {
    st: State<'a>,
    mark: Mark,
    kind: Kind<'a>,
    order: Vec<Option<usize>>,
    next: usize,
}

/// Where a path goes next (`None` in its place: the path fails, and the
/// search goes back to the latest choice with an alternative left).
enum Flow<'a> {
    /// Run opener `k`'s program from step `pc`.
    Go(State<'a>, usize, usize),
    /// A new block.
    Block(State<'a>, bool),
    /// A branch: its alternatives are tried in `order`, each from this
    /// state and the tape as it is now.
    Choose(State<'a>, Kind<'a>, Vec<Option<usize>>),
    /// The path is complete, and accepted.
    Done,
}

/// Why no path was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No path writes the calls and reads back.
    NoPath,
    /// The search ran out of steps.
    Budget,
}

pub(crate) struct Walk<'a, F> {
    format: &'a Format,
    /// How the format's templates frame a turn with calls.
    frame: Option<&'a TurnFrame>,
    /// Whether the response has text before its calls.
    has_text: bool,
    items: &'a [Item<'a>],
    tools: Option<&'a Tools>,
    labels: Vec<HashMap<&'a str, usize>>,
    /// Steps left to run; `size` more for each call and each parameter.
    budget: usize,
    out_of_budget: bool,
    tape: Tape,
    /// The choices of the path being tried, the latest last.
    choices: Vec<Choice<'a>>,
    accept: F,
}

impl<'a, F: FnMut(&Tape) -> bool> Walk<'a, F> {
    /// A walk writing `items`; `size` is how many calls and parameters
    /// (every member and item, nested ones too) they hold, for the
    /// budget.
    pub(crate) fn new(
        format: &'a Format,
        frame: &'a TurnFrame,
        items: &'a [Item<'a>],
        size: usize,
        tools: Option<&'a Tools>,
        accept: F,
    ) -> Walk<'a, F> {
        let labels = format
            .openers
            .iter()
            .map(|o| {
                o.program
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| match s {
                        Step::Label(l) => Some((l.as_str(), i)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        Walk {
            format,
            frame: frame.is_set().then_some(frame),
            has_text: false,
            items,
            tools,
            labels,
            budget: 200_000usize.saturating_add(size.saturating_mul(64)),
            out_of_budget: false,
            tape: Tape::default(),
            choices: Vec::new(),
            accept,
        }
    }

    /// The first path that writes `text` then every call, as the caller
    /// accepts it: its tape.
    pub(crate) fn run(&mut self, text: &str) -> Result<Tape, Outcome> {
        let before = match self.frame {
            Some(f) if !self.items.is_empty() => f.before.as_deref().unwrap_or(""),
            _ => "",
        };
        self.has_text = !text.is_empty();
        self.tape = Tape {
            out: format!("{before}{text}"),
            before: before.to_owned(),
            between: String::new(),
            id_written: vec![false; self.items.len()],
            undo: Vec::new(),
        };
        self.choices.clear();
        let st = State {
            ci: 0,
            call: None,
            block_calls: 0,
            hint: None,
            pending: None,
            seen: Vec::new(),
            block_start: 0,
            replay: None,
        };
        if self.items.is_empty() {
            return if (self.accept)(&self.tape) {
                Ok(std::mem::take(&mut self.tape))
            } else {
                Err(Outcome::NoPath)
            };
        }
        let mut flow = Some(Flow::Block(st, true));
        loop {
            flow = match flow {
                Some(Flow::Go(st, k, pc)) => self.go(st, k, pc),
                Some(Flow::Block(st, first)) => Some(self.block(st, first)),
                Some(Flow::Choose(st, kind, order)) => {
                    self.choices.push(Choice {
                        st,
                        mark: self.tape.mark(),
                        kind,
                        order,
                        next: 0,
                    });
                    None
                }
                Some(Flow::Done) => return Ok(std::mem::take(&mut self.tape)),
                None if self.out_of_budget => return Err(Outcome::Budget),
                None => match self.retreat() {
                    Some(flow) => flow,
                    None => return Err(Outcome::NoPath),
                },
            };
        }
    }

    /// Back to the latest choice with an alternative left, which is taken
    /// (`None`: no choice has one).
    fn retreat(&mut self) -> Option<Option<Flow<'a>>> {
        loop {
            let top = self.choices.last_mut()?;
            let Some(&alt) = top.order.get(top.next) else {
                self.choices.pop();
                continue;
            };
            top.next += 1;
            let (mark, kind) = (top.mark, top.kind);
            // The last alternative needs the choice no more.
            let st = if top.next == top.order.len() {
                self.choices.pop()?.st
            } else {
                top.st.clone()
            };
            self.tape.cut(mark);
            return Some(self.take(st, kind, alt));
        }
    }

    /// Alternative `alt` of a choice of `kind`, from `st`.
    fn take(&mut self, st: State<'a>, kind: Kind<'a>, alt: Option<usize>) -> Option<Flow<'a>> {
        let mut s = st;
        match (kind, alt) {
            (Kind::Openers { first }, Some(k)) => self.opener_at(s, k, first),
            (Kind::Delims { k, pc, c }, Some(i)) => {
                let (d, to) = &c.delims[i];
                if !self.put(&mut s, lit_text(d)?) {
                    return None;
                }
                let next = match to {
                    Some(l) => self.target(k, l.as_str())?,
                    None => pc + 1,
                };
                Some(Flow::Go(s, k, next))
            }
            (Kind::Fork { k, alts }, Some(i)) => {
                s.pending = Some(Pending::Fork(alts, i));
                Some(Flow::Go(s, k, self.target(k, alts[i].1.as_str())?))
            }
            (Kind::OneOf { k, opts }, Some(i)) => {
                let (lit, to) = &opts[i];
                if !self.closes_top(&s, k, lit, to.as_str()) || !self.put(&mut s, lit_text(lit)?) {
                    return None;
                }
                Some(Flow::Go(s, k, self.target(k, to.as_str())?))
            }
            (Kind::Then { .. }, None) => self.end(s, None),
            (Kind::Then { k, opts, lead }, Some(i)) => {
                let (lit, to) = &opts[i];
                if !self.put(&mut s, lead) || !self.put(&mut s, lit_text(lit)?) {
                    return None;
                }
                Some(Flow::Go(s, k, self.target(k, to.as_str())?))
            }
            (Kind::Nest { k, v, value }, Some(i)) => self.nest(s, k, v, value, i),
            (_, None) => None,
        }
    }

    /// A new block: each opener in turn.
    fn block(&mut self, st: State<'a>, first: bool) -> Flow<'a> {
        let order = (0..self.format.openers.len()).map(Some).collect();
        Flow::Choose(st, Kind::Openers { first }, order)
    }

    /// A block begun with opener `k`.
    fn opener_at(&mut self, mut s: State<'a>, k: usize, first: bool) -> Option<Flow<'a>> {
        let o = self.opener(k);
        if o.stream_start && !(first && self.tape.out.is_empty()) {
            return None;
        }
        // A marker that counts only at a line start, or only at a word
        // start (one that begins with a word byte), is parted from the
        // text before it by a newline or a space, which reads back as
        // text.
        if first && !o.stream_start {
            // The frame's separator before the first call.
            let sep = self.frame.and_then(|f| {
                if self.has_text {
                    f.text_sep.as_deref()
                } else {
                    f.lead.as_deref()
                }
            });
            if let Some(sep) = sep {
                if !self.put(&mut s, sep) {
                    return None;
                }
                self.tape.between.push_str(sep);
            }
        }
        if !o.stream_start {
            let last = self.tape.out.as_bytes().last().copied();
            let sep = match (last, o.marker.bytes.first()) {
                (Some(l), _) if o.line_start && l != b'\n' => "\n",
                (Some(l), Some(&m)) if is_word(l) && is_word(m) => " ",
                _ => "",
            };
            if !self.put(&mut s, sep) {
                return None;
            }
            self.tape.between.push_str(sep);
        }
        s.block_calls = 0;
        s.seen.clear();
        s.block_start = self.tape.out.len();
        s.replay = None;
        if o.replay {
            s.replay = Some(&o.marker.bytes);
        } else if !o.stream_start && !self.put(&mut s, lit_text(&o.marker)?) {
            return None;
        }
        Some(Flow::Go(s, k, 0))
    }

    /// Writes `text`, checking the byte a fork or capture left pending.
    fn put(&mut self, st: &mut State<'a>, text: &str) -> bool {
        let Some(&b) = text.as_bytes().first() else {
            return true;
        };
        if let Some(p) = st.pending.take() {
            let ok = match p {
                Pending::Fork(alts, chosen) => {
                    alts[chosen].0.contains(b) && !alts[..chosen].iter().any(|(s, _)| s.contains(b))
                }
                Pending::Stop(stop, _) => stop.contains(&b),
            };
            if !ok {
                return false;
            }
        }
        self.tape.out.push_str(text);
        true
    }

    fn opener(&self, k: usize) -> &'a Opener {
        let format: &'a Format = self.format;
        &format.openers[k]
    }

    fn target(&self, k: usize, label: &str) -> Option<usize> {
        self.labels[k].get(label).copied()
    }

    /// The step a jump to `label` runs first (labels and hints skipped).
    fn step_at(&self, k: usize, label: &str) -> Option<&'a Step> {
        let prog = &self.opener(k).program;
        let mut i = self.target(k, label)?;
        while let Some(Step::Label(_) | Step::Render(_)) = prog.get(i) {
            i += 1;
        }
        prog.get(i)
    }

    /// Something of a call was written: loops may run again.
    fn progress(st: &mut State<'a>) {
        st.seen.clear();
    }

    /// Starts the next call, if there is one and none is open.
    fn start_call(&self, st: &mut State<'a>) -> bool {
        if st.call.is_some() {
            return true;
        }
        if st.ci >= self.items.len() {
            return false;
        }
        st.call = Some(Current {
            named: false,
            args: Args::Untouched,
            value: None,
            nested: None,
            string_param: None,
        });
        true
    }
    /// Writes a captured word: the hint's text, or the call's name, id,
    /// number, key or type (the delimiters and what follows are the caller's).
    fn capture_word(
        &mut self,
        st: &mut State<'a>,
        c: &Capture,
        write: Option<&str>,
        style: &Style,
    ) -> Option<()> {
        match (write, c.field) {
            (Some(w), _) => {
                if !self.put(st, w) {
                    return None;
                }
            }
            (None, Field::Name) => {
                if !self.start_call(st) {
                    return None;
                }
                let name = self.items[st.ci].name;
                if !self.put(st, name) {
                    return None;
                }
                st.call.as_mut()?.named = true;
            }
            (None, Field::NamedId) => {
                if !self.start_call(st) {
                    return None;
                }
                let item = &self.items[st.ci];
                let own = item.id.filter(|id| named_id_holds(id, item.name));
                let id = match own {
                    Some(id) => id.to_owned(),
                    None => format!("functions.{}:{}", item.name, st.ci),
                };
                if !self.put(st, &id) {
                    return None;
                }
                self.tape.set_id(st.ci, own.is_some());
                st.call.as_mut()?.named = true;
            }
            (None, Field::Id) => {
                let id = self.items.get(st.ci)?.id?;
                st.call.as_ref()?;
                if id.is_empty() || !self.put(st, id) {
                    return None;
                }
                self.tape.set_id(st.ci, true);
            }
            (None, Field::Key) => {
                let ci = st.ci;
                let call = st.call.as_mut()?;
                if call.value.is_some() || !call.named {
                    return None;
                }
                if let Args::Untouched = call.args {
                    call.args = Args::Params(vec![Frame {
                        items: Items::Obj(self.items[ci].args),
                        next: 0,
                        close: None,
                    }]);
                }
                let Args::Params(frames) = &mut call.args else {
                    return None;
                };
                let top = frames.last_mut()?;
                let Items::Obj(m) = top.items else {
                    return None;
                };
                let (key, value) = m.get(top.next)?;
                top.next += 1;
                call.value = Some((key.as_str(), value));
                if !self.put(st, key) {
                    return None;
                }
            }
            (None, Field::Type) => {
                let (_, v) = st.call.as_ref()?.value?;
                let word = match (style.types, v) {
                    (TypeWords::Bool, Node::Str(_)) => "true",
                    (TypeWords::Bool, _) => "false",
                    (TypeWords::Names, v) => v.type_name(),
                };
                if !self.put(st, word) {
                    return None;
                }
            }
            (None, Field::Ordinal) => {
                st.call.as_ref()?;
                if !self.put(st, &(st.ci + 1).to_string()) {
                    return None;
                }
            }
            (None, Field::Discard) => return None,
        }
        Some(())
    }

    /// Writes a JSON step's value: the arguments, a call object, or the
    /// list of the remaining calls.
    fn json_value(&mut self, st: &mut State<'a>, j: &JsonStep, style: &Style) -> Option<()> {
        let mut out = String::new();
        match j.shape {
            Shape::Args => {
                let call = st.call.as_mut()?;
                if !call.named || !matches!(call.args, Args::Untouched) {
                    return None;
                }
                call.args = Args::Whole;
                json(
                    &Node::Obj(self.items[st.ci].args.to_vec()),
                    style,
                    0,
                    &mut out,
                );
            }
            Shape::Call => {
                if st.call.is_some() || st.ci >= self.items.len() {
                    return None;
                }
                let ci = st.ci;
                let obj = self.call_object(ci, &j.keys, style)?;
                json(&obj, style, 0, &mut out);
                st.call = Some(Current {
                    named: true,
                    args: Args::Whole,
                    value: None,
                    nested: None,
                    string_param: None,
                });
            }
            Shape::CallList | Shape::Root => {
                if st.call.is_some() || st.ci >= self.items.len() {
                    return None;
                }
                let n = self.items.len();
                let objs = (st.ci..n)
                    .map(|i| self.call_object(i, &j.keys, style))
                    .collect::<Option<Vec<_>>>()?;
                if j.shape == Shape::Root && objs.len() == 1 {
                    json(objs.first()?, style, 0, &mut out);
                } else if let Some(lines) = style.lines {
                    call_lines(&objs, lines, style, &mut out);
                } else {
                    json(&Node::Arr(objs), style, 0, &mut out);
                }
                st.block_calls += n - st.ci;
                st.ci = n;
            }
        }
        if !self.put(st, &out) {
            return None;
        }
        Self::progress(st);
        Some(())
    }

    /// The raw value a value step writes next: the sole string parameter,
    /// the key just written's value, or a list's next item.
    fn next_value(&self, st: &mut State<'a>) -> Option<(&'a str, &'a Node)> {
        let ci = st.ci;
        let call = st.call.as_mut()?;
        let (key, value) = if let Some(sp) = call.string_param.take() {
            let args = self.items[ci].args;
            let [(key, value)] = args else {
                return None;
            };
            if key != sp || !matches!(call.args, Args::Untouched) {
                return None;
            }
            call.args = Args::Whole;
            (key.as_str(), value)
        } else if let Some(kv) = call.value.take() {
            kv
        } else {
            // A list's next item (`<item>…</item>`): no key
            // was written for it.
            let Args::Params(frames) = &mut call.args else {
                return None;
            };
            let top = frames.last_mut()?;
            let Items::Arr(items) = top.items else {
                return None;
            };
            let value = items.get(top.next)?;
            top.next += 1;
            ("", value)
        };
        Some((key, value))
    }

    /// Writes a raw value and its closer.
    #[allow(clippy::too_many_arguments)]
    fn write_value(
        &mut self,
        st: &mut State<'a>,
        v: &ValueStep,
        key: &str,
        value: &Node,
        write: Option<&str>,
        style: &Style,
    ) -> Option<()> {
        let mut out = String::new();
        let mut guarded_value = false;
        match value {
            Node::Str(s) => {
                if v.null && s == "null" {
                    return None;
                }
                let guarded = v.guard.as_ref().filter(|_| s.contains('<'));
                guarded_value = guarded.is_some();
                let s = if v.entities && guarded.is_none() {
                    xml_escape(s)
                } else {
                    s.clone()
                };
                if let Some((open, close)) = guarded {
                    out.push_str(lit_text(open)?);
                    out.push_str(&s);
                    out.push_str(lit_text(close)?);
                } else {
                    out.push_str(&s);
                }
            }
            other => {
                // Python's spelling reads back typed only by the tools'
                // schema: without one, values are JSON.
                let python = if self.tools.is_some() {
                    style.python
                } else {
                    PyValues::Json
                };
                match (python, other) {
                    (PyValues::All, _) | (PyValues::Scalars, Node::Null | Node::Bool(_)) => {
                        py_repr(other, &mut out)
                    }
                    _ => json(other, style, 0, &mut out),
                }
                if v.entities {
                    out = xml_escape(&out);
                }
            }
        }
        if v.trim == crate::lang::format::Trim::Newline && write != Some("") {
            out = format!("\n{out}\n");
        }
        match &v.close {
            Close::Lit(l) => {
                // A value that holds its own closer unguarded: a
                // one-byte closer (an attribute's quote) ends it there
                // when read back, so the choice is refused at once
                // (the other quote is tried instead: the choices of one
                // value do not multiply with every other's). A tag is
                // written as it is: the reader counts a closing tag
                // only where the format's structure follows it, so the
                // value reads back whole; where it would not, the
                // read-back of the candidate refuses it.
                let closer = lit_text(l)?;
                if closer.len() == 1 && !guarded_value && out.contains(closer) {
                    return None;
                }
                out.push_str(closer)
            }
            Close::KeyTag => {
                out.push_str("</");
                out.push_str(key);
                out.push('>');
            }
            Close::Space => {}
            Close::Balanced => {
                if !matches!(value, Node::Obj(_) | Node::Arr(_)) {
                    return None;
                }
            }
        }
        if !self.put(st, &out) {
            return None;
        }
        if v.close == Close::Space {
            st.pending = Some(Pending::Stop(b" \t\r\n", true));
        }
        Self::progress(st);
        Some(())
    }

    /// `dispatch`: the call written is complete; on to the next.
    fn dispatch(&self, st: &mut State<'a>) -> Option<()> {
        if let Some(call) = st.call.take() {
            let done = call.named
                && call.value.is_none()
                && match &call.args {
                    Args::Whole => true,
                    Args::Untouched => self.items[st.ci].args.is_empty(),
                    Args::Params(frames) => {
                        frames.len() == 1 && frames[0].next == frames[0].items.len()
                    }
                };
            if !done {
                return None;
            }
            st.ci += 1;
            st.block_calls += 1;
            Self::progress(st);
        }
        Some(())
    }

    /// Python-like arguments (`hint`: whether a rendering hint set the
    /// style).
    fn py_step(
        &mut self,
        st: &mut State<'a>,
        p: &crate::lang::format::PyStep,
        hint: bool,
        style: &Style,
    ) -> Option<()> {
        let call = st.call.as_mut()?;
        if !call.named || !matches!(call.args, Args::Untouched) {
            return None;
        }
        call.args = Args::Whole;
        let mut out = String::new();
        let mut style = style.clone();
        if !hint && p.args == PyArgs::BareKeys {
            style.item_sep = ",".into();
        }
        py_args(self.items[st.ci].args, p, &style, &mut out)?;
        if !self.put(st, &out) {
            return None;
        }
        Self::progress(st);
        Some(())
    }

    /// `container`: the value just begun is an object or a list of
    /// parameters.
    fn open(&self, st: &mut State<'a>, c: &Container) -> Option<()> {
        let call = st.call.as_mut()?;
        let (node, close) = call.nested.take()?;
        let items = match (node, c) {
            (Node::Obj(m), Container::Object) => Items::Obj(m),
            (Node::Arr(v), Container::List) => Items::Arr(v),
            _ => return None,
        };
        let Args::Params(frames) = &mut call.args else {
            return None;
        };
        frames.push(Frame {
            items,
            next: 0,
            close,
        });
        Self::progress(st);
        Some(())
    }

    /// `close_open`: the innermost object or list is written whole.
    fn close_open(&self, st: &mut State<'a>) -> Option<()> {
        let call = st.call.as_mut()?;
        let Args::Params(frames) = &mut call.args else {
            return None;
        };
        let top = frames.last()?;
        if frames.len() < 2 || top.next < top.items.len() || call.value.is_some() {
            return None;
        }
        frames.pop();
        Self::progress(st);
        Some(())
    }

    /// Whether `lit`, leading to `label`, may be written: a literal that
    /// closes a nested container must be that container's closer.
    fn closes_top(&self, st: &State<'a>, k: usize, lit: &Lit, label: &str) -> bool {
        if !matches!(self.step_at(k, label), Some(Step::CloseOpen)) {
            return true;
        }
        let Some(Current {
            args: Args::Params(frames),
            ..
        }) = &st.call
        else {
            return false;
        };
        match frames.last().and_then(|f| f.close) {
            Some(close) => close.bytes == lit.bytes,
            None => false,
        }
    }

    /// A value that is an object or a list, in a format that nests
    /// parameters: nesting literal `i`, if it opens the right container.
    fn nest(
        &mut self,
        mut s: State<'a>,
        k: usize,
        v: &'a ValueStep,
        value: &'a Node,
        i: usize,
    ) -> Option<Flow<'a>> {
        let want = if matches!(value, Node::Obj(_)) {
            Container::Object
        } else {
            Container::List
        };
        let close = match &v.close {
            Close::Lit(l) => Some(l),
            _ => None,
        };
        let (lit, to) = v.nest.get(i)?;
        if !matches!(self.step_at(k, to.as_str()), Some(Step::Open(c)) if *c == want) {
            return None;
        }
        if let Some(c) = s.call.as_mut() {
            c.nested = Some((value, close));
        }
        if !self.put(&mut s, lit_text(lit)?) {
            return None;
        }
        Self::progress(&mut s);
        Some(Flow::Go(s, k, self.target(k, to.as_str())?))
    }

    /// A `then`: the literals that go on and the block's end, in the
    /// order they are tried: the hint's closer first when no call is left
    /// (`write`), its separator first when one is (`sep`).
    fn then(
        &self,
        st: State<'a>,
        k: usize,
        opts: &'a [(Lit, Label)],
        write: Option<&'a str>,
        sep: Option<&'a str>,
    ) -> Flow<'a> {
        let more = st.ci < self.items.len() && st.call.is_none();
        // A written literal's leading whitespace goes before any literal
        // of this `then` (the closer's too, between calls, when the hint
        // has no separator).
        let write = if more { sep.or(write) } else { write };
        let closer = write.map(str::trim_start);
        let lead = match (write, closer) {
            (Some(w), Some(c)) => &w[..w.len() - c.len()],
            _ => "",
        };
        // The literals (the written one first) and the block's
        // end, in the order this point calls for.
        let mut order: Vec<Option<usize>> = Vec::new();
        if more && sep.is_none() {
            order.extend((0..opts.len()).map(Some));
            order.push(None);
        } else {
            let w = opts
                .iter()
                .position(|(l, _)| Some(l.bytes.as_slice()) == closer.map(str::as_bytes));
            if let Some(w) = w {
                order.push(Some(w));
            }
            order.push(None);
            order.extend((0..opts.len()).filter(|&i| Some(i) != w).map(Some));
        }
        Flow::Choose(st, Kind::Then { k, opts, lead }, order)
    }

    /// Counts step `pc` (`step`, if the program has one) against the
    /// budget, and refuses a step the path has run already (a program loop
    /// writes nothing new). `None`: give up.
    fn visit(&mut self, st: &mut State<'a>, pc: usize, step: Option<&'a Step>) -> Option<&'a Step> {
        if self.budget == 0 {
            self.out_of_budget = true;
            return None;
        }
        self.budget -= 1;
        let step = step?;
        if !matches!(step, Step::Label(_) | Step::Render(_)) {
            if st.seen.contains(&pc) {
                return None;
            }
            st.seen.push(pc);
        }
        Some(step)
    }

    /// Runs opener `k`'s program from step `pc`, up to its next choice or
    /// its end.
    fn go(&mut self, mut st: State<'a>, k: usize, mut pc: usize) -> Option<Flow<'a>> {
        let prog: &'a [Step] = &self.opener(k).program;
        loop {
            let step = self.visit(&mut st, pc, prog.get(pc))?;
            let hint = match step {
                Step::Label(_) | Step::Render(_) => None,
                _ => st.hint.take(),
            };
            let style: Style = hint.map_or_else(Style::default, |h| h.style.clone());
            let style = &style;
            let write: Option<&'a str> = hint.and_then(|h| h.write.as_deref());
            let prefer = hint.and_then(|h| h.prefer.as_ref()).map(|l| l.as_str());
            match step {
                Step::Label(_) => {}
                // (A frame is read once, by `frame_of`.)
                Step::Render(h) if h.frame_only() => {}
                Step::Render(h) => st.hint = Some(h),
                Step::Ws
                | Step::Blank
                | Step::Word
                | Step::Lit(_)
                | Step::LitOrEof(_)
                | Step::OptLit(_) => {
                    self.markup(&mut st, step, write)?;
                }
                Step::Definite
                | Step::Frame
                | Step::Reasoning(_)
                | Step::Recover(_)
                | Step::RecoverElement(_) => {}
                Step::StringParam(key) => {
                    let items = self.items;
                    let call = st.call.as_mut()?;
                    let name = items.get(st.ci)?.name;
                    call.string_param = Some(
                        self.tools
                            .and_then(|t| t.sole_string_param(name))
                            .unwrap_or(key.as_str()),
                    );
                }
                Step::Goto(l) => {
                    pc = self.target(k, l.as_str())?;
                    continue;
                }
                Step::End => return self.end(st, write),
                Step::Dispatch => {
                    self.dispatch(&mut st)?;
                }
                // A tolerance of a missing closer: no template writes it.
                Step::DispatchBefore(_) => return None,
                Step::Capture(c) => {
                    self.capture_word(&mut st, c, write, style)?;
                    Self::progress(&mut st);
                    if c.delims.is_empty() {
                        st.pending = Some(Pending::Stop(&c.stop, c.at_end));
                    } else {
                        return Some(delims(st, k, pc, c, prefer));
                    }
                }
                Step::Json(j) => {
                    self.json_value(&mut st, j, style)?;
                }
                Step::Py(p) => {
                    self.py_step(&mut st, p, hint.is_some(), style)?;
                }
                Step::Value(v) => {
                    let (key, value) = self.next_value(&mut st)?;
                    if is_container(value) && !v.nest.is_empty() {
                        let order = (0..v.nest.len()).map(Some).collect();
                        return Some(Flow::Choose(st, Kind::Nest { k, v, value }, order));
                    }
                    self.write_value(&mut st, v, key, value, write, style)?;
                }
                Step::Open(c) => {
                    self.open(&mut st, c)?;
                }
                Step::CloseOpen => {
                    self.close_open(&mut st)?;
                }
                Step::Fork(alts) => {
                    let order = ordered(alts.len(), |i| Some(alts[i].1.as_str()) == prefer);
                    return Some(Flow::Choose(st, Kind::Fork { k, alts }, order));
                }
                Step::OneOf(opts) => {
                    let order = ordered(opts.len(), |i| Some(opts[i].1.as_str()) == prefer);
                    return Some(Flow::Choose(st, Kind::OneOf { k, opts }, order));
                }
                Step::Then(opts) => {
                    let sep = hint.and_then(|h| h.sep.as_deref());
                    return Some(self.then(st, k, opts, write, sep));
                }
            }
            pc += 1;
        }
    }

    /// Writes the markup of a step that writes only markup: a blank or
    /// word (what the hint says, else nothing), a literal, an optional
    /// literal (unless the hint leaves it out). `None`: it cannot be
    /// written here.
    fn markup(&mut self, st: &mut State<'a>, step: &'a Step, write: Option<&'a str>) -> Option<()> {
        let text = match step {
            Step::Lit(l) | Step::LitOrEof(l) => lit_text(l)?,
            Step::OptLit(_) if write == Some("") => return Some(()),
            Step::OptLit(l) => lit_text(l)?,
            _ => write.unwrap_or(""),
        };
        self.put(st, text).then_some(())
    }

    /// The block ends: the next block, or the end of the response.
    fn end(&mut self, mut st: State<'a>, sep: Option<&str>) -> Option<Flow<'a>> {
        if st.block_calls == 0 || st.call.is_some() {
            return None;
        }
        if let Some(m) = st.replay {
            if !self
                .tape
                .out
                .as_bytes()
                .get(st.block_start..)?
                .starts_with(m)
            {
                return None;
            }
        }
        if st.ci < self.items.len() {
            let sep = sep.unwrap_or("");
            if !self.put(&mut st, sep) {
                return None;
            }
            self.tape.between.push_str(sep);
            return Some(Flow::Block(st, false));
        }
        if let Some(tail) = self.frame.and_then(|f| f.tail.as_deref()) {
            if !self.put(&mut st, tail) {
                return None;
            }
            self.tape.between.push_str(tail);
        }
        let ends = match &st.pending {
            None => true,
            Some(Pending::Fork(alts, i)) => alts[*i].0 == ByteSet::End,
            Some(Pending::Stop(_, at_end)) => *at_end,
        };
        (ends && (self.accept)(&self.tape)).then_some(Flow::Done)
    }

    /// The call object of call `i` with the format's keys: name, arguments
    /// and, where the format carries one, the id.
    fn call_object(
        &mut self,
        i: usize,
        keys: &crate::lang::format::CallKeys,
        style: &Style,
    ) -> Option<Node> {
        let item = &self.items[i];
        let args = Node::Obj(item.args.to_vec());
        if keys.keyed {
            return Some(Node::Obj(vec![(item.name.to_owned(), args)]));
        }
        let place = style
            .ordinal
            .iter()
            .map(|k| (k.clone(), Node::Str(i.to_string())));
        let mut m: Vec<(String, Node)> = place
            .chain([
                (keys.name.first()?.clone(), Node::Str(item.name.to_owned())),
                (keys.args.first()?.clone(), args),
            ])
            .collect();
        if let (Some(k), Some(id)) = (&keys.id, item.id) {
            m.push((k.clone(), Node::Str(id.to_owned())));
            self.tape.set_id(i, true);
        }
        Some(Node::Obj(m))
    }
}

/// A list of calls one a line (`style.lines`): `[`, each call flat on a
/// line of its own indented by `lines` spaces, `,` after all but the last,
/// and `]` on the last line.
fn call_lines(calls: &[Node], lines: u8, style: &Style, out: &mut String) {
    let pad = " ".repeat(usize::from(lines));
    out.push('[');
    for (k, call) in calls.iter().enumerate() {
        out.push_str(if k == 0 { "\n" } else { ",\n" });
        out.push_str(&pad);
        json(call, style, 0, out);
    }
    out.push_str("\n]");
}

/// The format's frame: the first hint that opens an opener's program and
/// says how the turn is framed.
pub(crate) fn frame_of(format: &Format) -> Option<&TurnFrame> {
    format.openers.iter().find_map(|o| {
        o.program.iter().find_map(|s| match s {
            Step::Render(h) if h.frame.is_set() => Some(&h.frame),
            _ => None,
        })
    })
}

/// The choice among a capture's delimiters (the hint's first).
fn delims<'a>(
    st: State<'a>,
    k: usize,
    pc: usize,
    c: &'a Capture,
    prefer: Option<&str>,
) -> Flow<'a> {
    let order = ordered(c.delims.len(), |i| {
        c.delims[i].1.as_ref().map(|l| l.as_str()) == prefer && prefer.is_some()
    });
    Flow::Choose(st, Kind::Delims { k, pc, c }, order)
}

/// A non-empty object or array.
fn is_container(value: &Node) -> bool {
    matches!(value, Node::Obj(m) if !m.is_empty()) || matches!(value, Node::Arr(a) if !a.is_empty())
}

/// Indices `0..n`, the preferred one first.
fn ordered(n: usize, preferred: impl Fn(usize) -> bool) -> Vec<Option<usize>> {
    let mut v: Vec<Option<usize>> = (0..n).filter(|&i| preferred(i)).map(Some).collect();
    v.extend((0..n).filter(|&i| !preferred(i)).map(Some));
    v
}

/// A literal's text (`None` for bytes that are not UTF-8).
fn lit_text(l: &Lit) -> Option<&str> {
    std::str::from_utf8(&l.bytes).ok()
}

/// Whether an id is `NAMESPACE.NAME:INDEX` for this name.
fn named_id_holds(id: &str, name: &str) -> bool {
    let Some((head, idx)) = id.rsplit_once(':') else {
        return false;
    };
    let tail = head.rsplit_once('.').map_or(head, |(_, n)| n);
    tail == name && !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a walk is expected to give.
    enum Want {
        /// These bytes, with this much of them reading back as text
        /// after the response's own text.
        Writes(&'static str, &'static str),
        /// No path.
        NoPath,
    }

    /// One row: a format, the response's text, its calls (name, JSON
    /// arguments), whether the read-back accepts, and the outcome.
    struct Row {
        format: &'static str,
        text: &'static str,
        calls: &'static [(&'static str, &'static str)],
        accept: bool,
        want: Want,
    }

    const TABLE: &[Row] = &[
        // No calls: the text as it is, no frame.
        Row {
            format: "hermes",
            text: "Just text.",
            calls: &[],
            accept: true,
            want: Want::Writes("Just text.", ""),
        },
        // Hermes/Qwen: no separator without text …
        Row {
            format: "hermes",
            text: "",
            calls: &[("get_weather", r#"{"city": "Paris"}"#)],
            accept: true,
            want: Want::Writes(
                "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
                "",
            ),
        },
        // … a newline after the content, and one between two calls.
        Row {
            format: "hermes",
            text: "Let me check.",
            calls: &[("a", "{}"), ("b", r#"{"x": 1}"#)],
            accept: true,
            want: Want::Writes(
                "Let me check.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n\
                 <tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": 1}}\n</tool_call>",
                "\n\n",
            ),
        },
        // Numbers as the arguments wrote them.
        Row {
            format: "hermes",
            text: "",
            calls: &[("f", r#"{"x": -1.5e-05, "y": 1.50, "z": 10E2}"#)],
            accept: true,
            want: Want::Writes(
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": -1.5e-05, \"y\": 1.50, \"z\": 10E2}}\n</tool_call>",
                "",
            ),
        },
        // MiniMax-M2: a newline before the calls, text or not.
        Row {
            format: "minimax-m2",
            text: "",
            calls: &[("get_weather", r#"{"city": "Paris"}"#)],
            accept: true,
            want: Want::Writes(
                "\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
                "\n",
            ),
        },
        // GLM-4.7: a bare `</think>` before the text.
        Row {
            format: "glm47",
            text: "Hi.",
            calls: &[("get_weather", r#"{"city": "Paris"}"#)],
            accept: true,
            want: Want::Writes(
                "</think>Hi.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
                "",
            ),
        },
        // GLM-4.5/4.6: the frame on lines of its own, a newline after the
        // name and between the tags.
        Row {
            format: "glm45",
            text: "",
            calls: &[("get_weather", r#"{"city": "Paris"}"#)],
            accept: true,
            want: Want::Writes(
                "\n<think></think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
                "",
            ),
        },
        // Qwen3-Coder: a blank line after the content; a boolean and a
        // null as Python prints them, a list as JSON.
        Row {
            format: "qwen3-coder",
            text: "Ok.",
            calls: &[("w", r#"{"on": false, "l": null, "t": ["a"]}"#)],
            accept: true,
            want: Want::Writes(
                "Ok.\n\n<tool_call>\n<function=w>\n<parameter=on>\nFalse\n</parameter>\n\
                 <parameter=l>\nNone\n</parameter>\n<parameter=t>\n[\"a\"]\n</parameter>\n\
                 </function>\n</tool_call>",
                "\n\n",
            ),
        },
        // Seed-OSS: every value that is not a string as Python prints it.
        Row {
            format: "seed-oss",
            text: "",
            calls: &[("search", r#"{"filters": {"fresh": true, "max": 3, "q": "it's"}}"#)],
            accept: true,
            want: Want::Writes(
                "<seed:tool_call>\n<function=search>\n<parameter=filters>{'fresh': True, 'max': 3, 'q': \"it's\"}</parameter>\n</function>\n</seed:tool_call>",
                "",
            ),
        },
        // A read-back that refuses every path: no path.
        Row {
            format: "hermes",
            text: "",
            calls: &[("get_weather", r#"{"city": "Paris"}"#)],
            accept: false,
            want: Want::NoPath,
        },
    ];

    fn format(name: &str) -> Format {
        crate::catalogue::formats::builtin()
            .into_iter()
            .find(|f| f.name() == name)
            .unwrap_or_else(|| panic!("no built-in format {name}"))
    }

    #[test]
    fn walks_write_what_the_table_says() {
        for (i, row) in TABLE.iter().enumerate() {
            let f = format(row.format);
            let args: Vec<Vec<(String, Node)>> = row
                .calls
                .iter()
                .map(|(_, a)| match Node::parse(a) {
                    Some(Node::Obj(m)) => m,
                    _ => panic!("row {i}: arguments are not an object"),
                })
                .collect();
            let items: Vec<Item<'_>> = row
                .calls
                .iter()
                .zip(&args)
                .map(|((name, _), a)| Item {
                    name,
                    args: a,
                    id: None,
                })
                .collect();
            let frame = frame_of(&f).cloned().unwrap_or_default();
            // (A schema, which Python's spelling needs to read back typed.)
            let tools = Tools::from_json_str("[]").ok();
            let mut walk = Walk::new(&f, &frame, &items, 16, tools.as_ref(), |_| row.accept);
            let got = walk.run(row.text);
            match (&row.want, got) {
                (Want::Writes(out, between), Ok(tape)) => {
                    assert_eq!(tape.out, *out, "row {i} ({})", row.format);
                    assert_eq!(tape.between, *between, "row {i} ({}): between", row.format);
                }
                (Want::NoPath, Err(Outcome::NoPath)) => {}
                (Want::Writes(..), Err(e)) => panic!("row {i} ({}): {e:?}", row.format),
                (Want::NoPath, Ok(tape)) => {
                    panic!("row {i} ({}): wrote {:?}", row.format, tape.out)
                }
                (Want::NoPath, Err(e)) => panic!("row {i} ({}): {e:?}", row.format),
            }
        }
    }

    #[test]
    fn without_a_schema_values_are_json() {
        let f = format("qwen3-coder");
        let frame = frame_of(&f).cloned().unwrap_or_default();
        let args = match Node::parse(r#"{"on": false}"#) {
            Some(Node::Obj(m)) => m,
            _ => panic!("arguments are not an object"),
        };
        let items = [Item {
            name: "w",
            args: &args,
            id: None,
        }];
        let mut walk = Walk::new(&f, &frame, &items, 4, None, |_| true);
        let out = walk.run("").map(|t| t.out);
        assert_eq!(
            out.as_deref().ok(),
            Some("<tool_call>\n<function=w>\n<parameter=on>\nfalse\n</parameter>\n</function>\n</tool_call>")
        );
    }

    #[test]
    fn the_frame_is_the_formats_and_only_read_once() {
        let hermes = format("hermes");
        let frame = frame_of(&hermes).map(|f| f.text_sep.clone());
        assert_eq!(frame, Some(Some("\n".to_string())));
        // A format without a frame has none.
        assert!(frame_of(&format("xlam")).is_none());
        // The frame's hint says nothing of the step after it.
        let frame_step = hermes.openers[0].program.first();
        assert!(matches!(frame_step, Some(Step::Render(h)) if h.frame_only()));
    }
}
