//! The raw value step of parameter-style bodies (`<parameter=k>` *value*
//! `</parameter>`): finds where the value ends — its closer, or the markup
//! that ends an unclosed one — and hands its bytes to the call as they
//! are decided, with the markup whitespace trimmed and XML entities
//! decoded where the format says so.
//!
//! The value's bytes are in the pending buffer (a block keeps all of its
//! bytes until its fate is known), so this reader keeps offsets, not bytes:
//! how far the value was handed on, and the few bytes that may begin its
//! end markup (held by the literal matcher).

use crate::lang::format::Trim;
use crate::lang::program::{CloseOp, ThenOpt, ValueOp};
use crate::offset::Offset;
use crate::read::reason::Reason;
use crate::read::src::HeldBytes;
use crate::read::steps::{is_ws, Progress, ThenEnd, ThenMatch};
use crate::read::xml::entities::decode_prefix;

/// What ended the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Not yet.
    No,
    /// Its closer.
    Close,
    /// Markup that ends an unclosed value (`recover`): the program goes on
    /// at this step.
    Recover(usize),
    /// Markup that makes the value a container (`nest`), before any of its
    /// text: the program goes on at this step.
    Nest(usize),
    /// The next call's markup after markup that may end the value (an
    /// `at_end` literal): that literal was the call's closer, so the value
    /// ends there, and what follows it is read again.
    Closed,
    /// The value cannot begin with this byte (a word value with no byte,
    /// a bracketed one without its bracket): the block fails.
    Bad(u8),
    /// Its closer, and then (after whitespace, where the program allows
    /// it) literal `k` of what the program reads after the value
    /// ([`ValueOp::after`](crate::lang::program::ValueOp::after)): the
    /// value ended at the closer, and the program goes on after that
    /// literal, which was read.
    After(usize),
    /// What followed a closer (from this offset on, before the bytes fed
    /// now) is not what the program reads after the value: the closer was
    /// part of the value. Those bytes are to be read again.
    Rescan(Offset),
}

/// A closer met inside a value, whose bytes after it are being matched
/// against what the program reads after the value.
#[derive(Debug)]
struct Probe {
    /// Where the closer begins (the value ends there if it counts).
    close_at: Offset,
    /// Where it ends.
    close_end: Offset,
    /// The literals after it, matched so far.
    m: ThenMatch,
}

/// How the end of a value is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// End markup (`opts`), matched by `m`.
    Markup,
    /// The first whitespace byte, which is left for the next step; the end
    /// of the stream ends the value too.
    Space,
    /// The bracket that closes the first one.
    Balanced(Brackets),
}

/// Where a bracketed JSON value is: how deep, and whether in a string.
/// Bracket bytes inside strings do not count; a backslash in a string
/// escapes the next byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Brackets {
    /// Open brackets; 0 before the first one.
    depth: u32,
    in_str: bool,
    /// The last byte was a backslash inside a string.
    esc: bool,
}

impl Brackets {
    /// Reads `input` until the first bracket closes: `Ok(Some(n))`, the
    /// value is the first `n` bytes; `Ok(None)`, all of it is value and it
    /// goes on; `Err(b)`, the value does not begin with a bracket.
    fn feed(&mut self, input: &[u8]) -> Result<Option<usize>, u8> {
        let mut i = 0;
        while i < input.len() {
            if self.esc {
                // The byte after a backslash in a string.
                self.esc = false;
                i += 1;
                continue;
            }
            if self.in_str {
                // Jump to the next byte that matters in a string.
                let Some(k) = memchr::memchr2(b'"', b'\\', &input[i..]) else {
                    return Ok(None);
                };
                i += k;
                if input[i] == b'\\' {
                    self.esc = true;
                } else {
                    self.in_str = false;
                }
                i += 1;
                continue;
            }
            let b = input[i];
            if self.depth == 0 && b != b'{' && b != b'[' {
                return Err(b);
            }
            match b {
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Ok(Some(i + 1));
                    }
                }
                b'"' => self.in_str = true,
                _ => {}
            }
            i += 1;
        }
        Ok(None)
    }
}

/// Where a value is with respect to its raw-content guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Guarded {
    /// No guard was opened.
    No,
    /// After the opening guard: everything is value up to the closing one.
    Inside,
    /// After the closing guard: only the closer is sought.
    After,
}

/// A value being read.
#[derive(Debug)]
pub(crate) struct ValueRead {
    /// How the end is found; with [`Scan::Markup`] only, the fields about
    /// markup below (`m`, `opts`, the counts, `guard`, `held_from`,
    /// `ends`) play
    /// a part.
    scan: Scan,
    /// Matches the end markup across chunks; `held` is what may begin it.
    m: ThenMatch,
    /// The closer, then the `recover` literals, then the `at_end` ones.
    opts: Vec<ThenOpt>,
    /// How many `recover` literals follow the closer in `opts`.
    n_recover: usize,
    /// How many `at_end` literals follow them.
    n_at_end: usize,
    /// How many `nest` literals follow them.
    n_nest: usize,
    /// How many `follow` literals follow them, then how many `next_block`
    /// ones, then how many `markup` ones; the guard's opener, if any, is
    /// last.
    n_follow: usize,
    n_next_block: usize,
    n_markup: usize,
    /// Where the first markup met inside the value began (a `markup`
    /// literal, the next call's markup, nesting markup after text, a
    /// closer that turned out to be content): a value that holds markup
    /// never ends unclosed (see [`holds_markup`](Self::holds_markup)).
    markup_at: Option<Offset>,
    /// The closer met last, while what follows it is matched against what
    /// the program reads after the value (only where the program says,
    /// `ValueOp::after`): until then the closer and what follows are not
    /// decided.
    probe: Option<Probe>,
    /// Whitespace may come between the closer and what follows it.
    after_ws: bool,
    /// A `next_block` literal was met after an `at_end` one: a `recover`
    /// literal now belongs to the next call.
    next_call: bool,
    /// The raw-content guards; once the opener was met, `opts` is the
    /// closing guard alone, then the value's closer alone.
    guard: Option<(crate::lang::format::Lit, crate::lang::format::Lit)>,
    /// Where the guarded content ends (the closing guard began): nothing
    /// after it is value.
    stop_at: Option<Offset>,
    /// Where the value is with respect to its guards.
    guarded: Guarded,
    /// The value's closer (`opts[0]` until a guard replaces `opts`).
    closer: ThenOpt,
    /// Absolute offset of the value's first byte.
    start: Offset,
    /// Every byte from `start` up to here is whitespace (`None`: a byte
    /// that is not was seen).
    blank_upto: Option<Offset>,
    /// Absolute offset up to which the value was handed to the call
    /// (trimmed whitespace and decoded entities included).
    done: Offset,
    /// Where the first `at_end` literal met inside the value began. Bytes
    /// from there on are handed on only once the closer shows they are
    /// value.
    held_from: Option<Offset>,
    /// For each `at_end` literal, in the order of `opts`: where it began
    /// the last time it was met. At the end of the stream the value ends
    /// at the first literal's last occurrence (the end markup is at the
    /// end of the stream; earlier ones are more likely value).
    ends: Vec<Option<Offset>>,
    /// The leading whitespace that is markup has been skipped.
    lead_done: bool,
    trim: Trim,
    entities: bool,
    /// The end of the stream ends the value (a closer it may have begun
    /// included).
    or_end: bool,
    /// Entity decoding's output, reused.
    scratch: Vec<u8>,
    /// The bytes that may begin one of `opts` (bit `b` of word `b / 64`):
    /// set with `opts` (see [`first_bytes`]).
    starts: [u64; 4],
    /// The bytes that may come second in one of `opts`: set with `opts`
    /// (see [`second_bytes`]).
    seconds: [u64; 4],
}

/// The bytes that may come second in one of `opts`, as a 256-bit set;
/// every byte if one of them is a single byte (after which anything
/// may come).
fn second_bytes(opts: &[ThenOpt]) -> [u64; 4] {
    if opts.iter().any(|o| o.lit.bytes.len() < 2) {
        return [u64::MAX; 4];
    }
    bytes_at(opts, 1)
}

/// The bytes that may begin one of `opts`, as a 256-bit set.
fn first_bytes(opts: &[ThenOpt]) -> [u64; 4] {
    bytes_at(opts, 0)
}

/// The bytes at index `i` of `opts` (either case where a literal ignores
/// case), as a 256-bit set; literals too short add nothing.
fn bytes_at(opts: &[ThenOpt], i: usize) -> [u64; 4] {
    let mut set = [0u64; 4];
    for o in opts {
        let Some(&b) = o.lit.bytes.get(i) else {
            continue;
        };
        let mut add = |b: u8| set[usize::from(b >> 6)] |= 1 << (b & 63);
        add(b);
        if o.lit.case_insensitive {
            add(b.to_ascii_lowercase());
            add(b.to_ascii_uppercase());
        }
    }
    set
}

/// How many whitespace bytes at the end of `bytes`, bytes of a value
/// trimmed as `trim` says, may still be the markup before its end.
#[inline]
pub(crate) fn trailing_markup(trim: Trim, bytes: &[u8]) -> usize {
    match trim {
        Trim::None => 0,
        Trim::Newline => usize::from(bytes.last() == Some(&b'\n')),
        Trim::All => bytes.iter().rev().take_while(|&&b| is_ws(b)).count(),
    }
}

/// What a run of plain chunks of a value watches for (see
/// [`ValueRead::run_bytes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunBytes {
    /// The bytes that may begin the value's end markup.
    pub(crate) starts: [u64; 4],
    /// The bytes that may come second in it: a byte of `starts` followed
    /// by none of these begins no markup.
    pub(crate) seconds: [u64; 4],
    /// `&` begins an entity.
    pub(crate) entities: bool,
    /// Which trailing whitespace may be markup.
    pub(crate) trim: Trim,
    /// A byte of `starts` at the end of the bytes read may be held as
    /// markup half met ([`ValueRead::hold_start`]): no markup is that one
    /// byte alone.
    pub(crate) holds: bool,
}

/// Where a value's bytes go as they are decided: the call being built
/// (the engine's call assembly implements it; the reader knows nothing of
/// calls).
pub(crate) trait ValueOut {
    /// The next bytes of the value (entities decoded, markup whitespace
    /// trimmed); `at`: their absolute offset when they are bytes of the
    /// pending buffer `src` as they stand there.
    fn value_bytes(&mut self, bytes: &[u8], at: Option<Offset>, src: HeldBytes<'_>);
}

impl ValueRead {
    /// A value that begins at absolute offset `start`; `key` names the
    /// closing tag of a [`Close::KeyTag`](crate::lang::format::Close::KeyTag)
    /// value.
    pub(crate) fn new(op: &ValueOp, start: Offset, key: &str) -> ValueRead {
        let (scan, close) = match &op.close {
            CloseOp::Lit(l) => (Scan::Markup, l.clone()),
            CloseOp::KeyTag => (
                Scan::Markup,
                crate::lang::format::Lit::new(&format!("</{key}>")),
            ),
            // (A closer that is never sought.)
            CloseOp::Space => (Scan::Space, crate::lang::format::Lit::new(" ")),
            CloseOp::Balanced => (
                Scan::Balanced(Brackets::default()),
                crate::lang::format::Lit::new("]"),
            ),
        };
        let mut opts = Vec::with_capacity(1 + op.recover.len() + op.at_end.len());
        opts.push(ThenOpt {
            lit: close,
            to: 0,
            begins_call: false,
        });
        opts.extend(op.recover.iter().cloned());
        opts.extend(op.at_end.iter().cloned());
        opts.extend(op.nest.iter().cloned());
        opts.extend(op.follow.iter().cloned());
        opts.extend(op.next_block.iter().cloned());
        opts.extend(op.markup.iter().cloned());
        if let Some((open, _)) = &op.guard {
            opts.push(ThenOpt {
                lit: open.clone(),
                to: 0,
                begins_call: false,
            });
        }
        ValueRead {
            scan,
            m: ThenMatch::seeking(start, Vec::new()),
            closer: opts[0].clone(),
            n_recover: op.recover.len(),
            n_at_end: op.at_end.len(),
            n_nest: op.nest.len(),
            n_follow: op.follow.len(),
            n_next_block: op.next_block.len(),
            n_markup: op.markup.len(),
            markup_at: None,
            probe: None,
            after_ws: op.after_ws,
            next_call: false,
            guard: op.guard.clone(),
            stop_at: None,
            guarded: Guarded::No,
            start,
            blank_upto: Some(start),
            done: start,
            held_from: None,
            ends: vec![None; op.at_end.len()],
            lead_done: false,
            trim: op.trim,
            entities: op.entities,
            or_end: op.or_end,
            scratch: Vec::new(),
            starts: first_bytes(&opts),
            seconds: second_bytes(&opts),
            opts,
        }
    }

    /// The markup sought from now on (the one way `opts` changes, so that
    /// `starts` follows).
    fn set_opts(&mut self, opts: Vec<ThenOpt>) {
        self.starts = first_bytes(&opts);
        self.seconds = second_bytes(&opts);
        self.opts = opts;
    }

    /// Whether [`feed`](Self::feed) would read all of `input` as value and
    /// change nothing: the value's end is markup, none of it is half met,
    /// and no markup begins in `input` — no byte of it may begin any, or
    /// each that may is followed in `input` by a byte no markup continues
    /// with (the `<` of `a < b` in source code). (Then the caller takes the
    /// bytes and calls [`hand`](Self::hand), as after `feed`.)
    #[inline]
    pub(crate) fn is_plain_run(&self, input: &[u8]) -> bool {
        let starts = &self.starts;
        let may_begin = |b: u8| starts[usize::from(b >> 6)] & (1 << (b & 63)) != 0;
        matches!(self.scan, Scan::Markup)
            && self.m.held.is_empty()
            && self.probe.is_none()
            && input
                .iter()
                .position(|&b| may_begin(b))
                .is_none_or(|at| self.no_markup_in(&input[at..]))
    }

    /// Whether no markup sought begins in `rest`: each byte of it differs
    /// from each markup within the bytes both have from there (so none
    /// begins there, and none can once more bytes come).
    #[cold]
    #[inline(never)]
    fn no_markup_in(&self, rest: &[u8]) -> bool {
        (0..rest.len()).all(|at| {
            self.opts.iter().all(|o| {
                let lit = &o.lit;
                !rest[at..]
                    .iter()
                    .take(lit.bytes.len())
                    .enumerate()
                    .all(|(i, &b)| lit.matches_at(i, b))
            })
        })
    }

    /// Whether a plain run `input` ([`is_plain_run`](Self::is_plain_run)),
    /// held after the bytes up to `pos`, would be handed on whole and as
    /// it stands, right after everything handed so far: nothing is held
    /// back or trimmed, and it has no entity to decode. Then the caller
    /// hands it on itself and calls [`handed`](Self::handed).
    pub(crate) fn hands_whole(&self, pos: Offset, input: &[u8]) -> bool {
        self.lead_done
            && self.done == pos
            && self.stop_at.is_none()
            && self.held_from.is_none()
            && self.markup_at.is_none()
            && self.tail(input) == 0
            && !(self.entities && memchr::memchr(b'&', input).is_some())
    }

    /// What a run of plain chunks of this value must watch for (see
    /// `block::steady`): the bytes that may begin its end markup and those
    /// that may come second in it, whether `&` begins an entity, and
    /// which trailing whitespace may be markup.
    pub(crate) fn run_bytes(&self) -> RunBytes {
        RunBytes {
            starts: self.starts,
            seconds: self.seconds,
            entities: self.entities,
            trim: self.trim,
            holds: self.opts.iter().all(|o| o.lit.bytes.len() > 1),
        }
    }

    /// A run of plain chunks ([`run_bytes`](Self::run_bytes)) ended with
    /// `b`, a byte that may begin the end markup, held back: the matcher
    /// holds it as markup half met, as [`feed`](Self::feed) would have
    /// (the run hands on what comes before it, see [`handed`](Self::handed)).
    pub(crate) fn hold_start(&mut self, b: u8) {
        debug_assert!(self.m.held.is_empty(), "a run begins with nothing held");
        self.m.held.clear();
        self.m.held.push(b);
    }

    /// `n` bytes were handed on whole (see [`hands_whole`](Self::hands_whole)).
    pub(crate) fn handed(&mut self, n: usize) {
        self.done = self.done.after(n);
    }

    /// How many whitespace bytes at the end of `bytes`, decided bytes of
    /// the value, may still be the markup before its end: they wait for
    /// what follows them (and are dropped at the end).
    fn tail(&self, bytes: &[u8]) -> usize {
        trailing_markup(self.trim, bytes)
    }

    /// [`feed`](Self::feed) as the readers' shared status: partial while
    /// the value goes on ([`End::No`]), failed at a byte no value may hold
    /// ([`End::Bad`], which reads none of the bytes), done with how it
    /// ended otherwise.
    #[inline]
    pub(crate) fn read(
        &mut self,
        input: &[u8],
        base: Offset,
        src: HeldBytes<'_>,
        after: &[ThenOpt],
    ) -> Progress<End> {
        match self.feed(input, base, src, after) {
            (n, End::No) => Progress::Partial(n),
            (_, End::Bad(found)) => Progress::Fail(0, Reason::Unexpected { found }),
            (n, end) => Progress::Done(n, end),
        }
    }

    /// Reads `input` (the bytes after absolute offset `base`, not yet in
    /// the pending buffer, which ends with the value's earlier bytes:
    /// `src`) until the value ends; returns how many bytes it consumed and
    /// whether the value ended. The caller takes the consumed bytes into
    /// the pending buffer and then calls [`ValueRead::hand`]. `after`:
    /// what the program reads after the value
    /// ([`ValueOp::after`](crate::lang::program::ValueOp::after)); where it
    /// is given, a closer counts only where one of its literals follows.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        base: Offset,
        src: HeldBytes<'_>,
        after: &[ThenOpt],
    ) -> (usize, End) {
        match &mut self.scan {
            Scan::Markup => {}
            Scan::Space => {
                return match input.iter().position(|&b| is_ws(b)) {
                    Some(0) if base == self.start => (0, End::Bad(input[0])),
                    Some(n) => (n, End::Close),
                    None => (input.len(), End::No),
                }
            }
            Scan::Balanced(br) => {
                return match br.feed(input) {
                    Ok(Some(n)) => (n, End::Close),
                    Ok(None) => (input.len(), End::No),
                    Err(b) => (0, End::Bad(b)),
                }
            }
        }
        let mut n = 0;
        loop {
            if let Some(end) = self.probe_after(input, base, after, &mut n) {
                return end;
            }
            let sought = self.m.seek(&self.opts, &input[n..]);
            n += sought.read();
            let Progress::Done(_, j) = sought else {
                return (n, End::No);
            };
            if let Some(end) = self.met(j, n, input, base, src, after) {
                return end;
            }
        }
    }

    /// [`feed`](Self::feed), after a closer, if one is being probed: reads
    /// what follows it from `input[*n]` on to see whether the program reads
    /// it after the value. The value's end, or `None` to seek on from `*n`
    /// (the probe is over: the closer was value).
    #[inline]
    fn probe_after(
        &mut self,
        input: &[u8],
        base: Offset,
        after: &[ThenOpt],
        n: &mut usize,
    ) -> Option<(usize, End)> {
        let p = self.probe.as_mut()?;
        let (k, how) = match p.m.feed(after, self.after_ws, &input[*n..]) {
            Progress::Done(k, how) => (k, how),
            // (`ThenMatch` fails no byte: the sequel is over or not yet.)
            Progress::Partial(_) | Progress::Fail(..) => return Some((input.len(), End::No)),
        };
        match how {
            ThenEnd::Matched(j) => {
                // The closer: markup met before it was value.
                self.forget_markup();
                Some((*n + k, End::After(j)))
            }
            ThenEnd::Over => {
                // No: the closer is part of the value (markup inside it),
                // and what followed it is read again.
                let (close_at, close_end) = (p.close_at, p.close_end);
                self.probe = None;
                self.markup_at.get_or_insert(close_at);
                if close_end < base {
                    return Some((*n + k, End::Rescan(close_end)));
                }
                *n = close_end.since(base);
                None
            }
        }
    }

    /// The closer ended the value: the markup met before it was value
    /// after all.
    #[inline]
    fn forget_markup(&mut self) {
        self.held_from = None;
        self.markup_at = None;
        self.next_call = false;
        self.ends.iter_mut().for_each(|e| *e = None);
    }

    /// [`feed`](Self::feed) met option `j`, whose literal ends at
    /// `input[n]`: the value's end, or `None` to seek on from `n`.
    #[inline]
    fn met(
        &mut self,
        j: usize,
        n: usize,
        input: &[u8],
        base: Offset,
        src: HeldBytes<'_>,
        after: &[ThenOpt],
    ) -> Option<(usize, End)> {
        let len = self.opts[j].lit.bytes.len();
        let at = base.after(n).before(len);
        match self.guarded {
            Guarded::No => {}
            Guarded::Inside => {
                // The closing guard: then the closer.
                self.stop_at = Some(at);
                self.guarded = Guarded::After;
                self.set_opts(vec![self.closer.clone()]);
                self.m.held.clear();
                return None;
            }
            Guarded::After => return Some((n, End::Close)),
        }
        if j == 0 && !after.is_empty() && self.guarded == Guarded::No {
            // The closer counts only if what the program reads after
            // the value follows it.
            let close_end = at.after(len);
            self.probe = Some(Probe {
                close_at: at,
                close_end,
                m: ThenMatch::new(close_end, after.len()),
            });
            self.m.held.clear();
            return None;
        }
        if j == 0 {
            self.forget_markup();
            return Some((n, End::Close));
        }
        if j <= self.n_recover {
            if self.next_call {
                // The next call's parameter, after its opener.
                return Some((n, End::Closed));
            }
            return Some((n, End::Recover(self.opts[j].to)));
        }
        if j <= self.n_recover + self.n_at_end {
            // Markup that may end the value, decided at the end of the
            // stream: for now it is value.
            self.held_from.get_or_insert(at);
            self.ends[j - 1 - self.n_recover] = Some(at);
            self.m.held.clear();
            return None;
        }
        self.met_markup(j, n, at, input, base, src)
    }

    /// [`met`](Self::met) for option `j` past the closer, the recovery and
    /// the end-of-stream markup: nesting, linked or plain markup, met at
    /// `at`.
    #[inline]
    fn met_markup(
        &mut self,
        j: usize,
        n: usize,
        at: Offset,
        input: &[u8],
        base: Offset,
        src: HeldBytes<'_>,
    ) -> Option<(usize, End)> {
        let nested = self.n_recover + self.n_at_end + self.n_nest;
        let linked = nested + self.n_follow + self.n_next_block;
        if j > linked && j <= linked + self.n_markup {
            // The format's markup inside the value: value, but noted.
            self.markup_at.get_or_insert(at);
            self.m.held.clear();
            return None;
        }
        if j > nested && j <= linked {
            // (Markup inside the value, if it ends before it.)
            self.markup_at.get_or_insert(at);
            if self.held_from.is_some() {
                if j <= nested + self.n_follow {
                    // The next call's markup after the call's closer.
                    return Some((n, End::Closed));
                }
                // The next block's marker: a parameter after it will
                // show it began the next call.
                self.next_call = true;
            }
            // Without a closer before it, it is value (so far).
            self.m.held.clear();
            return None;
        }
        if self.blank_before(at, base, input, src) {
            if j <= nested {
                return Some((n, End::Nest(self.opts[j].to)));
            }
            if let Some((_, close)) = &self.guard {
                // The guard's opener: its content is value, verbatim.
                self.done = at.after(self.opts[j].lit.bytes.len());
                self.lead_done = true;
                self.trim = Trim::None;
                self.entities = false;
                let close = ThenOpt {
                    lit: close.clone(),
                    to: 0,
                    begins_call: false,
                };
                self.set_opts(vec![close]);
                self.guarded = Guarded::Inside;
                self.m.held.clear();
                return None;
            }
        }
        // Nesting markup after text is value.
        self.markup_at.get_or_insert(at);
        self.m.held.clear();
        None
    }

    /// Whether the value, were it to end unclosed at absolute offset `end`,
    /// would hold markup: the format's or a reasoning block's (a markup
    /// literal, the next call's markup, a closer that was part of it), or
    /// markup that may end it unclosed (the call's closer) before `end`.
    /// Such a value ends only at its closer: ended by other markup, it
    /// would be an argument the model never wrote.
    pub(crate) fn holds_markup(&self, end: Offset) -> bool {
        self.markup_at.is_some_and(|m| m < end) || self.held_from.is_some_and(|h| h < end)
    }

    /// The closer met last, while what follows it is undecided (see
    /// [`End::After`]): where it begins and ends.
    pub(crate) fn open_close(&self) -> Option<(Offset, Offset)> {
        self.probe.as_ref().map(|p| (p.close_at, p.close_end))
    }

    /// Whether the value holds only whitespace before absolute offset `at`
    /// (its bytes before `base` are at the end of `src`, the others at the
    /// start of `input`).
    fn blank_before(&mut self, at: Offset, base: Offset, input: &[u8], src: HeldBytes<'_>) -> bool {
        let Some(blank_upto) = self.blank_upto else {
            return false;
        };
        let from = blank_upto.max(self.start);
        let in_src = src.between(from, at.min(base));
        let skip = from.since(base);
        let upto = at.index_in(base, input.len());
        let in_input = input.get(skip..upto).unwrap_or(&[]);
        if in_src.iter().chain(in_input).all(|&b| is_ws(b)) {
            self.blank_upto = Some(at);
            true
        } else {
            self.blank_upto = None;
            false
        }
    }

    /// Where the value's decided bytes end, given that the pending buffer
    /// now ends at `pos`: before what may begin its end markup, before
    /// markup that may end it at the end of the stream, and before markup
    /// inside it (only its closer shows that markup is value).
    fn decided(&self, pos: Offset) -> Offset {
        let end = pos.before(self.m.held.len());
        let end = self.probe.as_ref().map_or(end, |p| p.close_at.min(end));
        let end = self.stop_at.map_or(end, |s| s.min(end));
        let end = self.markup_at.map_or(end, |at| at.min(end));
        self.held_from.map_or(end, |at| at.min(end))
    }

    /// Hands the value's newly decided bytes to the call; `fin`: the value
    /// ended (at `pos` minus its end markup).
    pub(crate) fn hand(
        &mut self,
        src: HeldBytes<'_>,
        pos: Offset,
        fin: bool,
        out: &mut impl ValueOut,
    ) {
        let upto = self.decided(pos);
        self.hand_upto(src, upto, fin, out);
    }

    fn hand_upto(&mut self, src: HeldBytes<'_>, upto: Offset, fin: bool, out: &mut impl ValueOut) {
        let mut bytes = src.between(self.done, upto);
        if !self.lead_done {
            let skip = match self.trim {
                Trim::None => 0,
                Trim::Newline => usize::from(bytes.first() == Some(&b'\n')),
                Trim::All => bytes.iter().take_while(|&&b| is_ws(b)).count(),
            };
            if bytes.is_empty() || (self.trim == Trim::All && skip == bytes.len()) {
                // Nothing but what may be leading markup yet.
                self.done = self.done.after(skip);
                self.lead_done = fin;
                if !fin {
                    return;
                }
                bytes = &[];
            } else {
                self.done = self.done.after(skip);
                bytes = &bytes[skip..];
                self.lead_done = true;
            }
        }
        // Trailing whitespace that may be markup waits for what follows
        // it; at the end it is dropped.
        let bytes = &bytes[..bytes.len() - self.tail(bytes)];
        // Without an `&` there is no entity to decode: the bytes are
        // handed on as they stand (a span of the input, not a copy).
        if self.entities && memchr::memchr(b'&', bytes).is_some() {
            self.scratch.clear();
            let used = decode_prefix(bytes, fin, &mut self.scratch);
            out.value_bytes(&self.scratch, None, src);
            self.done = self.done.after(used);
        } else {
            let at = (self.done >= src.start).then_some(self.done);
            out.value_bytes(bytes, at, src);
            self.done = self.done.after(bytes.len());
        }
        if fin {
            self.done = upto;
        }
    }

    /// Where the end markup found by the last `feed` begins, the pending
    /// buffer ending at `pos`.
    pub(crate) fn end_offset(&self, pos: Offset) -> Offset {
        pos.before(self.m.held.len())
    }

    /// At the end of the stream: if an `at_end` literal was met, the value
    /// ends where the first of them (in the format's order) began the last
    /// time. Returns that offset, the literal's length and the step the
    /// program goes on with.
    pub(crate) fn end_at_candidate(
        &mut self,
        src: HeldBytes<'_>,
        out: &mut impl ValueOut,
    ) -> Option<(Offset, usize, usize)> {
        let (k, at) = self
            .ends
            .iter()
            .enumerate()
            .find_map(|(k, e)| e.map(|at| (k, at)))?;
        let j = 1 + self.n_recover + k;
        self.hand_upto(src, at, true, out);
        let o = &self.opts[j];
        Some((at, o.lit.bytes.len(), o.to))
    }

    /// Where the value would end at the end of the stream, if an `at_end`
    /// literal was met (see [`end_at_candidate`](Self::end_at_candidate)),
    /// and that literal's length.
    pub(crate) fn candidate(&self) -> Option<(Offset, usize)> {
        let (k, at) = self
            .ends
            .iter()
            .enumerate()
            .find_map(|(k, e)| e.map(|at| (k, at)))?;
        Some((at, self.opts[1 + self.n_recover + k].lit.bytes.len()))
    }

    /// Whether an `at_end` literal was met.
    pub(crate) fn has_candidate(&self) -> bool {
        self.held_from.is_some()
    }

    /// Whether the end of the stream, with the pending buffer ending at
    /// `pos`, ends the value: a word value with at least one byte.
    pub(crate) fn ends_at_eof(&self, pos: Offset) -> bool {
        (self.scan == Scan::Space && pos > self.start) || self.or_end
    }

    /// The stream ended inside a value that it may end: the bytes that may
    /// have begun its closer are value.
    pub(crate) fn end_at_eof(&mut self) {
        if self.or_end {
            self.m.held.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Brackets, End, HeldBytes, ValueRead};
    use crate::lang::format::{Lit, Trim};
    use crate::lang::program::{CloseOp, ThenOpt, ValueOp};
    use crate::offset::Offset;

    fn opt(lit: &str, to: usize) -> ThenOpt {
        ThenOpt {
            lit: Lit::new(lit),
            to,
            begins_call: false,
        }
    }

    /// A value closed by `</v>`, after which the program reads whitespace
    /// and `<k>` or `</c>`; `<k>` ends it unclosed, `</c>` may at the end,
    /// and `<m>` is markup of the format.
    fn op() -> ValueOp {
        ValueOp {
            close: CloseOp::Lit(Lit::new("</v>")),
            recover: vec![opt("<k>", 3)],
            at_end: vec![opt("</c>", 5)],
            nest: Vec::new(),
            follow: Vec::new(),
            next_block: Vec::new(),
            markup: vec![opt("<m>", 0)],
            after: vec![opt("<k>", 7), opt("</c>", 9)],
            after_ws: true,
            guard: None,
            trim: Trim::None,
            entities: false,
            or_end: false,
            null: false,
        }
    }

    /// Feeds `input` cut at `cut` as the block does (the bytes a
    /// `Rescan` names read again); returns how the value ended, where the
    /// bytes taken end, and whether it holds markup before that end.
    fn drive(input: &[u8], cut: usize) -> (End, usize, bool) {
        let op = op();
        let mut vr = ValueRead::new(&op, Offset::START, "");
        let mut pos = 0;
        for chunk_end in [cut, input.len()] {
            while pos < chunk_end {
                let src = HeldBytes {
                    buf: &input[..pos],
                    start: Offset::START,
                };
                let base = Offset::START.after(pos);
                let (n, end) = vr.feed(&input[pos..chunk_end], base, src, &op.after);
                pos += n;
                match end {
                    End::No => {}
                    End::Rescan(from) => pos = from.since(Offset::START),
                    other => {
                        let at = Offset::START.after(pos).before(3);
                        return (other, pos, vr.holds_markup(at));
                    }
                }
            }
        }
        (End::No, pos, vr.holds_markup(Offset::START.after(pos)))
    }

    /// The reader through the readers' shared status ([`ValueRead::read`]),
    /// against a table of states (fresh; inside the value; just after its
    /// closer, before what follows it) × inputs (the closer and what the
    /// program reads after it; more of the value; markup that ends it
    /// unclosed; a closer that was part of the value).
    #[test]
    fn read_by_state_and_input() {
        use crate::read::steps::Progress;
        let op = op();
        let table: &[(&str, &str, &str, Progress<End>)] = &[
            (
                "fresh, closed",
                "",
                "x</v><k>",
                Progress::Done(8, End::After(0)),
            ),
            (
                "fresh, closed, blank",
                "",
                "x</v> </c>",
                Progress::Done(10, End::After(1)),
            ),
            ("fresh, goes on", "", "x y", Progress::Partial(3)),
            (
                "fresh, unclosed",
                "",
                "x<k>",
                Progress::Done(4, End::Recover(3)),
            ),
            (
                "inside, closed",
                "ab",
                "c</v><k>",
                Progress::Done(8, End::After(0)),
            ),
            ("inside, goes on", "ab", " c", Progress::Partial(2)),
            (
                "after the closer, its sequel",
                "ab</v>",
                "<k>",
                Progress::Done(3, End::After(0)),
            ),
            // (Nothing read after the closer yet: its bytes are value, read
            // on at once.)
            (
                "after the closer, value after all",
                "ab</v>",
                "z",
                Progress::Partial(1),
            ),
            // (A blank after it was read: it is read again as value.)
            (
                "after the closer and a blank, value after all",
                "ab</v> ",
                "z",
                Progress::Done(0, End::Rescan(Offset::START.after(6))),
            ),
        ];
        for &(what, before, input, want) in table {
            let all = format!("{before}{input}");
            let mut vr = ValueRead::new(&op, Offset::START, "");
            let src = HeldBytes {
                buf: &[],
                start: Offset::START,
            };
            let head = vr.read(before.as_bytes(), Offset::START, src, &op.after);
            assert_eq!(head, Progress::Partial(before.len()), "{what}: the state");
            let src = HeldBytes {
                buf: &all.as_bytes()[..before.len()],
                start: Offset::START,
            };
            let base = Offset::START.after(before.len());
            let got = vr.read(input.as_bytes(), base, src, &op.after);
            assert_eq!(got, want, "{what}");
        }
    }

    /// State × input: where a raw value's closer counts (what the program
    /// reads after the value follows it), and what markup inside it is
    /// noted, fed whole and split at every offset.
    #[test]
    fn a_closer_counts_only_where_the_program_reads_on_after_it() {
        let table: &[(&str, End, usize, bool)] = &[
            // The closer, then the next parameter or the call's closer.
            ("a</v><k>", End::After(0), 8, false),
            ("a</v> \n</c>", End::After(1), 11, false),
            // A closer that something else follows is value.
            ("a</v>b</v><k>", End::After(0), 13, false),
            ("a</v></v></c>", End::After(1), 13, false),
            ("a</v>b", End::No, 6, true),
            ("a</v> <b>", End::No, 9, true),
            // Unclosed: ended by the next parameter; with markup before
            // it (the format's, or a closer that was value), it holds some.
            ("ab<k>", End::Recover(3), 5, false),
            ("a<m>b<k>", End::Recover(3), 8, true),
            ("a</v>b<k>", End::Recover(3), 9, true),
        ];
        for &(input, want, taken, markup) in table {
            let bytes = input.as_bytes();
            for cut in 0..=bytes.len() {
                let (end, pos, held) = drive(bytes, cut);
                assert_eq!(end, want, "{input:?} cut at {cut}");
                assert_eq!(pos, taken, "{input:?} cut at {cut}");
                if end != End::After(0) && end != End::After(1) {
                    assert_eq!(held, markup, "{input:?} cut at {cut}");
                }
            }
        }
    }

    /// State × input: where a bracketed value ends, fed whole and split
    /// at every offset.
    #[test]
    fn brackets_end_where_the_first_one_closes() {
        let table: &[(&str, Result<Option<usize>, u8>)] = &[
            ("{}", Ok(Some(2))),
            ("[] x", Ok(Some(2))),
            (r#"{"a": [1, {"b": "]}"}]} rest"#, Ok(Some(23))),
            (r#"{"q": "say \"}\" \\"} x"#, Ok(Some(21))),
            (r#"["\\\\"] x"#, Ok(Some(8))),
            (r#"{"open": "{"#, Ok(None)),
            ("[[[]]", Ok(None)),
            ("x{}", Err(b'x')),
            (" {}", Err(b' ')),
        ];
        for (input, want) in table {
            let bytes = input.as_bytes();
            assert_eq!(Brackets::default().feed(bytes), *want, "{input}");
            for cut in 1..bytes.len() {
                let mut b = Brackets::default();
                let got = match b.feed(&bytes[..cut]) {
                    Ok(None) => b.feed(&bytes[cut..]).map(|n| n.map(|n| n + cut)),
                    other => other,
                };
                assert_eq!(got, *want, "{input} cut at {cut}");
            }
        }
    }
}
