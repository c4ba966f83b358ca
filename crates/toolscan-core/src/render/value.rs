//! Values as the renderer spells them: a call's arguments read into a tree
//! that keeps key order and numbers as written, then written as JSON (in a
//! template's spacing), in Python-like notation, or as a raw parameter
//! value.

use std::fmt::Write as _;

use crate::lang::format::{PyArgs, PyStep, PyStrings, Style};

/// A JSON value, members in their order, numbers as written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Node {
    /// The tree of a JSON text (`None` if it is not JSON).
    pub(crate) fn parse(text: &str) -> Option<Node> {
        let mut r = Reader {
            s: text.as_bytes(),
            text,
            i: 0,
        };
        let n = r.value(0)?;
        r.ws();
        (r.i == r.s.len()).then_some(n)
    }

    /// The JSON type name of the value (a number is a `number`, whole or
    /// not: JSON has no integers, and templates write the value's type).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::Num(_) => "number",
            Node::Str(_) => "string",
            Node::Arr(_) => "array",
            Node::Obj(_) => "object",
        }
    }
}

/// How many members and items an arguments object holds, nested ones
/// counted too (without recursion).
pub(crate) fn param_count(args: &[(String, Node)]) -> usize {
    let mut n = 0usize;
    let mut todo: Vec<&Node> = args.iter().map(|(_, v)| v).collect();
    n += todo.len();
    while let Some(v) = todo.pop() {
        match v {
            Node::Obj(m) => {
                n += m.len();
                todo.extend(m.iter().map(|(_, v)| v));
            }
            Node::Arr(a) => {
                n += a.len();
                todo.extend(a.iter());
            }
            _ => {}
        }
    }
    n
}

/// A reader of JSON text that is already known to be valid (arguments).
struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > 512 {
            return None;
        }
        self.ws();
        let b = *self.s.get(self.i)?;
        match b {
            b'{' => {
                self.i += 1;
                let mut m = Vec::new();
                if self.eat(b'}') {
                    return Some(Node::Obj(m));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    m.push((k, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Some(Node::Obj(m));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut v = Vec::new();
                if self.eat(b']') {
                    return Some(Node::Arr(v));
                }
                loop {
                    v.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Some(Node::Arr(v));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string().map(Node::Str),
            b't' => self.word("true", Node::Bool(true)),
            b'f' => self.word("false", Node::Bool(false)),
            b'n' => self.word("null", Node::Null),
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
                    )
                {
                    self.i += 1;
                }
                let n = self.text.get(start..self.i)?;
                serde_json::from_str::<serde_json::Value>(n).ok()?;
                Some(Node::Num(n.to_owned()))
            }
        }
    }

    fn word(&mut self, w: &str, n: Node) -> Option<Node> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Some(n)
        } else {
            None
        }
    }

    /// A string token at the cursor, decoded.
    fn string(&mut self) -> Option<String> {
        if self.s.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_str(self.text.get(start..self.i)?).ok();
                }
                _ => self.i += 1,
            }
        }
        None
    }
}

/// A string as a JSON string literal.
pub(crate) fn json_str(s: &str, style: &Style, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if style.ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Members in the order the style writes them.
fn members<'n>(m: &'n [(String, Node)], style: &Style) -> Vec<&'n (String, Node)> {
    let mut v: Vec<&(String, Node)> = m.iter().collect();
    if style.sort_keys {
        v.sort_by(|a, b| a.0.cmp(&b.0));
    }
    v
}

/// A line break and the indentation of `level`, or the item separator.
fn sep(style: &Style, level: usize, first: bool, out: &mut String) {
    match style.indent {
        Some(n) => {
            if !first {
                out.push(',');
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', usize::from(n) * level));
        }
        None if !first => out.push_str(&style.item_sep),
        None => {}
    }
}

/// A value as JSON, in the style's spacing.
pub(crate) fn json(n: &Node, style: &Style, level: usize, out: &mut String) {
    match n {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Num(t) => out.push_str(t),
        Node::Str(s) => json_str(s, style, out),
        Node::Arr(v) => {
            out.push('[');
            for (i, x) in v.iter().enumerate() {
                sep(style, level + 1, i == 0, out);
                json(x, style, level + 1, out);
            }
            if !v.is_empty() && style.indent.is_some() {
                sep(style, level, true, out);
            }
            out.push(']');
        }
        Node::Obj(m) => {
            out.push('{');
            for (i, (k, x)) in members(m, style).into_iter().enumerate() {
                sep(style, level + 1, i == 0, out);
                json_str(k, style, out);
                out.push_str(&style.key_sep);
                json(x, style, level + 1, out);
            }
            if !m.is_empty() && style.indent.is_some() {
                sep(style, level, true, out);
            }
            out.push('}');
        }
    }
}

/// A Python string literal in the style's quote.
fn py_str(s: &str, quote: char, out: &mut String) {
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// `n` as Python's `repr` prints it (`str()` of a list or a dict):
/// `True`, `None`, `'it\'s'` (in double quotes when the string holds a
/// single quote and no double one), `{'a': [1, 'x']}`. Numbers as written.
pub(crate) fn py_repr(n: &Node, out: &mut String) {
    // An explicit stack: any depth renders on any thread's stack.
    enum Job<'a> {
        Node(&'a Node),
        Text(&'static str),
        Key(&'a str),
    }
    let mut todo = vec![Job::Node(n)];
    while let Some(job) = todo.pop() {
        match job {
            Job::Text(t) => out.push_str(t),
            Job::Key(k) => py_repr_str(k, out),
            Job::Node(n) => match n {
                Node::Null => out.push_str("None"),
                Node::Bool(true) => out.push_str("True"),
                Node::Bool(false) => out.push_str("False"),
                Node::Num(t) => out.push_str(t),
                Node::Str(s) => py_repr_str(s, out),
                Node::Arr(v) => {
                    out.push('[');
                    todo.push(Job::Text("]"));
                    for (i, x) in v.iter().enumerate().rev() {
                        todo.push(Job::Node(x));
                        if i > 0 {
                            todo.push(Job::Text(", "));
                        }
                    }
                }
                Node::Obj(m) => {
                    out.push('{');
                    todo.push(Job::Text("}"));
                    for (i, (k, x)) in m.iter().enumerate().rev() {
                        todo.push(Job::Node(x));
                        todo.push(Job::Text(": "));
                        todo.push(Job::Key(k));
                        if i > 0 {
                            todo.push(Job::Text(", "));
                        }
                    }
                }
            },
        }
    }
}

/// A string as Python's `repr` quotes it.
fn py_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    py_str(s, quote, out);
}

/// A value in the Python-like notation of `step`; `None` when the notation
/// cannot hold it (a delimited string holding its delimiter, a literal the
/// dialect lacks).
fn py(n: &Node, step: &PyStep, style: &Style, out: &mut String) -> Option<()> {
    match n {
        Node::Null | Node::Bool(_) => {
            let (py, js) = match n {
                Node::Null => ("None", "null"),
                Node::Bool(true) => ("True", "true"),
                _ => ("False", "false"),
            };
            if step.python_literals {
                out.push_str(py);
            } else if step.json_literals {
                out.push_str(js);
            } else {
                return None;
            }
        }
        Node::Num(t) => out.push_str(t),
        Node::Str(s) => match &step.strings {
            PyStrings::Quoted => py_str(s, style.quote, out),
            PyStrings::Delimited(d) => {
                let d = std::str::from_utf8(&d.bytes).ok()?;
                if s.contains(d) {
                    return None;
                }
                out.push_str(d);
                out.push_str(s);
                out.push_str(d);
            }
        },
        Node::Arr(v) => {
            out.push('[');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(&style.item_sep);
                }
                py(x, step, style, out)?;
            }
            out.push(']');
        }
        Node::Obj(m) => {
            out.push('{');
            for (i, (k, x)) in members(m, style).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(&style.item_sep);
                }
                key(k, step, style, out)?;
                out.push_str(match step.args {
                    PyArgs::Keywords => &style.key_sep,
                    PyArgs::BareKeys => ":",
                });
                py(x, step, style, out)?;
            }
            out.push('}');
        }
    }
    Some(())
}

/// A dictionary key: a string literal (keywords dialect) or a bare key.
fn key(k: &str, step: &PyStep, style: &Style, out: &mut String) -> Option<()> {
    match step.args {
        PyArgs::Keywords => py(&Node::Str(k.to_owned()), step, style, out),
        PyArgs::BareKeys => {
            if k.is_empty() || k.contains([':', ',', '{', '}', '[', ']']) || k.trim() != k {
                return None;
            }
            out.push_str(k);
            Some(())
        }
    }
}

/// The arguments of a call in Python-like notation, up to and including
/// the closing bracket: `a=1, b='x')` or `a:1,b:<escape>x<escape>}`.
pub(crate) fn py_args(
    args: &[(String, Node)],
    step: &PyStep,
    style: &Style,
    out: &mut String,
) -> Option<()> {
    for (i, (k, x)) in members(args, style).into_iter().enumerate() {
        if i > 0 {
            out.push_str(&style.item_sep);
        }
        match step.args {
            PyArgs::Keywords => {
                let ident = k
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && k.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !ident {
                    return None;
                }
                out.push_str(k);
                out.push('=');
            }
            PyArgs::BareKeys => {
                key(k, step, style, out)?;
                out.push(':');
            }
        }
        match x {
            Node::Str(_) => py(x, step, style, out)?,
            _ if style.json_values => json(x, style, 0, out),
            _ => py(x, step, style, out)?,
        }
    }
    out.push(match step.args {
        PyArgs::Keywords => ')',
        PyArgs::BareKeys => '}',
    });
    Some(())
}

/// XML text: `&`, `<` and `>` as entities.
pub(crate) fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_order_numbers_and_spells_as_the_style_says() {
        let n = Node::parse(r#"{"b": 1.50, "a": [true, null, "x\u00e9\n"], "c": {}}"#).unwrap();
        let mut out = String::new();
        json(&n, &Style::default(), 0, &mut out);
        assert_eq!(
            out,
            "{\"b\": 1.50, \"a\": [true, null, \"xé\\n\"], \"c\": {}}"
        );
        let style = Style {
            indent: Some(2),
            ascii: true,
            sort_keys: true,
            ..Style::default()
        };
        let mut out = String::new();
        json(&n, &style, 0, &mut out);
        assert_eq!(
            out,
            "{\n  \"a\": [\n    true,\n    null,\n    \"x\\u00e9\\n\"\n  ],\n  \"b\": 1.50,\n  \"c\": {}\n}"
        );
    }

    #[test]
    fn python_values_quote_escape_and_spell_literals() {
        let Some(Node::Obj(args)) =
            Node::parse(r#"{"q": "it's", "on": true, "n": null, "l": [1, "a"]}"#)
        else {
            panic!("an object")
        };
        let mut out = String::new();
        py_args(&args, &PyStep::keywords(), &Style::default(), &mut out).unwrap();
        assert_eq!(out, "q='it\\'s', on=True, n=None, l=[1, 'a'])");
        // Olmo 3: strings Python's, every other value JSON.
        let olmo = Style {
            json_values: true,
            ..Style::default()
        };
        let mut out = String::new();
        py_args(&args, &PyStep::keywords(), &olmo, &mut out).unwrap();
        assert_eq!(out, "q='it\\'s', on=true, n=null, l=[1, \"a\"])");
        let gemma = PyStep::bare_keys("<escape>");
        let style = Style {
            item_sep: ",".into(),
            ..Style::default()
        };
        let mut out = String::new();
        py_args(&args, &gemma, &style, &mut out).unwrap();
        assert_eq!(
            out,
            "q:<escape>it's<escape>,on:true,n:null,l:[1,<escape>a<escape>]}"
        );
        let Some(Node::Obj(bad)) = Node::parse(r#"{"q": "a<escape>b"}"#) else {
            panic!("an object")
        };
        assert!(py_args(&bad, &gemma, &style, &mut String::new()).is_none());
    }
}
