//! The common case read without building a `serde_json::Value`: a chunk of
//! one choice whose delta is text only, no `tool_calls`, no
//! `finish_reason`. Its content is borrowed from the event's data (copied
//! only when it holds escapes); every other field is checked as JSON and
//! skipped unread.

use std::borrow::Cow;

use crate::scan::{Cursor, RawStr, NUMBERS};

/// Top-level fields of a chunk that are the same in every chunk of a
/// response (or carry no content): a chunk with nothing else is not worth
/// sending (here and in the general path, `chunks.rs`).
pub(crate) const ENVELOPE: [&str; 7] = [
    "id",
    "object",
    "created",
    "model",
    "system_fingerprint",
    "service_tier",
    "obfuscation",
];

/// What the fast path may handle in a chunk: its one choice's index and
/// text (`None`: no content).
pub(crate) struct Text<'a> {
    pub(crate) index: u64,
    pub(crate) content: Option<Cow<'a, str>>,
    /// Where the content string stands in the chunk, if it has one: what
    /// [`Like`] needs to read the next chunk against this one.
    pub(crate) seen: Option<Seen>,
}

/// Where a text-only chunk (one [`text_only`] took) keeps its content
/// string, quotes included, the numbers it skipped, and its choice's
/// index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    /// The content string's opening quote; `start < end <= len`.
    start: usize,
    /// The byte after its closing quote.
    end: usize,
    /// The spans of the first numbers [`Cursor::value`] skipped (the
    /// fields the fast path does not read), in order, none overlapping the
    /// content; `numbers[..counted]` are set.
    numbers: [(usize, usize); NUMBERS],
    counted: usize,
    index: u64,
    /// Every field but the content is one the general path leaves out of
    /// a chunk that carries nothing ([`changed_text`]): the envelope and
    /// `choices` at the top, `index` and `delta` in the choice, `null`
    /// anywhere, an empty string or list in the delta. It holds for a
    /// chunk [`Like`] read, which is its chunk's bytes but for the content
    /// and numbers (a number is neither `null` nor empty).
    bare: bool,
}

/// A chunk [`text_only`] took, and where its content is: the chunks of a
/// stream are alike but for their text (and a number or two: a time, a
/// stamp), so the next is first compared with it.
#[derive(Clone, Copy)]
pub(crate) struct Like<'s> {
    /// The chunk's data, as it came.
    pub(crate) data: &'s str,
    /// What `text_only` found in `data` (read from that very text).
    pub(crate) seen: Seen,
}

/// A part of a chunk that may differ from the chunk it is like.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Number,
    Content,
}

impl Like<'_> {
    /// `data` read against the chunk it is like: when its bytes are that
    /// chunk's but for the content string and the skipped numbers, each
    /// replaced by a valid string or number, it is the same JSON but for
    /// those tokens (a token put in place of another of its kind keeps the
    /// other tokens, and every field the fast path reads), so it reads as
    /// that chunk with this content. `None`: the chunks differ elsewhere
    /// (the caller reads `data` whole).
    fn read<'a>(self, data: &'a str) -> Option<Text<'a>> {
        let seen = self.seen;
        let (old, new) = (self.data.as_bytes(), data.as_bytes());
        let numbers = seen.numbers.get(..seen.counted)?;
        let at = numbers.partition_point(|&(s, _)| s < seen.start);
        let parts = numbers[..at]
            .iter()
            .map(|&span| (span, Part::Number))
            .chain([((seen.start, seen.end), Part::Content)])
            .chain(numbers[at..].iter().map(|&span| (span, Part::Number)));
        let mut next = seen;
        let mut content = None;
        // Read up to `o` of the old chunk, up to `n` of the new.
        let (mut o, mut n) = (0, 0);
        let mut k = 0;
        for ((s, e), part) in parts {
            let same = old.get(o..s)?;
            if new.get(n..n + same.len())? != same {
                return None;
            }
            n += same.len();
            let first = *new.get(n)?;
            let mut c = Cursor::at(data, n)?;
            let was = old.get(s..e)?;
            match part {
                Part::Number if same_number(was, new, n) => {
                    // As it was: the bytes say so, not read again.
                    *next.numbers.get_mut(k)? = (n, n + was.len());
                    k += 1;
                    (o, n) = (e, n + was.len());
                    continue;
                }
                Part::Number if first == b'-' || first.is_ascii_digit() => {
                    c.number()?;
                    *next.numbers.get_mut(k)? = (n, c.position());
                    k += 1;
                }
                Part::Content if first == b'"' => {
                    content = Some(c.string()?);
                    (next.start, next.end) = (n, c.position());
                }
                _ => return None,
            }
            (o, n) = (e, c.position());
        }
        if new.get(n..)? != old.get(o..)? {
            return None;
        }
        Some(Text {
            index: seen.index,
            content: Some(decode(data, content?)?),
            seen: Some(next),
        })
    }
}

/// Whether `new` holds the number `old` (a valid number token, read from
/// the last chunk) at `at`, whole: its bytes, then a byte no number goes
/// on with.
fn same_number(old: &[u8], new: &[u8], at: usize) -> bool {
    let end = at + old.len();
    new.get(at..end) == Some(old)
        && !new
            .get(end)
            .is_some_and(|&b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
}

/// The chunk's one text-only choice, if that is all it is; `None` sends it
/// down the general path. Read in one pass ([`Cursor`]), never more than
/// `serde_json` would read into a chunk's `choices[0].index`,
/// `.delta.content`, `.delta.tool_calls` and `.finish_reason` (the tests
/// hold the two together, field for field): where it is unsure, the
/// general path decides. (Deserializing those fields with `serde_json` was
/// the largest part of a proxied text event's rewrite.) A chunk `like` the
/// last one taken but for its text is read against it, without reading
/// the rest again.
pub(crate) fn text_only<'a>(data: &'a str, like: Option<Like<'_>>) -> Option<Text<'a>> {
    if let Some(text) = like.and_then(|like| like.read(data)) {
        return Some(text);
    }
    let mut c = Cursor::new(data);
    // `None`: not seen; `Some(None)`: `null`.
    let mut choice: Option<Option<ChoiceRead<'_>>> = None;
    let mut bare = true;
    c.object(|key, c| {
        if key != "choices" {
            let v = c.value()?;
            bare &= v == "null" || ENVELOPE.contains(&key);
            return Some(());
        }
        if choice.is_some() {
            // A field twice: `serde_json` refuses the chunk.
            return None;
        }
        if c.null() {
            choice = Some(None);
            return Some(());
        }
        let mut one = None;
        let mut count = 0;
        c.array(|c| {
            count += 1;
            if count > 1 {
                return None;
            }
            one = Some(ChoiceRead::read(c)?);
            Some(())
        })?;
        choice = Some(Some(one?));
        Some(())
    })?;
    if !c.at_end() {
        return None;
    }
    let skipped = c.skipped_numbers();
    let c = choice??;
    if c.finish_reason.is_some_and(|r| r != "null") || c.tool_calls.is_some_and(|t| t != "null") {
        return None;
    }
    let index = c.index.unwrap_or(0);
    let (content, seen) = match c.content {
        None => (None, None),
        Some(raw) => {
            let start = offset(data, raw.inner)?.checked_sub(1)?;
            let end = start + raw.inner.len() + 2;
            let mut numbers = [(0, 0); NUMBERS];
            numbers[..skipped.len()].copy_from_slice(skipped);
            let seen = Seen {
                start,
                end,
                numbers,
                counted: skipped.len(),
                index,
                bare: bare && !c.extra,
            };
            (Some(decode(data, raw)?), Some(seen))
        }
    };
    Some(Text {
        index,
        content,
        seen,
    })
}

/// A string's value: borrowed from `data` when it holds no escapes.
fn decode<'a>(data: &'a str, raw: RawStr<'a>) -> Option<Cow<'a, str>> {
    if !raw.escaped {
        return Some(Cow::Borrowed(raw.inner));
    }
    let at = offset(data, raw.inner)?;
    let quoted = data.get(at.checked_sub(1)?..at + raw.inner.len() + 1)?;
    Some(Cow::Owned(serde_json::from_str::<String>(quoted).ok()?))
}

/// Where `part` (borrowed from `data`) begins in `data`.
fn offset(data: &str, part: &str) -> Option<usize> {
    (part.as_ptr() as usize).checked_sub(data.as_ptr() as usize)
}

/// One choice of a chunk, as far as the fast path reads it.
#[derive(Default)]
struct ChoiceRead<'a> {
    index: Option<u64>,
    content: Option<RawStr<'a>>,
    tool_calls: Option<&'a str>,
    finish_reason: Option<&'a str>,
    /// A field other than those above and the delta's holds something:
    /// a value not `null` (in the delta, not an empty string or list
    /// either).
    extra: bool,
}

impl<'a> ChoiceRead<'a> {
    /// A choice object; `None` for anything `serde_json` would not read
    /// into its fields (or that this does not try to read).
    fn read(c: &mut Cursor<'a>) -> Option<ChoiceRead<'a>> {
        let mut r = ChoiceRead::default();
        let (mut index, mut delta, mut finish) = (false, false, false);
        c.object(|key, c| {
            let seen = match key {
                "index" => &mut index,
                "delta" => &mut delta,
                "finish_reason" => &mut finish,
                _ => {
                    r.extra |= c.value()? != "null";
                    return Some(());
                }
            };
            // A field twice: `serde_json` refuses the chunk.
            if std::mem::replace(seen, true) {
                return None;
            }
            match key {
                "index" if c.null() => {}
                "index" => r.index = Some(c.u64()?),
                "delta" if c.null() => {}
                "delta" => r.delta(c)?,
                _ => r.finish_reason = Some(c.value()?),
            }
            Some(())
        })?;
        Some(r)
    }

    /// The choice's delta object.
    fn delta(&mut self, c: &mut Cursor<'a>) -> Option<()> {
        let (mut content, mut tool_calls) = (false, false);
        c.object(|key, c| {
            let seen = match key {
                "content" => &mut content,
                "tool_calls" => &mut tool_calls,
                _ => {
                    self.extra |= !empty(c.value()?);
                    return Some(());
                }
            };
            if std::mem::replace(seen, true) {
                return None;
            }
            match key {
                "content" if c.null() => {}
                "content" => self.content = Some(c.string()?),
                _ => self.tool_calls = Some(c.value()?),
            }
            Some(())
        })
    }
}

/// Whether a delta's field `raw` (its JSON text) carries nothing: `null`,
/// an empty string, an empty list.
fn empty(raw: &str) -> bool {
    raw == "null"
        || raw == "\"\""
        || raw
            .strip_prefix('[')
            .and_then(|a| a.strip_suffix(']'))
            .is_some_and(|a| a.trim().is_empty())
}

/// A text-only chunk whose text the parser changed (held back, or released
/// with text held before) but that carries no calls and no reasoning: what
/// the general path would send for it, from where [`text_only`] found its
/// content (`seen`, of this `data`), without a `serde_json::Value`,
/// without reading the chunk again and without writing it anew.
/// `Some(None)`: it carries nothing (the general path holds it back);
/// `Some(Some(json))`: the chunk's data with its `delta.content` string
/// replaced by `text`, every other byte as it came. `None`: the general
/// path takes the chunk.
///
/// The rewrite of such chunks is the cost of the stream around a call (its
/// text is held chunk by chunk): building, rewriting and writing out a
/// `Value` for each took most of the rewrite's time, and reading each
/// chunk's fields again with `serde_json` (before `seen` said where they
/// are) two thirds of a proxied request's rewrite.
pub(crate) fn changed_text(data: &str, seen: &Seen, text: &str) -> Option<Option<String>> {
    if text.is_empty() && seen.bare {
        return Some(None);
    }
    let (before, after) = (data.get(..seen.start)?, data.get(seen.end..)?);
    let text = serde_json::to_string(text).ok()?;
    let mut out = String::with_capacity(before.len() + text.len() + after.len());
    out.push_str(before);
    out.push_str(&text);
    out.push_str(after);
    Some(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    // The fast path's reading by `serde_json`, as it was before the
    // one-pass reading: the oracle the cursor is held to.
    #[derive(Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow)]
        choices: Option<Vec<ChoiceView<'a>>>,
    }

    #[derive(Deserialize)]
    struct ChoiceView<'a> {
        index: Option<u64>,
        #[serde(borrow)]
        delta: Option<Delta<'a>>,
        #[serde(borrow)]
        finish_reason: Option<&'a serde_json::value::RawValue>,
    }

    #[derive(Deserialize)]
    struct Delta<'a> {
        #[serde(borrow)]
        content: Option<Cow<'a, str>>,
        #[serde(borrow)]
        tool_calls: Option<&'a serde_json::value::RawValue>,
    }

    fn by_serde(data: &str) -> Option<(u64, Option<String>)> {
        let chunk: Chunk<'_> = serde_json::from_str(data).ok()?;
        let mut choices = chunk.choices?;
        if choices.len() != 1 {
            return None;
        }
        let c = choices.pop()?;
        if c.finish_reason.is_some_and(|r| r.get() != "null") {
            return None;
        }
        let (content, tool_calls) = match c.delta {
            Some(d) => (d.content, d.tool_calls),
            None => (None, None),
        };
        if tool_calls.is_some_and(|t| t.get() != "null") {
            return None;
        }
        Some((c.index.unwrap_or(0), content.map(Cow::into_owned)))
    }

    fn by_cursor(data: &str) -> Option<(u64, Option<String>)> {
        text_only(data, None).map(|t| (t.index, t.content.map(Cow::into_owned)))
    }

    /// The cursor takes a chunk only as `serde_json` reads it; it may give
    /// up on one that `serde_json` reads (the general path then takes
    /// it), never the reverse.
    fn agree(data: &str) {
        let cursor = by_cursor(data);
        if cursor.is_some() {
            assert_eq!(cursor, by_serde(data), "{data:?}");
        }
    }

    const CHUNK: &str = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"there\"\n"},"logprobs":null,"finish_reason":null}],"usage":null}"#;

    #[test]
    fn chunks_of_every_shape_read_as_serde_json_reads_them() {
        let cases = [
            CHUNK,
            r#"{"choices":[{"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"index":2,"delta":{"content":null}}]}"#,
            r#"{"choices":[{"index":null,"delta":null,"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"content":"a","tool_calls":null}}]}"#,
            r#"{"choices":[{"delta":{"content":"a","tool_calls":[]}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
            r#"{"choices":[]}"#,
            r#"{"choices":null}"#,
            r#"{}"#,
            r#"{"choices":[{"delta":{"content":"\u00e9\ud83d\ude00"}}]}"#,
            r#"{"choices":[{"delta":{"content":"\ud800"}}]}"#,
            r#"{"choices":[{"index":-1,"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"index":1.0,"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"index":1,"index":2,"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
            r#"{"choices":[{"delta":{"content":1}}]}"#,
            r#"{"choices":[{"delta":[]}]}"#,
            r#"{"choices":[[0,{"content":"a"},null]]}"#,
            r#"{"ch\u006fices":[{"delta":{"content":"a"}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}}],"choices":null}"#,
            r#"{"choices":[{"delta":{"content":"a"}}]} x"#,
            r#"{"choices":[{"delta":{"content":"a"}}]"#,
            r#" {"x":[1,{"y":[true,false,null,-0.5e3]}],"choices":[{"delta":{"content":""}}]} "#,
            r#"[[{"delta":{"content":"a"}}]]"#,
        ];
        for c in cases {
            agree(c);
        }
        // The common shapes are taken, not given up on.
        let taken = |i: usize| by_cursor(cases[i]);
        assert_eq!(taken(0), Some((0, Some("Hi \"there\"\n".into()))));
        assert_eq!(taken(1), Some((0, Some("a".into()))));
        assert_eq!(taken(2), Some((2, None)));
        assert_eq!(taken(3), Some((0, None)));
        assert_eq!(taken(4), Some((0, Some("a".into()))));
        assert_eq!(taken(11), Some((0, Some("\u{e9}\u{1f600}".into()))));
        assert_eq!(taken(24), Some((0, Some(String::new()))));
        // What `serde_json` refuses, or the fast path does not handle.
        for i in [5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 21, 22, 23] {
            assert_eq!(taken(i), None, "{}", cases[i]);
        }
    }

    /// Random edits of real chunks (deletions, repeats, JSON's own bytes
    /// inserted), 20 000 of them: the cursor never takes a chunk that
    /// `serde_json` reads otherwise or refuses.
    #[test]
    fn edited_chunks_read_as_serde_json_reads_them() {
        let seeds = [
            CHUNK,
            r#"{"choices":[{"index":1,"delta":{"content":"x\u0041","tool_calls":null},"finish_reason":null}]}"#,
        ];
        let pieces = [
            "\"", "\\", ",", ":", "{", "}", "[", "]", "null", "0", "-", "e", " ", "\\u", "\u{1}",
            "\u{e9}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut taken = 0;
        for round in 0..20_000 {
            let mut text = seeds[round % seeds.len()].to_string();
            for _ in 0..1 + next(3) {
                let mut at = next(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + next(8)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                match next(3) {
                    0 => text.replace_range(at..end, ""),
                    1 => text.insert_str(at, pieces[next(pieces.len())]),
                    _ => {
                        let copy = text[at..end].to_string();
                        text.insert_str(at, &copy);
                    }
                }
            }
            agree(&text);
            taken += usize::from(by_cursor(&text).is_some());
        }
        // Many edits leave a chunk the fast path takes: the comparison is
        // not an empty one.
        assert!(taken > 1_000, "only {taken} edited chunks taken");
    }

    /// A chunk read against the last one taken reads as it reads alone:
    /// the content swapped for strings of every kind (escapes, a quote or
    /// control character that ends or breaks the string, a non-string), and
    /// random edits anywhere (which must fall back to reading it whole).
    #[test]
    fn a_chunk_read_against_the_last_reads_as_it_reads_alone() {
        let seeds = [
            CHUNK,
            r#"{"choices":[{"index":1,"delta":{"content":"x\u0041","tool_calls":null},"finish_reason":null}]}"#,
            r#" { "choices" : [ { "delta" : { "content" : "a" } } ] } "#,
            r#"{"replay_sent_us":1733000000000000,"choices":[{"index":3,"delta":{"content":"a"},"t":[1,-2.5e3]}],"created":17,"x":{"y":0},"z":5,"w":6}"#,
        ];
        let contents = [
            r#""""#,
            r#""plain""#,
            r#""\"quoted\"""#,
            r#""\u00e9\n""#,
            "\"\u{e9}\u{1f600}\"",
            r#""a"b""#,
            r#""a\"#,
            r#""a"#,
            "\"a\u{1}\"",
            r#""\x""#,
            r#""</tool_call>""#,
            "null",
            "1",
            r#""a","content":"b""#,
            r#"  "a""#,
        ];
        let mut rng = toolscan_testkit::rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: usize| rng.below(n);
        let mut compared = 0;
        for a in seeds {
            let seen = text_only(a, None)
                .and_then(|t| t.seen)
                .expect("a seed is taken with its content");
            let like = Like { data: a, seen };
            let mut others: Vec<String> = contents
                .iter()
                .map(|c| format!("{}{c}{}", &a[..seen.start], &a[seen.end..]))
                .collect();
            for _ in 0..3_000 {
                let mut text = a.to_string();
                let mut at = next(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let odd = ['"', '\\', ' ', '}', 'x', '7', '-', '.', 'e'][next(9)];
                let mut end = (at + 1).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                match next(4) {
                    0 => text.insert(at, odd),
                    1 => text.replace_range(at..end, ""),
                    // Of the same length: a number changed in place.
                    2 => text.replace_range(at..end, &odd.to_string()),
                    _ => text.insert(at, '\u{e9}'),
                }
                others.push(text);
            }
            let span = |s: Option<Seen>| s.map(|s| (s.start, s.end, s.index, s.numbers, s.counted));
            for b in &others {
                let (against, itself) = (text_only(b, Some(like)), text_only(b, None));
                // Where it finds the content and numbers is where reading the
                // chunk whole finds them: the next chunk is read against it.
                assert_eq!(
                    span(against.as_ref().and_then(|t| t.seen)),
                    span(itself.as_ref().and_then(|t| t.seen)),
                    "{b:?} read against {a:?}"
                );
                let owned =
                    |t: Option<Text<'_>>| t.map(|t| (t.index, t.content.map(Cow::into_owned)));
                assert_eq!(owned(against), owned(itself), "{b:?} read against {a:?}");
                compared += 1;
            }
        }
        assert!(compared > 12_000);
    }

    /// A chunk read against the one before it knows whether it carries
    /// nothing but its content as it would read whole.
    #[test]
    fn a_chunk_read_against_the_last_is_as_bare_as_read_whole() {
        let pairs = [
            (
                r#"{"id":"c","created":1,"choices":[{"index":0,"delta":{"content":"a"},"logprobs":null}]}"#,
                r#"{"id":"c","created":22,"choices":[{"index":0,"delta":{"content":"bb"},"logprobs":null}]}"#,
                true,
            ),
            (
                r#"{"id":"c","created":1,"choices":[{"index":0,"delta":{"content":"a","refusal":""}}]}"#,
                r#"{"id":"c","created":20,"choices":[{"index":0,"delta":{"content":"b","refusal":""}}]}"#,
                true,
            ),
            (
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"n":1}}"#,
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"n":2}}"#,
                false,
            ),
            (
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"a"},"n":5}]}"#,
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"b"},"n":6}]}"#,
                false,
            ),
            (
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"a","role":"assistant"}}]}"#,
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"b","role":"assistant"}}]}"#,
                false,
            ),
        ];
        for (before, data, bare) in pairs {
            let like = Like {
                data: before,
                seen: text_only(before, None).unwrap().seen.unwrap(),
            };
            let read = like.read(data).expect("read against the last");
            let whole = text_only(data, None).unwrap();
            assert_eq!(read.seen.unwrap().bare, bare, "{data}");
            assert_eq!(whole.seen.unwrap().bare, bare, "{data}");
        }
    }
}
