//! The call being assembled — name, id, arguments as they are recognised —
//! and the `tool_call_start` / `tool_call_args` / `tool_call_end` events.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

pub(crate) use crate::engine::call::args::Args;
use crate::engine::call::param::Param;
use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::ids::IdSource;
use crate::offset::Offset;
use crate::options::{Admit, Check, Limits};
use crate::read::escape::{json_str_content_len, push_json_str_content, write_json_str_content};
use crate::read::reason::{Reason, Stop};
pub(crate) use crate::read::src::HeldBytes;
use crate::sink::Sink;
use crate::tools::Tools;

/// Per-parser state shared by all calls of the response.
#[derive(Debug)]
pub(crate) struct Session {
    /// Index the next started call gets.
    pub next_index: usize,
    /// Calls dispatched so far.
    pub completed: usize,
    /// Fingerprints of the ids taken from the text (only those: minted ids
    /// are distinct by construction), so memory grows only with calls
    /// that carry their own id.
    pub text_ids: HashSet<u64>,
    pub ids: IdSource,
    pub tools: Option<Tools>,
    pub limits: Limits,
    /// The stream ended at a stop sequence and the options let that
    /// complete a call whose closing markup is missing.
    pub at_stop: bool,
    /// Which calls are let through.
    pub admit: Admit,
    /// Whether completed calls are checked against the tools' schemas.
    pub check: Check,
    /// A call that matches its tool only without a namespace prefix takes
    /// the declared name.
    pub normalize_names: bool,
}

impl Session {
    pub(crate) fn new(ids: IdSource, tools: Option<Tools>, limits: Limits) -> Session {
        Session {
            next_index: 0,
            completed: 0,
            text_ids: HashSet::new(),
            ids,
            tools,
            limits,
            at_stop: false,
            admit: Admit::default(),
            check: Check::Off,
            normalize_names: false,
        }
    }

    /// Why the options refuse a call of `name` that starts now, if they do.
    fn refuses(&self, name: &str) -> Option<Reason> {
        let a = &self.admit;
        if let Some(limit) = a.max_calls.filter(|&n| self.completed >= n) {
            return Some(Reason::TooManyCalls { limit });
        }
        a.only
            .as_deref()
            .is_some_and(|only| only != name)
            .then_some(Reason::NotTheTool)
    }
}

fn fingerprint(id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The arguments text so far: a span of the pending bytes, or the record.
fn args_text<'a>(span: Option<(Offset, usize)>, args: &'a [u8], src: HeldBytes<'a>) -> &'a [u8] {
    match span {
        Some((at, len)) => src.span(at, len),
        None => args,
    }
}

/// A string value's raw bytes in the arguments: the bytes of the pending
/// buffer between two absolute offsets, written JSON-escaped at offset `at`
/// of the call's argument record (before the record's bytes from there on).
/// The arguments text is a function of the record and these spans, so a
/// long string value is kept once (as the input), not once more escaped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    /// Where it goes in the record.
    pub at: usize,
    /// Its raw bytes: absolute offsets in the pending buffer.
    pub from: Offset,
    pub to: Offset,
}

/// How far the argument deltas got through a record with [`Seg`]s: the
/// record's bytes before `lit`, the segments before `seg`, and the raw bytes
/// of segment `seg` before `raw` were made into text (sent, or waiting in
/// `pending_text`).
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    lit: usize,
    seg: usize,
    raw: Offset,
}

/// The arguments text of a record with segments, whole: the record with
/// each segment's raw bytes escaped in its place (the one copy a call's
/// string values cost, made when `tool_call_end` needs the text).
///
/// `len` is its length when known (see [`Call::text_len`]).
fn joined(args: &[u8], segs: &[Seg], src: HeldBytes<'_>, len: Option<usize>) -> Vec<u8> {
    let raw = |s: &Seg| src.between(s.from, s.to);
    // Exactly the room it needs: doubling would cost up to twice the text.
    let len = len.unwrap_or_else(|| {
        args.len()
            + segs
                .iter()
                .map(|s| json_str_content_len(raw(s)))
                .sum::<usize>()
    });
    // Written in place, with the writer's eight bytes of slack; were the
    // length somehow short, the text is made again by appending.
    let mut out = vec![0; len + 8];
    match write_joined(args, segs, src, &mut out) {
        Some(end) => out.truncate(end),
        None => {
            out.clear();
            let mut lit = 0;
            for s in segs {
                out.extend_from_slice(args.get(lit..s.at).unwrap_or_default());
                lit = lit.max(s.at);
                push_json_str_content(raw(s), &mut out);
            }
            out.extend_from_slice(args.get(lit..).unwrap_or_default());
        }
    }
    debug_assert_eq!(out.len(), len, "the arguments' length was known");
    out
}

/// [`joined`] into `out`, which has room for it and eight bytes more;
/// returns its length, or `None` if the room ran out.
fn write_joined(args: &[u8], segs: &[Seg], src: HeldBytes<'_>, out: &mut [u8]) -> Option<usize> {
    let (mut o, mut lit) = (0, 0);
    for s in segs {
        let piece = args.get(lit..s.at).unwrap_or_default();
        out.get_mut(o..o + piece.len())?.copy_from_slice(piece);
        lit = lit.max(s.at);
        o = write_json_str_content(src.between(s.from, s.to), out, o + piece.len())?;
    }
    let rest = args.get(lit..).unwrap_or_default();
    out.get_mut(o..o + rest.len())?.copy_from_slice(rest);
    Some(o + rest.len())
}

/// One call being assembled.
#[derive(Debug, Default)]
pub(crate) struct Call {
    pub name: Option<String>,
    /// The name came from a JSON key (a second one is refused).
    name_from_json: bool,
    pub id: Option<String>,
    /// The arguments text recorded so far, when it differs from the input
    /// (normalised, decoded) or is made up (`{}`); the deltas are its
    /// slices.
    pub args: Vec<u8>,
    /// Otherwise the arguments are the input bytes from this absolute
    /// offset, this many so far (still in the pending buffer: no copy).
    pub span: Option<(Offset, usize)>,
    /// String values of a parameter-style call that are spans of the input
    /// (escaped where they go in `args`, never copied while they stream).
    pub segs: Vec<Seg>,
    /// With `segs`: how far the deltas got (set when the first segment
    /// is synced: the record's bytes sent before it are `emitted`).
    cursor: Option<Cursor>,
    /// With `segs`: the arguments text made since the last delta that is
    /// not sent yet (at most an unfinished character after a sync), and
    /// the room the next delta is made in.
    pending_text: Vec<u8>,
    /// With `segs`: a byte that is not UTF-8 was met; no delta follows
    /// (the call fails when it completes).
    bad_text: bool,
    pub args_state: Args,
    /// Index and id once `tool_call_start` was sent.
    pub started: Option<(usize, String)>,
    /// Bytes of the arguments text already sent as deltas.
    emitted: usize,
    /// The call object (or the arguments value) closed.
    pub complete: bool,
    /// An id may still come (a format that carries ids after the name).
    wait_id: bool,
    /// The parameter being read (parameter-style bodies).
    pub param: Param,
    /// The name means "no tool" ([`CallKeys::no_call`]): the call is never
    /// started; when it completes, its bytes are framing.
    ///
    /// [`CallKeys::no_call`]: crate::lang::format::CallKeys::no_call
    pub void: bool,
}

impl Call {
    /// The length of the whole arguments text of a record with segments,
    /// counted without a second look at what the deltas sent: what was sent
    /// or waits to be, and what the cursor has not reached yet (escaped
    /// where it will be). `None` when the deltas did not begin (or met a
    /// byte that is not UTF-8).
    fn text_len(&self, src: HeldBytes<'_>) -> Option<usize> {
        let cur = self.cursor.filter(|_| !self.bad_text)?;
        let mut len = self.emitted + self.pending_text.len();
        let mut lit = cur.lit;
        for (k, s) in self.segs.iter().enumerate().skip(cur.seg) {
            len += s.at.saturating_sub(lit);
            lit = lit.max(s.at);
            let from = if k == cur.seg {
                cur.raw.max(s.from)
            } else {
                s.from
            };
            len += json_str_content_len(src.between(from, s.to));
        }
        Some(len + self.args.len().saturating_sub(lit))
    }

    /// The direct path of a string value's run (see
    /// [`BlockCalls::extend_run`]): `run`, the input at `at`, goes on the
    /// last segment, which ends at `at` and nothing follows yet, and every
    /// byte before it was sent; then `run` (escaped where it must be) is
    /// the delta. `false`: nothing changed.
    fn extend_run(&mut self, at: Offset, run: &str, out: &mut dyn Sink) -> bool {
        let last = self.segs.len().wrapping_sub(1);
        let (Some((index, _)), Some(cur), Some(s)) =
            (&self.started, self.cursor.as_mut(), self.segs.last_mut())
        else {
            return false;
        };
        let steady = self.param.live
            && self.param.slot
            && !self.bad_text
            && self.pending_text.is_empty()
            && s.at == self.args.len()
            && s.to == at
            && cur.seg == last
            && cur.lit == s.at
            && cur.raw == at;
        if !steady {
            return false;
        }
        s.to = at.after(run.len());
        cur.raw = s.to;
        let index = *index;
        if crate::read::escape::as_json_str_content(run.as_bytes()).is_some() {
            if !run.is_empty() {
                out.event(EventRef::ToolCallArgs { index, delta: run });
                self.emitted += run.len();
            }
            return true;
        }
        // Escaped whole characters are whole characters (were they not,
        // the text would wait in `pending_text` for `sync_segs`).
        push_json_str_content(run.as_bytes(), &mut self.pending_text);
        if let Some(delta) = crate::scan::utf8::as_text(&self.pending_text) {
            out.event(EventRef::ToolCallArgs { index, delta });
            self.emitted += delta.len();
            self.pending_text.clear();
        }
        true
    }

    /// [`BlockCalls::sync`] for a record with segments: makes the arguments text
    /// written since the last delta (the record's new bytes, the segments'
    /// new raw bytes escaped) and sends it up to a character boundary.
    fn sync_segs(&mut self, index: usize, out: &mut dyn Sink, src: HeldBytes<'_>) {
        if self.bad_text {
            return;
        }
        let text = &mut self.pending_text;
        let cur = self.cursor.get_or_insert(Cursor {
            lit: self.emitted,
            seg: 0,
            raw: Offset::START,
        });
        // The common delta of a long string value: nothing waits, the
        // cursor is in the last segment, which nothing follows yet, and its
        // new raw bytes are whole characters that need no escape — they are
        // the delta as they stand in the held bytes, not copied.
        if let Some(s) = self.segs.last() {
            if text.is_empty()
                && cur.seg + 1 == self.segs.len()
                && cur.lit == s.at
                && self.args.len() == s.at
            {
                let raw = src.between(cur.raw.max(s.from), s.to);
                if let Some(delta) = crate::read::escape::as_json_str_content(raw)
                    .and_then(crate::scan::utf8::as_text)
                {
                    cur.raw = s.to;
                    if !delta.is_empty() {
                        out.event(EventRef::ToolCallArgs { index, delta });
                        self.emitted += delta.len();
                    }
                    return;
                }
            }
        }
        while let Some(s) = self.segs.get(cur.seg) {
            if cur.lit < s.at {
                text.extend_from_slice(self.args.get(cur.lit..s.at).unwrap_or_default());
                cur.lit = s.at;
            }
            let from = cur.raw.max(s.from);
            push_json_str_content(src.between(from, s.to), text);
            cur.raw = s.to;
            // The last segment may still grow, until the record goes on
            // after it.
            if cur.seg + 1 == self.segs.len() && self.args.len() == s.at {
                break;
            }
            cur.seg += 1;
            cur.raw = Offset::START;
        }
        if cur.seg == self.segs.len() {
            text.extend_from_slice(self.args.get(cur.lit..).unwrap_or_default());
            cur.lit = cur.lit.max(self.args.len());
        }
        // Deltas stop before bytes that are not UTF-8 (such a call fails
        // when it completes) and before an unfinished character.
        let delta = match crate::scan::utf8::as_text(text) {
            Some(delta) => delta,
            None => {
                let n = match std::str::from_utf8(text) {
                    Ok(s) => s.len(),
                    Err(e) => {
                        self.bad_text = e.error_len().is_some();
                        e.valid_up_to()
                    }
                };
                std::str::from_utf8(&text[..n]).unwrap_or_default()
            }
        };
        let n = delta.len();
        if n > 0 {
            out.event(EventRef::ToolCallArgs { index, delta });
            self.emitted += n;
        }
        if n == text.len() {
            text.clear();
        } else {
            text.drain(..n);
        }
    }
}

/// The calls of one block.
#[derive(Debug)]
pub(crate) struct BlockCalls {
    pub call: Option<Call>,
    /// The opener was not definite.
    pub tentative: bool,
    /// Some call of this block showed a name and arguments (it may still
    /// wait for an id before `tool_call_start`).
    pub started_any: bool,
    /// Calls of this block that completed.
    pub done: usize,
    /// The format may write an id after the name (a call object's id key).
    pub id_key: bool,
    /// The block is markup of the format whose content is text (a text
    /// envelope): it is not silent, and its framing is dropped when it
    /// ends, as a call's span is.
    pub framed: bool,
    /// Diagnostics about the current call that do not end it (an unknown
    /// parameter, a value of the wrong type, a missing closing tag): sent
    /// after its `tool_call_end`, so a call's events are never interleaved
    /// with others; dropped with the call if it fails.
    pub notes: Vec<Diagnostic>,
}

impl BlockCalls {
    pub(crate) fn new(tentative: bool) -> BlockCalls {
        BlockCalls {
            call: None,
            tentative,
            started_any: false,
            done: 0,
            id_key: false,
            framed: false,
            notes: Vec::new(),
        }
    }

    /// Failures are silent while a tentative block has shown no call (nor
    /// been recognised as markup).
    pub(crate) fn silent(&self) -> bool {
        self.tentative && !self.started_any && !self.framed
    }

    /// What the block read so far belongs to its calls (or is framing), not
    /// to text, if the block ends now.
    pub(crate) fn owns_bytes(&self) -> bool {
        self.done > 0 || self.framed
    }

    /// A new call begins (its bytes are being read).
    pub(crate) fn begin(&mut self) {
        self.cur();
    }

    pub(crate) fn cur(&mut self) -> &mut Call {
        self.call.get_or_insert_with(Call::default)
    }

    /// The index of the current call if it started.
    pub(crate) fn started_index(&self) -> Option<usize> {
        self.call
            .as_ref()
            .and_then(|c| c.started.as_ref().map(|s| s.0))
    }

    /// A name. From markup it may still be replaced (DeepSeek V3 writes a
    /// type word first); a second name key of a JSON call object is refused.
    pub(crate) fn set_name(
        &mut self,
        session: &mut Session,
        out: &mut dyn Sink,
        at: Offset,
        name: &str,
        from_json: bool,
        src: HeldBytes<'_>,
    ) -> Result<(), Stop> {
        let id_key = self.id_key;
        let c = self.cur();
        if from_json && c.name_from_json {
            // Never two names for one call. In a tentative block the object
            // is not a call at all, and nothing inside it becomes one.
            return Err(Stop::not_a_call(Reason::TwoNames));
        }
        c.name = Some(name.to_owned());
        if !from_json {
            return Ok(());
        }
        c.name_from_json = true;
        c.wait_id = c.id.is_none() && id_key;
        self.try_start(session, out, at, src)
    }

    pub(crate) fn set_id(
        &mut self,
        session: &mut Session,
        out: &mut dyn Sink,
        at: Offset,
        id: &str,
        from_json: bool,
        src: HeldBytes<'_>,
    ) -> Result<(), Stop> {
        let c = self.cur();
        c.id = Some(id.to_owned());
        c.wait_id = false;
        if !from_json {
            return Ok(());
        }
        self.try_start(session, out, at, src)
    }

    /// Sends `tool_call_start` once the call shows enough of itself.
    pub(crate) fn try_start(
        &mut self,
        session: &mut Session,
        out: &mut dyn Sink,
        at: Offset,
        src: HeldBytes<'_>,
    ) -> Result<(), Stop> {
        let silent = self.silent();
        let Some(c) = self.call.as_mut() else {
            return Ok(());
        };
        let Some(name) = c.name.as_deref() else {
            return Ok(());
        };
        if c.started.is_some() || c.void {
            return Ok(());
        }
        let declared = session
            .tools
            .as_ref()
            .map(|t| t.resolve(name).map(|t| t.name.as_str()));
        let known = declared.map(|d| d.is_some());
        if known == Some(false) && silent {
            return Err(Stop::not_a_call(Reason::NotATool));
        }
        // A named `tool_choice` names a declared tool.
        if let Some(why) = session.refuses(declared.flatten().unwrap_or(name)) {
            return Err(Stop::fail(why));
        }
        // A tentative block becomes a call only once arguments (or the end
        // of the call object) follow the name.
        let looks_like_call = !matches!(c.args_state, Args::Missing) || c.complete;
        if silent && !looks_like_call {
            return Ok(());
        }
        self.started_any = true;
        if c.wait_id && !c.complete {
            return Ok(());
        }
        if let Some(d) = declared
            .flatten()
            .filter(|d| session.normalize_names && *d != name)
        {
            c.name = Some(d.to_owned());
        }
        let Some(name) = c.name.as_deref() else {
            return Ok(());
        };
        let index = session.next_index;
        session.next_index += 1;
        let id = match c.id.take() {
            Some(id) if session.text_ids.insert(fingerprint(&id)) => id,
            _ => {
                let mut attempt = 0;
                loop {
                    let id = session.ids.mint(index, attempt);
                    if !session.text_ids.contains(&fingerprint(&id)) {
                        break id;
                    }
                    attempt += 1;
                }
            }
        };
        // (With the schema check on, an unknown tool is the check's to
        // report, with the call's other problems, before its end.)
        if known == Some(false) && !session.check.is_on() {
            let d = Diagnostic {
                kind: DiagnosticKind::UnknownTool,
                offset: at.get(),
                message: format!("call #{index} names `{name}`, which is not one of the tools"),
            };
            out.event(EventRef::Diagnostic(&d));
        }
        out.event(EventRef::ToolCallStart {
            index,
            id: &id,
            name,
        });
        c.started = Some((index, id));
        self.sync(out, src);
        Ok(())
    }

    /// Emits the argument bytes recorded since the last sync (up to a
    /// character boundary).
    pub(crate) fn sync(&mut self, out: &mut dyn Sink, src: HeldBytes<'_>) {
        let Some(c) = self.call.as_mut() else { return };
        let Some((index, _)) = c.started else { return };
        if !c.segs.is_empty() {
            c.sync_segs(index, out, src);
            return;
        }
        let text = args_text(c.span, &c.args, src);
        // Deltas stop before bytes that are not UTF-8 (such a call fails
        // when it completes) and before an unfinished character. (A
        // token-sized ASCII delta, the common one, needs no validator.)
        let rest = &text[c.emitted..];
        let delta = crate::scan::utf8::as_text(rest).unwrap_or_else(|| {
            let valid = std::str::from_utf8(rest).map_or_else(|e| e.valid_up_to(), str::len);
            std::str::from_utf8(&rest[..valid]).unwrap_or_default()
        });
        if delta.is_empty() {
            return;
        }
        c.emitted += delta.len();
        out.event(EventRef::ToolCallArgs { index, delta });
    }

    /// The direct path of a run of a string value's bytes, `run`, which
    /// the input has at `at`: when the value so far is a segment of the
    /// input that ends there and went out whole, the segment grows by
    /// `run` and `run` goes out as the delta — what handing the bytes on
    /// and [`sync`](Self::sync) would do. `false`: nothing changed.
    pub(crate) fn extend_run(&mut self, at: Offset, run: &str, out: &mut dyn Sink) -> bool {
        self.call
            .as_mut()
            .is_some_and(|c| c.extend_run(at, run, out))
    }

    /// The direct path of a run of a JSON string's content, `run`, in
    /// arguments that are a span of the input: when every byte of them
    /// went out, the span grows by `run` and `run` goes out as the delta —
    /// what the JSON mapping's output and [`sync`](Self::sync) would do.
    /// `false`: nothing changed.
    pub(crate) fn extend_span_run(&mut self, run: &str, out: &mut dyn Sink) -> bool {
        let Some(c) = self.call.as_mut() else {
            return false;
        };
        let (Args::Object(_), Some((_, len)), Some((index, _))) =
            (&c.args_state, c.span.as_mut(), &c.started)
        else {
            return false;
        };
        if c.emitted != *len {
            return false;
        }
        *len += run.len();
        c.emitted = *len;
        if !run.is_empty() {
            out.event(EventRef::ToolCallArgs {
                index: *index,
                delta: run,
            });
        }
        true
    }

    /// A steady run of JSON string content (see `block::steady`) held
    /// `raw` more bytes of arguments that are a span of the input, and
    /// sent them as deltas: the span and the count of what was sent grow
    /// by them, as [`extend_span_run`](Self::extend_span_run) would have
    /// made them grow.
    pub(crate) fn settle_span_run(&mut self, raw: usize) {
        if let Some(c) = self.call.as_mut() {
            if let Some((_, len)) = c.span.as_mut() {
                *len += raw;
                c.emitted = *len;
            }
        }
    }

    /// A steady run of a raw string value (see `block::steady`) held `raw`
    /// more bytes of its segment, and sent `text` bytes of deltas: the
    /// segment, the cursor in it and the count of what was sent grow by
    /// them, as [`extend_run`](Self::extend_run) would have made them grow.
    pub(crate) fn settle_value_run(&mut self, raw: usize, text: usize) {
        let Some(c) = self.call.as_mut() else { return };
        if let (Some(s), Some(cur)) = (c.segs.last_mut(), c.cursor.as_mut()) {
            s.to = s.to.after(raw);
            cur.raw = s.to;
            c.emitted += text;
        }
    }

    /// How long the current call's arguments text is so far (as
    /// [`sync`](Self::sync) sends it), if it has a plain one (no string
    /// segments).
    pub(crate) fn args_len(&self) -> Option<usize> {
        let c = self.call.as_ref()?;
        if !c.segs.is_empty() {
            return None;
        }
        Some(match c.span {
            Some((_, len)) => len,
            None => c.args.len(),
        })
    }

    /// [`sync`](Self::sync) after `run`, text, was passed on to the
    /// arguments as it is, when they were `before` bytes long: if they grew
    /// by exactly `run` and every byte before it went out, `run` is the
    /// delta — no second look at bytes known to be text. (Otherwise, as
    /// `sync`.)
    pub(crate) fn sync_text(
        &mut self,
        out: &mut dyn Sink,
        src: HeldBytes<'_>,
        before: usize,
        run: &str,
    ) {
        if let (Some(now), Some(c)) = (self.args_len(), self.call.as_mut()) {
            let whole = c.emitted == before && now == before + run.len();
            if let (Some(&(index, _)), true) = (c.started.as_ref(), whole) {
                c.emitted = now;
                if !run.is_empty() {
                    out.event(EventRef::ToolCallArgs { index, delta: run });
                }
                return;
            }
        }
        self.sync(out, src);
    }

    /// The current call has a name and complete arguments (or none at all,
    /// which are `{}`), with no parameter value or container open.
    pub(crate) fn args_closed(&self) -> bool {
        self.call.as_ref().is_some_and(|c| {
            c.name.is_some()
                && match c.args_state {
                    Args::Done | Args::Missing | Args::Null => true,
                    Args::Params => !c.param.frames_open(),
                    Args::Object(_) | Args::Encoded(_) | Args::Literal | Args::Written => false,
                }
        })
    }

    /// Marks the arguments complete.
    pub(crate) fn args_complete(&mut self) {
        if let Some(c) = self.call.as_mut() {
            c.args_state = Args::Done;
        }
    }

    /// The call is complete: emits `tool_call_end` (after the argument
    /// bytes not sent yet: a call's events are in order whoever ends it).
    pub(crate) fn dispatch(
        &mut self,
        session: &mut Session,
        out: &mut dyn Sink,
        at: Offset,
        src: HeldBytes<'_>,
    ) -> Result<(), Stop> {
        self.sync(out, src);
        let Some(c) = self.call.as_mut() else {
            return Ok(());
        };
        c.complete = true;
        if c.name.is_none() {
            return Err(Stop::not_a_call(Reason::NoName));
        }
        if c.void {
            // "No tool": the object is framing.
            self.call = None;
            self.framed = true;
            return Ok(());
        }
        c.finish_args(src)?;
        self.try_start(session, out, at, src)?;
        self.sync(out, src);
        // `try_start` starts a named call unless it waits for an id, which
        // it does not once the call is complete; a call that is somehow not
        // started is not dispatched.
        let Some(Call {
            name: Some(name),
            started: Some((index, id)),
            span,
            args,
            ..
        }) = self.call.take()
        else {
            return Err(Stop::fail(Reason::ArgsUnfinished));
        };
        let Some(arguments) = crate::scan::utf8::check(args_text(span, &args, src)) else {
            return Err(Stop::fail(Reason::ArgsNotUtf8));
        };
        if let Some(tools) = session.tools.as_ref().filter(|_| session.check.is_on()) {
            let problems = crate::engine::call::check::check(tools, index, &name, arguments);
            for p in &problems {
                let d = Diagnostic::new(p.kind, at.get(), p.message.as_str());
                out.event(EventRef::Diagnostic(&d));
            }
            if !problems.is_empty() && session.check == Check::Reject {
                // Put back, so the failure reports it as abandoned.
                self.call = Some(Call {
                    name: Some(name),
                    started: Some((index, id)),
                    ..Call::default()
                });
                return Err(Stop::fail(Reason::FailsSchema));
            }
        }
        tracing::trace!(offset = at.get(), index, name = %name, "call complete");
        out.event(EventRef::ToolCallEnd {
            index,
            id: &id,
            name: &name,
            arguments,
        });
        for d in self.notes.drain(..) {
            out.event(EventRef::Diagnostic(&d));
        }
        session.completed += 1;
        self.done += 1;
        Ok(())
    }

    /// Drops the current call; returns its index if it had started, for the
    /// message that says what was lost. What was decided of its arguments
    /// goes out first, as it would have at a chunk boundary before the
    /// byte that broke it: how the input was cut never changes the events.
    pub(crate) fn abandon(&mut self, out: &mut dyn Sink, src: HeldBytes<'_>) -> Option<usize> {
        self.sync(out, src);
        let i = self.started_index();
        self.call = None;
        self.notes.clear();
        i
    }
}

impl Call {
    /// The arguments of a call being dispatched, made whole: closed if
    /// parameters left them open, `{}` if none were written, joined into
    /// one text if they were copied in segments; refused if they are not
    /// finished or not UTF-8.
    fn finish_args(&mut self, src: HeldBytes<'_>) -> Result<(), Stop> {
        let c = self;
        match c.args_state {
            Args::Done => {}
            Args::Params if !c.param.frames_open() => {
                c.args.push(b'}');
                c.args_state = Args::Done;
            }
            Args::Missing | Args::Null => {
                c.span = None;
                c.segs.clear();
                c.args.clear();
                c.args.extend_from_slice(b"{}");
                c.emitted = 0;
            }
            Args::Object(_) | Args::Encoded(_) | Args::Literal | Args::Params | Args::Written => {
                return Err(Stop::fail(Reason::ArgsUnfinished));
            }
        }
        if !c.segs.is_empty() {
            // The whole text, once: the deltas sent so far are its prefix
            // (`emitted` counts them), the rest is sent from it.
            c.args = joined(&c.args, &c.segs, src, c.text_len(src));
            c.segs = Vec::new();
            c.pending_text = Vec::new();
        }
        // Whatever wrote the arguments (a span of the input, raw parameter
        // values copied as they came), they must be text before the call
        // starts: the deltas sent are (checked when sent), so the rest is
        // checked here; the whole once more below, to hand it on as `&str`.
        let text = args_text(c.span, &c.args, src);
        if std::str::from_utf8(text.get(c.emitted..).unwrap_or(text)).is_err() {
            return Err(Stop::fail(Reason::ArgsNotUtf8));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use crate::ids::IdMint;

    #[test]
    fn a_second_json_name_is_refused_a_markup_name_may_be_replaced() {
        let mut session = Session::new(IdSource::new(&IdMint::Seeded(0)), None, Limits::default());
        let mut out: Vec<Event> = Vec::new();
        let src = HeldBytes {
            buf: &[],
            start: Offset::START,
        };
        for tentative in [false, true] {
            let mut calls = BlockCalls::new(tentative);
            calls
                .set_name(&mut session, &mut out, Offset::START, "a", true, src)
                .unwrap();
            let e = calls.set_name(&mut session, &mut out, Offset::new(1), "b", true, src);
            assert_eq!(e, Err(Stop::not_a_call(Reason::TwoNames)));
            // still the first name: nothing can end under the second
            assert_eq!(
                calls.call.as_ref().and_then(|c| c.name.as_deref()),
                Some("a")
            );
        }
        // DeepSeek V3's type word, then the name: from markup, replaced
        let mut calls = BlockCalls::new(false);
        calls
            .set_name(
                &mut session,
                &mut out,
                Offset::START,
                "function",
                false,
                src,
            )
            .unwrap();
        calls
            .set_name(&mut session, &mut out, Offset::new(1), "f", false, src)
            .unwrap();
        assert_eq!(
            calls.call.as_ref().and_then(|c| c.name.as_deref()),
            Some("f")
        );
    }
}
