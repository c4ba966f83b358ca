//! Giving a raw argument value the JSON type its schema declares.
//!
//! Formats that write each argument as raw text between tags leave the type
//! of the value open: `<parameter=days>3</parameter>` may mean the number 3
//! or the string "3". The tool's JSON Schema decides ([`Declared`]), and
//! [`coerce`] writes the value's JSON text accordingly.

use std::fmt;
use std::io::Write as _;
use std::ops::{BitAnd, BitOr, BitOrAssign};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::read::escape::push_json_str;

/// The JSON types a schema allows for one value: a set of type flags, plus
/// a marker for values a format itself says are JSON.
///
/// The empty set, [`Declared::UNTYPED`], means there is no schema for the
/// value (or none this module understands): anything goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Declared(
    /// A union of the flag constants: bits 0 to 6 are the seven JSON types
    /// ([`Declared::TYPES`]), bit 7 is [`Declared::JSON`]. Only these bits
    /// are ever set.
    u8,
);

impl Declared {
    /// No type declared: any value.
    pub(crate) const UNTYPED: Declared = Declared(0);
    /// A JSON string.
    pub(crate) const STRING: Declared = Declared(1);
    /// A JSON number without fraction or exponent.
    pub(crate) const INTEGER: Declared = Declared(1 << 1);
    /// Any JSON number.
    pub(crate) const NUMBER: Declared = Declared(1 << 2);
    /// `true` or `false`.
    pub(crate) const BOOLEAN: Declared = Declared(1 << 3);
    /// `null`.
    pub(crate) const NULL: Declared = Declared(1 << 4);
    /// A JSON object.
    pub(crate) const OBJECT: Declared = Declared(1 << 5);
    /// A JSON array.
    pub(crate) const ARRAY: Declared = Declared(1 << 6);
    /// All seven types.
    pub(crate) const TYPES: Declared = Declared(0x7f);
    /// The format itself says the value is JSON text (no schema type). It
    /// is coerced like an untyped value, except that Python-style literals
    /// (`{'a': True}`, `(1, 2)`, `None`) are normalised to JSON first, and a
    /// value that is not JSON is kept as a string without counting as a
    /// mismatch. Combined with type flags, it only suppresses the mismatch.
    pub(crate) const JSON: Declared = Declared(1 << 7);

    /// Whether every flag of `other` is in `self` (always true for an empty
    /// `other`).
    pub(crate) const fn contains(self, other: Declared) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is in `self`.
    pub(crate) const fn intersects(self, other: Declared) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether no JSON type is declared (the [`Declared::JSON`] marker
    /// alone counts as untyped).
    pub(crate) const fn is_untyped(self) -> bool {
        !self.intersects(Declared::TYPES)
    }

    /// Whether the value is declared a string and nothing else: its JSON
    /// text is known from its first byte, so the caller can stream it.
    pub(crate) const fn is_string_only(self) -> bool {
        self.0 == Declared::STRING.0
    }

    /// Reads the schema of one property.
    ///
    /// * `"type"`, a name or an array of names; names are matched
    ///   ignoring ASCII case and surrounding whitespace: `string`, `str`,
    ///   `text`, `varchar`, `char`, `enum` are strings; names starting with
    ///   `int`, `uint`, `long`, `short` or `unsigned` are integers; names
    ///   starting with `num`, `float`, `double` or `decimal` are numbers;
    ///   `boolean`, `bool`, `binary` are booleans; `null` is null; `object`
    ///   and names starting with `dict` are objects; `array`, `tuple` and
    ///   names starting with `list` are arrays. Other names are ignored.
    /// * When `type` names nothing recognised: `anyOf` and `oneOf`, the
    ///   union of their members (read the same way, nested at most
    ///   [`SCHEMA_DEPTH`] deep). A member that is itself untyped allows any
    ///   value, so it makes the whole union untyped.
    /// * When still nothing is recognised: a non-empty `enum` of strings
    ///   only, or a string `const`, declares a string; any other `enum` or
    ///   `const` leaves the value untyped.
    /// * `"nullable": true` adds null to a non-empty set (it does not turn
    ///   an untyped value into a null-only one).
    ///
    /// Anything that is not an object (`true`, a missing schema) is untyped.
    pub(crate) fn from_schema(schema: &Value) -> Declared {
        Self::from_schema_at(schema, 0)
    }

    /// [`Declared::from_schema`] for a schema nested `depth` unions deep.
    fn from_schema_at(schema: &Value, depth: usize) -> Declared {
        let Some(obj) = schema.as_object() else {
            return Declared::UNTYPED;
        };
        let mut set = match obj.get("type") {
            Some(Value::String(name)) => type_name(name),
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(Value::as_str)
                .fold(Declared::UNTYPED, |set, name| set | type_name(name)),
            _ => Declared::UNTYPED,
        };
        if set.is_untyped() && depth < SCHEMA_DEPTH {
            set = union_of_members(obj, depth);
        }
        if set.is_untyped() {
            let strings_only = match (obj.get("enum"), obj.get("const")) {
                (Some(Value::Array(values)), _) => {
                    !values.is_empty() && values.iter().all(Value::is_string)
                }
                (None, Some(value)) => value.is_string(),
                _ => false,
            };
            if strings_only {
                set = Declared::STRING;
            }
        }
        if !set.is_untyped() && obj.get("nullable") == Some(&Value::Bool(true)) {
            set |= Declared::NULL;
        }
        set
    }
}

impl BitOr for Declared {
    type Output = Declared;

    /// The union of both sets.
    fn bitor(self, other: Declared) -> Declared {
        Declared(self.0 | other.0)
    }
}

impl BitAnd for Declared {
    type Output = Declared;

    /// The flags in both sets.
    fn bitand(self, other: Declared) -> Declared {
        Declared(self.0 & other.0)
    }
}

impl BitOrAssign for Declared {
    /// Adds the flags of `other`.
    fn bitor_assign(&mut self, other: Declared) {
        self.0 |= other.0;
    }
}

/// How deep `anyOf` / `oneOf` nest before [`Declared::from_schema`] stops
/// looking (deeper members count as untyped).
pub(crate) const SCHEMA_DEPTH: usize = 8;

/// The union of the types of the members of `anyOf` and `oneOf`; untyped if
/// there are none or any member is untyped.
fn union_of_members(obj: &serde_json::Map<String, Value>, depth: usize) -> Declared {
    let mut set = Declared::UNTYPED;
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(members)) = obj.get(key) else {
            continue;
        };
        for member in members {
            let m = Declared::from_schema_at(member, depth + 1);
            if m.is_untyped() {
                return Declared::UNTYPED;
            }
            set |= m;
        }
    }
    set
}

/// The type a schema type name stands for (see [`Declared::from_schema`]);
/// untyped for names not recognised.
fn type_name(name: &str) -> Declared {
    let n = name.trim();
    let is = |word: &str| n.eq_ignore_ascii_case(word);
    let starts = |prefix: &str| {
        n.get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    if ["string", "str", "text", "varchar", "char", "enum"]
        .into_iter()
        .any(is)
    {
        Declared::STRING
    } else if ["int", "uint", "long", "short", "unsigned"]
        .into_iter()
        .any(starts)
    {
        Declared::INTEGER
    } else if ["num", "float", "double", "decimal"]
        .into_iter()
        .any(starts)
    {
        Declared::NUMBER
    } else if ["boolean", "bool", "binary"].into_iter().any(is) {
        Declared::BOOLEAN
    } else if is("null") {
        Declared::NULL
    } else if is("object") || starts("dict") {
        Declared::OBJECT
    } else if is("array") || is("tuple") || starts("list") {
        Declared::ARRAY
    } else {
        Declared::UNTYPED
    }
}

/// How [`coerce`] typed a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coerced {
    /// The value fits one of the declared types and was written as that
    /// type.
    AsDeclared,
    /// No type was declared: the value was written by the untyped rule.
    Untyped,
    /// The value fits none of the declared types (and string is not one of
    /// them): it was written by the untyped rule, and the caller reports it.
    Mismatch,
}

/// Appends the JSON text of the raw value `raw` to `out`, typed as
/// `declared` says, and tells how it went. What it appends is always one
/// valid JSON value.
///
/// The rules look at `t`, `raw` without surrounding whitespace, except
/// where strings are concerned: a string keeps `raw` exactly.
///
/// * Untyped: if `t` is strict JSON (any value), `t` as written; otherwise
///   the string `raw`. So `123`, `true`, `null`, `{"a":1}` are JSON, while
///   `007`, `123_456`, `hello` and the empty value are strings. With the
///   [`Declared::JSON`] marker, a Python dict, list, tuple, `True`, `False`
///   or `None` is normalised to JSON before falling back to a string.
///   [`Coerced::Untyped`].
/// * Typed: the declared types are tried in this order, and the first that
///   fits wins ([`Coerced::AsDeclared`]):
///   1. null: `t` is `null` or `None`, written `null`;
///   2. boolean: `t` is `true` or `false` in any ASCII case, written in
///      lowercase;
///   3. integer: `t` is a JSON integer, written as is (any length, never
///      rounded), or a JSON number with a fraction or exponent whose value
///      is a whole number that fits in 64 bits (`3.0`, `1e2`), written as
///      that integer;
///   4. number: `t` is a JSON number, written as is;
///   5. object or array: `t` is strict JSON of that kind, written as is;
///      or a Python literal of that kind, written as compact JSON (no
///      whitespace at all: `{'a': (1, 2,)}` becomes `{"a":[1,2]}`); or a
///      JSON string whose trimmed content is one of these;
///   6. string: `raw` as a JSON string.
///
///   A number may have a leading `+`, which is dropped. Numbers JSON cannot
///   carry (whose magnitude overflows a 64-bit float) fit neither integer
///   nor number. If nothing fits, the untyped rule applies and the result
///   is [`Coerced::Mismatch`] (or [`Coerced::Untyped`] when `declared`
///   also has the [`Declared::JSON`] marker).
///
/// Since string is tried last, `["string", "null"]` gives `null` for the
/// raw value `null` and `"007"` for `007`, and a value declared a string is
/// never sniffed: `123` stays `"123"`.
pub(crate) fn coerce(raw: &str, declared: Declared, out: &mut Vec<u8>) -> Coerced {
    let t = raw.trim();
    let how = if declared.is_untyped() {
        Coerced::Untyped
    } else if typed(raw, t, declared, out) {
        return Coerced::AsDeclared;
    } else if declared.contains(Declared::JSON) {
        Coerced::Untyped
    } else {
        Coerced::Mismatch
    };
    if is_json(t) {
        out.extend_from_slice(t.as_bytes());
    } else if !(declared.contains(Declared::JSON)
        && python::normalise(
            t,
            Declared::OBJECT | Declared::ARRAY | Declared::BOOLEAN | Declared::NULL,
            out,
        ))
    {
        push_json_str(raw.as_bytes(), out);
    }
    how
}

/// Writes the value as the first of the declared types it fits, in the
/// order [`coerce`] gives; false (with nothing written) if it fits none.
fn typed(raw: &str, t: &str, declared: Declared, out: &mut Vec<u8>) -> bool {
    if declared.contains(Declared::NULL) && (t == "null" || t == "None") {
        out.extend_from_slice(b"null");
        return true;
    }
    if declared.contains(Declared::BOOLEAN) {
        if t.eq_ignore_ascii_case("true") {
            out.extend_from_slice(b"true");
            return true;
        }
        if t.eq_ignore_ascii_case("false") {
            out.extend_from_slice(b"false");
            return true;
        }
    }
    if declared.intersects(Declared::INTEGER | Declared::NUMBER) && number(t, declared, out) {
        return true;
    }
    let containers = declared & (Declared::OBJECT | Declared::ARRAY);
    if !containers.is_untyped() && container(t, containers, out) {
        return true;
    }
    if declared.contains(Declared::STRING) {
        push_json_str(raw.as_bytes(), out);
        return true;
    }
    false
}

/// Writes `t` as an integer or a number, whichever of the two is declared
/// and fits first (see [`coerce`]); false if neither does.
fn number(t: &str, declared: Declared, out: &mut Vec<u8>) -> bool {
    let s = match t.strip_prefix('+') {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
        Some(_) => return false,
        None => t,
    };
    let Some(parts) = NumberParts::parse(s.as_bytes()) else {
        return false;
    };
    if !is_json(s) {
        return false; // out of a float's range: not JSON serde_json accepts
    }
    if declared.contains(Declared::INTEGER) {
        if parts.is_plain_integer() {
            out.extend_from_slice(s.as_bytes());
            return true;
        }
        if let Some(value) = parts.whole_value() {
            // Writing into a vector cannot fail.
            let _ = write!(out, "{value}");
            return true;
        }
    }
    if declared.contains(Declared::NUMBER) {
        out.extend_from_slice(s.as_bytes());
        return true;
    }
    false
}

/// Writes `t` as an object or array, whichever `declared` (which holds no
/// other type) has and fits (see [`coerce`]); false (with nothing written)
/// if it does not.
fn container(t: &str, declared: Declared, out: &mut Vec<u8>) -> bool {
    if t.starts_with('"') {
        // A JSON string holding the container's text: decode it once.
        let Ok(inner) = serde_json::from_str::<String>(t) else {
            return false;
        };
        let inner = inner.trim();
        return strict_container(inner, declared, out) || python::normalise(inner, declared, out);
    }
    strict_container(t, declared, out) || python::normalise(t, declared, out)
}

/// Writes `t` as is if it is strict JSON of a declared container kind.
fn strict_container(t: &str, declared: Declared, out: &mut Vec<u8>) -> bool {
    let kind = match t.as_bytes().first() {
        Some(b'{') => Declared::OBJECT,
        Some(b'[') => Declared::ARRAY,
        _ => return false,
    };
    if declared.contains(kind) && is_json(t) {
        out.extend_from_slice(t.as_bytes());
        return true;
    }
    false
}

/// Whether `text` is exactly one JSON value (whitespace around it allowed)
/// that `serde_json` accepts: strict syntax, no lone surrogate escapes, no
/// number beyond a 64-bit float, at most 127 nested containers. Nothing is
/// built, beyond `serde_json`'s scratch buffer for escaped strings.
fn is_json(text: &str) -> bool {
    serde_json::from_str::<Valid>(text).is_ok()
}

/// A JSON value that was checked and thrown away.
struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Valid, D::Error> {
        deserializer.deserialize_any(ValidVisitor)
    }
}

/// Accepts any value, visiting every element and member so that the whole
/// value is checked (strings are decoded, which checks their escapes).
struct ValidVisitor;

impl<'de> Visitor<'de> for ValidVisitor {
    type Value = Valid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Valid, E> {
        Ok(Valid)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_entry::<Valid, Valid>()?.is_some() {}
        Ok(Valid)
    }
}

/// The parts of a JSON number, `-?int(.frac)?([eE][+-]?exp)?`.
#[derive(Clone, Copy, Debug)]
struct NumberParts<'a> {
    /// A leading `-` was present.
    negative: bool,
    /// The digits before the point: `0` or digits not starting with `0`.
    int: &'a [u8],
    /// The digits after the point: empty when there is no point, otherwise
    /// at least one digit.
    frac: &'a [u8],
    /// Whether an exponent was written.
    has_exp: bool,
    /// The exponent's value, saturated to the `i64` range (0 without one).
    exp: i64,
}

impl<'a> NumberParts<'a> {
    /// Splits `s` if the whole of it is a JSON number.
    fn parse(s: &'a [u8]) -> Option<NumberParts<'a>> {
        let (negative, s) = match s.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, s),
        };
        let int_len = digits(s);
        let int = s.get(..int_len)?;
        if int.is_empty() || (int.len() > 1 && int[0] == b'0') {
            return None;
        }
        let mut rest = s.get(int_len..)?;
        let mut frac: &[u8] = &[];
        if let Some((b'.', after)) = rest.split_first() {
            let n = digits(after);
            if n == 0 {
                return None;
            }
            frac = after.get(..n)?;
            rest = after.get(n..)?;
        }
        let mut has_exp = false;
        let mut exp: i64 = 0;
        if let Some((b'e' | b'E', after)) = rest.split_first() {
            let (exp_negative, after) = match after.split_first() {
                Some((b'-', a)) => (true, a),
                Some((b'+', a)) => (false, a),
                _ => (false, after),
            };
            let n = digits(after);
            if n == 0 {
                return None;
            }
            for &d in after.get(..n)? {
                exp = exp.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            }
            if exp_negative {
                exp = -exp;
            }
            has_exp = true;
            rest = after.get(n..)?;
        }
        rest.is_empty().then_some(NumberParts {
            negative,
            int,
            frac,
            has_exp,
            exp,
        })
    }

    /// Whether the number is written as an integer: no point, no exponent.
    fn is_plain_integer(&self) -> bool {
        self.frac.is_empty() && !self.has_exp
    }

    /// The number's exact value if it is a whole number within `i64`,
    /// computed from its digits (never through a float).
    fn whole_value(&self) -> Option<i64> {
        // The value is `digits * 10^scale`, digits being int then frac.
        let all = || self.int.iter().chain(self.frac).copied();
        let frac_len = i64::try_from(self.frac.len()).ok()?;
        let mut scale = self.exp.saturating_sub(frac_len);
        let significant = all().skip_while(|&d| d == b'0').count();
        let trailing_zeros = all().rev().take_while(|&d| d == b'0').count();
        if significant == 0 {
            return Some(0);
        }
        scale = scale.saturating_add(i64::try_from(trailing_zeros).ok()?);
        let kept = significant - trailing_zeros;
        // A whole number below 2^63 has at most 19 digits.
        let width = i64::try_from(kept).ok()?.saturating_add(scale);
        if scale < 0 || width > 19 {
            return None;
        }
        let mut value: i128 = 0;
        for d in all().skip_while(|&d| d == b'0').take(kept) {
            value = value * 10 + i128::from(d - b'0');
        }
        for _ in 0..scale {
            value *= 10;
        }
        i64::try_from(if self.negative { -value } else { value }).ok()
    }
}

/// How many ASCII digits `s` starts with.
fn digits(s: &[u8]) -> usize {
    s.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// Normalising Python literals (what models write after seeing Python
/// reprs) to JSON text, with the Python reader of `read/python.rs`.
mod python {
    use super::{is_json, Declared};
    use crate::lang::format::PyStep;
    use crate::read::python::PyReader;
    use crate::read::steps::Progress;

    /// Containers may nest at most this many levels: the next one is
    /// refused, as `serde_json` refuses 128 levels by default, so that the
    /// output always parses back.
    const DEPTH_LIMIT: usize = 127;

    /// Appends the JSON form of the Python literal `t` to `out`, if `t` is
    /// one whole literal of a kind `top` allows (an object for `{…}`, an
    /// array for `[…]` and tuples `(…)`, a boolean for `True`/`False`,
    /// null for `None`). Returns false, with `out` unchanged, otherwise.
    ///
    /// What is accepted is what [`PyReader::literal`] reads, with JSON's
    /// `true`, `false` and `null` too: dicts, lists, tuples as arrays
    /// (`(x)` without a comma is not one), Python strings and numbers,
    /// trailing commas, whitespace between tokens. Dict keys that are
    /// numbers, booleans or `None` become strings of their JSON text, as
    /// Python's `json.dumps` writes them. The output has no whitespace at
    /// all, and is refused if it is not JSON `serde_json` reads back (a
    /// number beyond a 64-bit float).
    pub(super) fn normalise(t: &str, top: Declared, out: &mut Vec<u8>) -> bool {
        let kind = match t.as_bytes().first() {
            Some(b'{') => Declared::OBJECT,
            Some(b'[' | b'(') => Declared::ARRAY,
            Some(b'T' | b't' | b'F' | b'f') => Declared::BOOLEAN,
            Some(b'N' | b'n') => Declared::NULL,
            Some(b'\'' | b'"') => Declared::STRING,
            Some(_) => Declared::NUMBER | Declared::INTEGER,
            None => return false,
        };
        if !top.intersects(kind) {
            return false;
        }
        let mark = out.len();
        let ok = read(t.as_bytes(), out) && out.get(mark..).is_some_and(is_json_bytes);
        if !ok {
            out.truncate(mark);
        }
        ok
    }

    /// Reads the whole of `input` as one literal, writing its JSON to
    /// `out`; false if it is not one.
    fn read(mut input: &[u8], out: &mut Vec<u8>) -> bool {
        let step = PyStep::keywords().json_literals();
        let mut reader = PyReader::literal();
        while !input.is_empty() {
            match reader.feed(&step, DEPTH_LIMIT, input, out) {
                Progress::Partial(n) if n > 0 => input = input.get(n..).unwrap_or_default(),
                _ => return false,
            }
        }
        reader.finish(&step, out).is_ok()
    }

    /// [`is_json`] of bytes (the reader writes UTF-8 only, from UTF-8
    /// text).
    fn is_json_bytes(json: &[u8]) -> bool {
        std::str::from_utf8(json).is_ok_and(is_json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const S: Declared = Declared::STRING;
    const I: Declared = Declared::INTEGER;
    const N: Declared = Declared::NUMBER;
    const B: Declared = Declared::BOOLEAN;
    const Z: Declared = Declared::NULL;
    const O: Declared = Declared::OBJECT;
    const A: Declared = Declared::ARRAY;
    const U: Declared = Declared::UNTYPED;
    const J: Declared = Declared::JSON;

    /// Runs `coerce`, checking that what it wrote is one valid JSON value.
    fn run(raw: &str, declared: Declared) -> (String, Coerced) {
        let mut out = b"prefix:".to_vec();
        let how = coerce(raw, declared, &mut out);
        let text = String::from_utf8(out)
            .expect("UTF-8 output")
            .strip_prefix("prefix:")
            .expect("appended, not replaced")
            .to_owned();
        if let Err(e) = serde_json::from_str::<Value>(&text) {
            panic!("{raw:?} as {declared:?} gave invalid JSON {text:?}: {e}");
        }
        (text, how)
    }

    use Coerced::{AsDeclared as Ok_, Mismatch as Bad, Untyped as Any};

    #[test]
    fn table() {
        let cases: &[(&str, Declared, &str, Coerced)] = &[
            // Untyped.
            ("123", U, "123", Any),
            (" 123\n", U, "123", Any),
            ("-1.5e3", U, "-1.5e3", Any),
            ("true", U, "true", Any),
            ("null", U, "null", Any),
            ("{\"a\":1}", U, "{\"a\":1}", Any),
            ("[1, 2]", U, "[1, 2]", Any),
            ("\"quoted\"", U, "\"quoted\"", Any),
            ("007", U, "\"007\"", Any),
            ("123_456", U, "\"123_456\"", Any),
            ("hello", U, "\"hello\"", Any),
            ("  \n", U, "\"  \\n\"", Any),
            ("", U, "\"\"", Any),
            (" hello ", U, "\" hello \"", Any),
            ("True", U, "\"True\"", Any),
            ("{'a': 1}", U, "\"{'a': 1}\"", Any),
            ("[1,]", U, "\"[1,]\"", Any),
            ("1e400", U, "\"1e400\"", Any),
            ("\"\\ud800\"", U, "\"\\\"\\\\ud800\\\"\"", Any),
            ("NaN", U, "\"NaN\"", Any),
            // Integer.
            ("3", I, "3", Ok_),
            (" 3 ", I, "3", Ok_),
            ("+3", I, "3", Ok_),
            ("-3", I, "-3", Ok_),
            ("3.0", I, "3", Ok_),
            ("-3.000", I, "-3", Ok_),
            ("1e2", I, "100", Ok_),
            ("1.5e1", I, "15", Ok_),
            ("1500e-2", I, "15", Ok_),
            ("0.0", I, "0", Ok_),
            ("-0.0e5", I, "0", Ok_),
            ("0e-99999999999999999999", I, "0", Ok_),
            ("99999999999999999999", I, "99999999999999999999", Ok_),
            ("-99999999999999999999", I, "-99999999999999999999", Ok_),
            ("9223372036854775807.0", I, "9223372036854775807", Ok_),
            ("-9223372036854775808.0", I, "-9223372036854775808", Ok_),
            ("9223372036854775808.0", I, "9223372036854775808.0", Bad),
            ("1e19", I, "1e19", Bad),
            ("9007199254740993.0", I, "9007199254740993", Ok_),
            ("3.5", I, "3.5", Bad),
            ("1e-2", I, "1e-2", Bad),
            ("x", I, "\"x\"", Bad),
            ("007", I, "\"007\"", Bad),
            ("+-3", I, "\"+-3\"", Bad),
            ("+", I, "\"+\"", Bad),
            ("3.", I, "\"3.\"", Bad),
            ("true", I, "true", Bad),
            ("null", I, "null", Bad),
            ("", I, "\"\"", Bad),
            // Number.
            ("0.75", N, "0.75", Ok_),
            ("3.0", N, "3.0", Ok_),
            ("+2.5E-3", N, "2.5E-3", Ok_),
            ("12", N, "12", Ok_),
            ("1e400", N, "\"1e400\"", Bad),
            ("Infinity", N, "\"Infinity\"", Bad),
            (".5", N, "\".5\"", Bad),
            ("3.0", I | N, "3", Ok_),
            ("3.5", I | N, "3.5", Ok_),
            // Boolean.
            ("TRUE", B, "true", Ok_),
            ("true", B, "true", Ok_),
            (" False\n", B, "false", Ok_),
            ("yes", B, "\"yes\"", Bad),
            ("1", B, "1", Bad),
            // Null.
            ("None", Z | S, "null", Ok_),
            ("null", Z, "null", Ok_),
            ("NULL", Z, "\"NULL\"", Bad),
            ("null", S | Z, "null", Ok_),
            ("007", S | Z, "\"007\"", Ok_),
            // String: verbatim, never sniffed.
            ("007", S, "\"007\"", Ok_),
            ("123", S, "\"123\"", Ok_),
            ("null", S, "\"null\"", Ok_),
            ("  two words\n", S, "\"  two words\\n\"", Ok_),
            ("say \"hi\"", S, "\"say \\\"hi\\\"\"", Ok_),
            ("", S, "\"\"", Ok_),
            ("123", S | I, "123", Ok_),
            ("12x", S | I, "\"12x\"", Ok_),
            // Object and array: strict JSON as written.
            ("{\"snow\": \"\\u2603\"}", O, "{\"snow\": \"\\u2603\"}", Ok_),
            (" {\"a\": [1, 2]} ", O, "{\"a\": [1, 2]}", Ok_),
            ("[1, 2]", A, "[1, 2]", Ok_),
            ("[]", A | O, "[]", Ok_),
            ("{}", A | O, "{}", Ok_),
            ("[1, 2]", O, "[1, 2]", Bad),
            ("{\"a\":1}", A, "{\"a\":1}", Bad),
            // Python literals.
            (
                "{'a': True, 'b': (1, 2,),}",
                O,
                "{\"a\":true,\"b\":[1,2]}",
                Ok_,
            ),
            ("['x', None, False]", A, "[\"x\",null,false]", Ok_),
            ("(1, 2)", A, "[1,2]", Ok_),
            ("()", A, "[]", Ok_),
            ("(1,)", A, "[1]", Ok_),
            ("( )", A, "[]", Ok_),
            ("[ 1 ,\n ]", A, "[1]", Ok_),
            ("[ ]", A, "[ ]", Ok_),
            (
                "{1: 'a', None: 'b', True: +2}",
                O,
                "{\"1\":\"a\",\"null\":\"b\",\"true\":2}",
                Ok_,
            ),
            (
                "{'it\\'s': \"say \\\"x\\\"\"}",
                O,
                "{\"it's\":\"say \\\"x\\\"\"}",
                Ok_,
            ),
            (
                "{'k': 'tab\\there\\x41\\u2603\\U0001F600\\101\\0'}",
                O,
                "{\"k\":\"tab\\thereA☃😀A\\u0000\"}",
                Ok_,
            ),
            ("['\\d+']", A, "[\"\\\\d+\"]", Ok_),
            ("['line\\\nnext']", A, "[\"linenext\"]", Ok_),
            ("['raw\nnewline']", A, "[\"raw\\nnewline\"]", Ok_),
            ("['\\ud83d\\ude00']", A, "[\"😀\"]", Ok_),
            ("['\\ud83d']", A, "\"['\\\\ud83d']\"", Bad),
            ("[1, 2", A, "\"[1, 2\"", Bad),
            ("[1,,2]", A, "\"[1,,2]\"", Bad),
            ("[,]", A, "\"[,]\"", Bad),
            ("{'a' 1}", O, "\"{'a' 1}\"", Bad),
            ("{'a': 1} x", O, "\"{'a': 1} x\"", Bad),
            ("{(1, 2): 3}", O, "\"{(1, 2): 3}\"", Bad),
            ("{'a': nan}", O, "\"{'a': nan}\"", Bad),
            ("{'a': 1e400}", O, "\"{'a': 1e400}\"", Bad),
            ("[007]", A, "\"[007]\"", Bad),
            // Python's numbers, strings and escapes (the reader of
            // `read/python.rs`).
            (
                "[1_000, 0x1F, .5, 5., 00, 07.5]",
                A,
                "[1000,31,0.5,5.0,0,7.5]",
                Ok_,
            ),
            (
                "[r'\\d', '''it's''', u'x']",
                A,
                "[\"\\\\d\",\"it's\",\"x\"]",
                Ok_,
            ),
            ("['a\\/b']", A, "[\"a\\\\/b\"]", Ok_),
            ("['\\N{DASH}']", A, "\"['\\\\N{DASH}']\"", Bad),
            ("(1)", A, "\"(1)\"", Bad),
            ("((1, 2))", A, "\"((1, 2))\"", Bad),
            ("[1,\u{b}2]", A, "\"[1,\\u000b2]\"", Bad),
            ("{'a': 1}", A, "\"{'a': 1}\"", Bad),
            ("(1, 2)", O, "\"(1, 2)\"", Bad),
            // Containers inside a JSON string.
            ("\"[1, 2]\"", A, "[1, 2]", Ok_),
            ("\" {\\\"a\\\": 1} \"", O, "{\"a\": 1}", Ok_),
            ("\"{'a': None}\"", O, "{\"a\":null}", Ok_),
            ("\"\\\"[1]\\\"\"", A, "\"\\\"[1]\\\"\"", Bad),
            ("\"hello\"", A, "\"hello\"", Bad),
            ("\"[1, 2]\"", A | S, "[1, 2]", Ok_),
            // Format-declared JSON.
            ("{'a': True}", J, "{\"a\":true}", Any),
            ("(1, 2)", J, "[1,2]", Any),
            ("None", J, "null", Any),
            ("True", J, "true", Any),
            ("[1, 2]", J, "[1, 2]", Any),
            ("'quoted'", J, "\"'quoted'\"", Any),
            ("+1", J, "\"+1\"", Any),
            ("hello", J, "\"hello\"", Any),
            ("x", J | I, "\"x\"", Any),
            ("3.0", J | I, "3", Ok_),
        ];
        let mut failures = Vec::new();
        for &(raw, declared, want, how) in cases {
            let got = run(raw, declared);
            if got != (want.to_owned(), how) {
                failures.push(format!(
                    "{raw:?} as {declared:?}: got {got:?}, want {:?}",
                    (want, how)
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn every_declared_set_gives_valid_json() {
        let raws = [
            "",
            " ",
            "0",
            "-0",
            "+0",
            "1.0",
            "1e5",
            "-1E-5",
            "1e999",
            "x",
            "True",
            "none",
            "None",
            "null",
            "nUlL",
            "[",
            "]",
            "{}",
            "{'a':",
            "[1,[2,(3,)]]",
            "\"",
            "\"\\\"",
            "\"[1]\"",
            "'",
            "'\\'",
            "'\\x4'",
            "'\\U0011FFFF'",
            "('a' 'b')",
            "{'a':{'b':{'c':[]}}}",
            "\u{0}",
            "\t\u{1f}\u{7f}",
            "é☃😀",
            "[1e400]",
            "{\"a\":1,}",
            "{'a': 1,}",
            "(,)",
        ];
        for bits in 0..=u8::MAX {
            let declared = Declared(bits);
            for raw in raws {
                let (_, how) = run(raw, declared);
                if declared.is_untyped() {
                    assert_eq!(how, Coerced::Untyped);
                }
                if declared.contains(Declared::STRING) {
                    assert_eq!(how, Coerced::AsDeclared);
                }
            }
        }
    }

    #[test]
    fn random_token_soup_gives_valid_json() {
        const TOKENS: &[&str] = &[
            "{", "}", "[", "]", "(", ")", "'", "\"", "\\", ",", ":", " ", "\n", "0", "1", "-", "+",
            ".", "e", "E", "True", "None", "null", "false", "x", "\\u", "d83d", "dc00", "\\x",
            "\\U", "41", "é", "☃", "\u{0}", "\u{1f}",
        ];
        let sets = [
            U,
            S,
            I,
            N,
            B,
            Z,
            O,
            A,
            J,
            I | N,
            O | A,
            S | Z,
            O | A | J,
            Declared::TYPES,
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let len = next(14);
            let raw: String = (0..len).map(|_| TOKENS[next(TOKENS.len())]).collect();
            for declared in sets {
                let (_, how) = run(&raw, declared);
                if declared.is_untyped() || declared.contains(Declared::JSON) {
                    assert_ne!(how, Coerced::Mismatch, "{raw:?}");
                }
            }
        }
    }

    #[test]
    fn nesting_is_bounded() {
        // Lists, but for a tuple inside (`[[()]]`): not JSON, so the Python
        // reader reads it.
        let deep = |n: usize| format!("{}(){}", "[".repeat(n - 1), "]".repeat(n - 1));
        let (text, how) = run(&deep(127), A);
        assert_eq!(how, Coerced::AsDeclared);
        assert_eq!(text, format!("{}{}", "[".repeat(127), "]".repeat(127)));
        assert_eq!(run(&deep(128), A).1, Coerced::Mismatch);
        assert_eq!(run(&deep(100_000), A).1, Coerced::Mismatch);
        let strict = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(run(&strict(127), A).1, Coerced::AsDeclared);
        assert_eq!(run(&strict(128), A).1, Coerced::Mismatch);
    }

    #[test]
    fn declared_set_operations() {
        assert_eq!(Declared::default(), U);
        assert!(U.is_untyped() && J.is_untyped() && !S.is_untyped());
        assert!(S.is_string_only());
        assert!(!(S | Z).is_string_only() && !(S | J).is_string_only() && !U.is_string_only());
        assert!((S | Z).contains(S) && (S | Z).contains(S | Z) && !(S | Z).contains(I));
        assert!((S | Z).intersects(Z | I) && !S.intersects(I | N));
        let mut d = I;
        d |= N;
        assert_eq!(d, I | N);
        assert_eq!(Declared::TYPES, S | I | N | B | Z | O | A);
    }

    #[test]
    fn from_schema() {
        let cases: &[(Value, Declared)] = &[
            (json!({"type": "string"}), S),
            (json!({"type": "integer"}), I),
            (json!({"type": "number"}), N),
            (json!({"type": "boolean"}), B),
            (json!({"type": "null"}), Z),
            (json!({"type": "object"}), O),
            (json!({"type": "array"}), A),
            (json!({"type": ["string", "null"]}), S | Z),
            (json!({"type": ["integer", 3, "mystery"]}), I),
            (json!({"type": ["mystery"]}), U),
            (json!({"type": []}), U),
            (json!({"type": 7}), U),
            // Loose type names.
            (json!({"type": "str"}), S),
            (json!({"type": "Text"}), S),
            (json!({"type": " VARCHAR "}), S),
            (json!({"type": "char"}), S),
            (json!({"type": "enum"}), S),
            (json!({"type": "int"}), I),
            (json!({"type": "int64"}), I),
            (json!({"type": "uint8"}), I),
            (json!({"type": "long"}), I),
            (json!({"type": "short"}), I),
            (json!({"type": "unsigned int"}), I),
            (json!({"type": "num"}), N),
            (json!({"type": "float32"}), N),
            (json!({"type": "double"}), N),
            (json!({"type": "decimal"}), N),
            (json!({"type": "bool"}), B),
            (json!({"type": "binary"}), B),
            (json!({"type": "dict"}), O),
            (json!({"type": "Dict[str, int]"}), O),
            (json!({"type": "list"}), A),
            (json!({"type": "List[int]"}), A),
            (json!({"type": "tuple"}), A),
            (json!({"type": "any"}), U),
            (json!({"type": "stringy"}), U),
            (json!({"type": "é"}), U),
            // Unions.
            (
                json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
                I | Z,
            ),
            (
                json!({"oneOf": [{"type": "string"}, {"type": ["array", "object"]}]}),
                S | A | O,
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/X"}]}),
                U,
            ),
            (json!({"anyOf": [{"type": "string"}, true]}), U),
            (json!({"anyOf": []}), U),
            (
                json!({"anyOf": [{"anyOf": [{"type": "integer"}, {"oneOf": [{"type": "boolean"}]}]}]}),
                I | B,
            ),
            (
                json!({"anyOf": [{"type": "integer"}], "oneOf": [{"type": "null"}]}),
                I | Z,
            ),
            (json!({"type": "number", "anyOf": [{"type": "string"}]}), N),
            (json!({"type": "mystery", "anyOf": [{"type": "string"}]}), S),
            // Enums and constants.
            (json!({"enum": ["a", "b"]}), S),
            (json!({"enum": ["a", 1]}), U),
            (json!({"enum": ["a", null]}), U),
            (json!({"enum": []}), U),
            (json!({"enum": "a"}), U),
            (json!({"const": "a"}), S),
            (json!({"const": 1}), U),
            (json!({"type": "integer", "enum": [1, 2]}), I),
            (json!({"anyOf": [{"const": "a"}, {"const": "b"}]}), S),
            (json!({"anyOf": [{"const": "a"}, {"const": 2}]}), U),
            // Nullable.
            (json!({"type": "string", "nullable": true}), S | Z),
            (json!({"type": "string", "nullable": false}), S),
            (json!({"nullable": true}), U),
            (json!({"enum": ["a"], "nullable": true}), S | Z),
            // Not schemas, or schemas without a type.
            (json!(true), U),
            (json!(null), U),
            (json!("string"), U),
            (json!({}), U),
            (json!({"description": "the city"}), U),
        ];
        for (schema, want) in cases {
            assert_eq!(Declared::from_schema(schema), *want, "{schema}");
        }
    }

    #[test]
    fn from_schema_depth_is_bounded() {
        let mut schema = json!({"type": "integer"});
        for _ in 0..SCHEMA_DEPTH {
            schema = json!({"anyOf": [schema]});
        }
        assert_eq!(Declared::from_schema(&schema), I);
        let deeper = json!({"anyOf": [schema]});
        assert_eq!(Declared::from_schema(&deeper), U);
    }

    #[test]
    fn number_parts() {
        for ok in [
            "0",
            "-0",
            "1",
            "10",
            "1.5",
            "0.0",
            "1e5",
            "1E+5",
            "1e-5",
            "-12.34e-56",
        ] {
            assert!(NumberParts::parse(ok.as_bytes()).is_some(), "{ok}");
        }
        for bad in [
            "", "-", "01", "1.", ".1", "1e", "1e+", "+1", "1.5.2", "1x", "--1", "0x1", " 1",
        ] {
            assert!(NumberParts::parse(bad.as_bytes()).is_none(), "{bad}");
        }
        let whole = |s: &str| NumberParts::parse(s.as_bytes()).and_then(|p| p.whole_value());
        assert_eq!(whole("120e-1"), Some(12));
        assert_eq!(whole("0.000120e6"), Some(120));
        assert_eq!(whole("1.23"), None);
        assert_eq!(whole("1e18"), Some(1_000_000_000_000_000_000));
        assert_eq!(whole("9.223372036854775807e18"), Some(i64::MAX));
        assert_eq!(whole("1e99999999999999999999999"), None);
        assert_eq!(whole("0.00000000000000000000000000000001e32"), Some(1));
    }
}
