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

use std::collections::HashMap;

use crate::lang::format::{
    ByteSet, Capture, Close, Container, Field, Format, Hint, JsonStep, Lit, Opener, PyArgs, Shape,
    Step, Style, TypeWords, ValueStep,
};
use crate::render::value::{json, py_args, xml_escape, Node};
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
    Fork(&'a [(ByteSet, crate::lang::format::Label)], usize),
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

/// Everything a path has written and decided so far.
#[derive(Clone)]
pub(crate) struct State<'a> {
    pub out: String,
    /// The next call to write.
    ci: usize,
    call: Option<Current<'a>>,
    /// Calls completed in the current block.
    block_calls: usize,
    /// Which calls went out with their own id.
    pub id_written: Vec<bool>,
    hint: Option<&'a Hint>,
    pending: Option<Pending<'a>>,
    /// Steps run since something of a call was last written (a loop
    /// without progress is given up).
    seen: Vec<usize>,
    /// Where the current block began, and the marker it must begin with
    /// (a replayed marker is written by the program itself).
    block_start: usize,
    replay: Option<&'a [u8]>,
    /// What was written between blocks (it reads back as text).
    pub between: String,
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
    items: &'a [Item<'a>],
    tools: Option<&'a Tools>,
    labels: Vec<HashMap<&'a str, usize>>,
    budget: usize,
    out_of_budget: bool,
    accept: F,
}

impl<'a, F: FnMut(&State<'a>) -> bool> Walk<'a, F> {
    pub(crate) fn new(
        format: &'a Format,
        items: &'a [Item<'a>],
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
            items,
            tools,
            labels,
            budget: 200_000 + 64 * items.len(),
            out_of_budget: false,
            accept,
        }
    }

    /// The first path that writes `text` then every call, as the caller
    /// accepts it.
    pub(crate) fn run(&mut self, text: &str) -> Result<State<'a>, Outcome> {
        let st = State {
            out: text.to_owned(),
            ci: 0,
            call: None,
            block_calls: 0,
            id_written: vec![false; self.items.len()],
            hint: None,
            pending: None,
            seen: Vec::new(),
            block_start: 0,
            replay: None,
            between: String::new(),
        };
        let found = if self.items.is_empty() {
            (self.accept)(&st).then_some(st)
        } else {
            self.block(st, true)
        };
        match found {
            Some(st) => Ok(st),
            None if self.out_of_budget => Err(Outcome::Budget),
            None => Err(Outcome::NoPath),
        }
    }

    /// A new block: each opener in turn.
    fn block(&mut self, st: State<'a>, first: bool) -> Option<State<'a>> {
        let format = self.format;
        for (k, o) in format.openers.iter().enumerate() {
            if o.stream_start && !(first && st.out.is_empty()) {
                continue;
            }
            let mut s = st.clone();
            // A marker that counts only at a line start, or only at a word
            // start (one that begins with a word byte), is parted from the
            // text before it by a newline or a space, which reads back as
            // text.
            if !o.stream_start {
                let last = s.out.as_bytes().last().copied();
                let sep = match (last, o.marker.bytes.first()) {
                    (Some(l), _) if o.line_start && l != b'\n' => "\n",
                    (Some(l), Some(&m)) if is_word(l) && is_word(m) => " ",
                    _ => "",
                };
                if !self.put(&mut s, sep) {
                    continue;
                }
                s.between.push_str(sep);
            }
            s.block_calls = 0;
            s.seen.clear();
            s.block_start = s.out.len();
            s.replay = None;
            if o.replay {
                s.replay = Some(&o.marker.bytes);
            } else if !o.stream_start && !self.put(&mut s, lit_text(&o.marker)?) {
                continue;
            }
            if let Some(done) = self.go(s, k, 0) {
                return Some(done);
            }
        }
        None
    }

    /// Writes `text`, checking the byte a fork or capture left pending.
    fn put(&self, st: &mut State<'a>, text: &str) -> bool {
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
        st.out.push_str(text);
        true
    }

    fn opener(&self, k: usize) -> &'a Opener {
        &self.format.openers[k]
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
    /// key or type (the delimiters and what follows are the caller's).
    fn capture_word(
        &self,
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
                st.id_written[st.ci] = own.is_some();
                st.call.as_mut()?.named = true;
            }
            (None, Field::Id) => {
                let id = self.items.get(st.ci)?.id?;
                st.call.as_ref()?;
                if id.is_empty() || !self.put(st, id) {
                    return None;
                }
                st.id_written[st.ci] = true;
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
            (None, Field::Discard) => return None,
        }
        Some(())
    }

    /// Writes a JSON step's value: the arguments, a call object, or the
    /// list of the remaining calls.
    fn json_value(&self, st: &mut State<'a>, j: &JsonStep, style: &Style) -> Option<()> {
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
                let obj = self.call_object(st, ci, &j.keys)?;
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
                    .map(|i| self.call_object(st, i, &j.keys))
                    .collect::<Option<Vec<_>>>()?;
                let node = if j.shape == Shape::Root && objs.len() == 1 {
                    objs.into_iter().next()?
                } else {
                    Node::Arr(objs)
                };
                json(&node, style, 0, &mut out);
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
        &self,
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
                json(other, style, 0, &mut out);
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
                // A value that holds its own closer unguarded
                // ends there when read back: no need to write
                // the rest of the call to know it (an
                // attribute's other quote is tried instead).
                let closer = lit_text(l)?;
                if !closer.is_empty() && !guarded_value && out.contains(closer) {
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

    /// A `then`: the literals that go on (the hint's closer first when no
    /// call is left) and the block's end, tried in turn.
    fn then(
        &mut self,
        st: State<'a>,
        k: usize,
        opts: &'a [(Lit, crate::lang::format::Label)],
        write: Option<&str>,
    ) -> Option<State<'a>> {
        let more = st.ci < self.items.len() && st.call.is_none();
        // A written closer's leading whitespace goes before
        // any literal of this `then`.
        let closer = write.map(str::trim_start);
        let lead = match (write, closer) {
            (Some(w), Some(c)) => &w[..w.len() - c.len()],
            _ => "",
        };
        // The literals (the written one first) and the block's
        // end, in the order this point calls for.
        let mut order: Vec<Option<usize>> = Vec::new();
        if more {
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
        for choice in order {
            let s = st.clone();
            let found = match choice {
                None => self.end(s, None),
                Some(i) => {
                    let mut s = s;
                    let (lit, to) = &opts[i];
                    if !self.put(&mut s, lead) || !self.put(&mut s, lit_text(lit)?) {
                        continue;
                    }
                    self.go(s, k, self.target(k, to.as_str())?)
                }
            };
            if found.is_some() {
                return found;
            }
        }
        None
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
        &self,
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

    /// A value that is an object or a list, in a format that nests
    /// parameters: each nesting literal that opens the right container,
    /// tried in turn.
    fn nest(
        &mut self,
        st: &State<'a>,
        k: usize,
        v: &'a ValueStep,
        value: &'a Node,
    ) -> Option<State<'a>> {
        let want = if matches!(value, Node::Obj(_)) {
            Container::Object
        } else {
            Container::List
        };
        let close = match &v.close {
            Close::Lit(l) => Some(l),
            _ => None,
        };
        for (lit, to) in &v.nest {
            let opens = matches!(self.step_at(k, to.as_str()), Some(Step::Open(c)) if *c == want);
            if !opens {
                continue;
            }
            let mut s = st.clone();
            if let Some(c) = s.call.as_mut() {
                c.nested = Some((value, close));
            }
            if !self.put(&mut s, lit_text(lit)?) {
                continue;
            }
            Self::progress(&mut s);
            if let Some(done) = self.go(s, k, self.target(k, to.as_str())?) {
                return Some(done);
            }
        }
        None
    }

    /// Runs opener `k`'s program from step `pc`.
    fn go(&mut self, mut st: State<'a>, k: usize, mut pc: usize) -> Option<State<'a>> {
        let prog: &'a [Step] = &self.opener(k).program;
        loop {
            if self.budget == 0 {
                self.out_of_budget = true;
                return None;
            }
            self.budget -= 1;
            let step = prog.get(pc)?;
            if !matches!(step, Step::Label(_) | Step::Render(_)) {
                if st.seen.contains(&pc) {
                    return None;
                }
                st.seen.push(pc);
            }
            let hint = match step {
                Step::Label(_) | Step::Render(_) => None,
                _ => st.hint.take(),
            };
            let style: Style = hint.map_or_else(Style::default, |h| h.style.clone());
            let style = &style;
            let write = hint.and_then(|h| h.write.as_deref());
            let prefer = hint.and_then(|h| h.prefer.as_ref()).map(|l| l.as_str());
            match step {
                Step::Label(_) => {}
                Step::Render(h) => st.hint = Some(h),
                Step::Ws | Step::Blank | Step::Word => {
                    if !self.put(&mut st, write.unwrap_or("")) {
                        return None;
                    }
                }
                Step::Lit(l) | Step::LitOrEof(l) => {
                    if !self.put(&mut st, lit_text(l)?) {
                        return None;
                    }
                }
                Step::OptLit(l) => {
                    if write != Some("") && !self.put(&mut st, lit_text(l)?) {
                        return None;
                    }
                }
                Step::Definite
                | Step::Frame
                | Step::Reasoning(_)
                | Step::Recover(_)
                | Step::RecoverElement(_) => {}
                Step::StringParam(key) => {
                    let call = st.call.as_mut()?;
                    let name = self.items[st.ci].name;
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
                        let order = ordered(c.delims.len(), |i| {
                            c.delims[i].1.as_ref().map(|l| l.as_str()) == prefer && prefer.is_some()
                        });
                        for i in order {
                            let (d, to) = &c.delims[i];
                            let mut s = st.clone();
                            if !self.put(&mut s, lit_text(d)?) {
                                continue;
                            }
                            let next = match to {
                                Some(l) => self.target(k, l.as_str())?,
                                None => pc + 1,
                            };
                            if let Some(done) = self.go(s, k, next) {
                                return Some(done);
                            }
                        }
                        return None;
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
                    let container = matches!(value, Node::Obj(m) if !m.is_empty())
                        || matches!(value, Node::Arr(a) if !a.is_empty());
                    if container && !v.nest.is_empty() {
                        return self.nest(&st, k, v, value);
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
                    for i in order {
                        let mut s = st.clone();
                        s.pending = Some(Pending::Fork(alts, i));
                        if let Some(done) = self.go(s, k, self.target(k, alts[i].1.as_str())?) {
                            return Some(done);
                        }
                    }
                    return None;
                }
                Step::OneOf(opts) => {
                    let order = ordered(opts.len(), |i| Some(opts[i].1.as_str()) == prefer);
                    for i in order {
                        let (lit, to) = &opts[i];
                        if !self.closes_top(&st, k, lit, to.as_str()) {
                            continue;
                        }
                        let mut s = st.clone();
                        if !self.put(&mut s, lit_text(lit)?) {
                            continue;
                        }
                        if let Some(done) = self.go(s, k, self.target(k, to.as_str())?) {
                            return Some(done);
                        }
                    }
                    return None;
                }
                Step::Then(opts) => return self.then(st, k, opts, write),
            }
            pc += 1;
        }
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

    /// The block ends: the next block, or the end of the response.
    fn end(&mut self, mut st: State<'a>, sep: Option<&str>) -> Option<State<'a>> {
        if st.block_calls == 0 || st.call.is_some() {
            return None;
        }
        if let Some(m) = st.replay {
            if !st.out.as_bytes()[st.block_start..].starts_with(m) {
                return None;
            }
        }
        if st.ci < self.items.len() {
            let sep = sep.unwrap_or("");
            if !self.put(&mut st, sep) {
                return None;
            }
            st.between.push_str(sep);
            return self.block(st, false);
        }
        let ends = match &st.pending {
            None => true,
            Some(Pending::Fork(alts, i)) => alts[*i].0 == ByteSet::End,
            Some(Pending::Stop(_, at_end)) => *at_end,
        };
        (ends && (self.accept)(&st)).then_some(st)
    }

    /// The call object of call `i` with the format's keys: name, arguments
    /// and, where the format carries one, the id.
    fn call_object(
        &self,
        st: &mut State<'a>,
        i: usize,
        keys: &crate::lang::format::CallKeys,
    ) -> Option<Node> {
        let item = &self.items[i];
        let args = Node::Obj(item.args.to_vec());
        if keys.keyed {
            return Some(Node::Obj(vec![(item.name.to_owned(), args)]));
        }
        let mut m = vec![
            (keys.name.first()?.clone(), Node::Str(item.name.to_owned())),
            (keys.args.first()?.clone(), args),
        ];
        if let (Some(k), Some(id)) = (&keys.id, item.id) {
            m.push((k.clone(), Node::Str(id.to_owned())));
            st.id_written[i] = true;
        }
        Some(Node::Obj(m))
    }
}

/// Indices `0..n`, the preferred one first.
fn ordered(n: usize, preferred: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).filter(|&i| preferred(i)).collect();
    v.extend((0..n).filter(|&i| !preferred(i)));
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
