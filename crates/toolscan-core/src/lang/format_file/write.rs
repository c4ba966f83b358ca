//! Writing a format as a description, in the program form: every opener's
//! steps one by one. What [`Format::from_json`] reads back is the same
//! format, so a built-in format can be copied out, changed and loaded.

use serde_json::{Map, Value};

use crate::error::{child, FormatFileError};
use crate::lang::format::{Format, Opener, Trust};
use crate::lang::format_file::payloads::write_lit;

impl Format {
    /// The format as a JSON description (pretty-printed), each opener in
    /// the program form, so that [`Format::from_json`] gives back an equal
    /// format (under the same name).
    ///
    /// Fails only for a format whose literals are not UTF-8 text, which
    /// JSON cannot hold, or whose steps hold an empty list (a fork without
    /// branches, a `then` without literals: descriptions leave empty lists
    /// out).
    ///
    /// ```
    /// use toolscan_core::{Format, Registry};
    /// let hermes = Registry::builtin().get("hermes").unwrap().clone();
    /// let text = hermes.to_json().unwrap();
    /// assert_eq!(Format::from_json(&text).unwrap(), hermes);
    /// ```
    pub fn to_json(&self) -> Result<String, FormatFileError> {
        let openers = self
            .openers
            .iter()
            .enumerate()
            .map(|(i, o)| opener(o, &child("/openers", &i.to_string())))
            .collect::<Result<Vec<Value>, _>>()?;
        Ok(render(
            &[
                ("name", self.name.as_str()),
                ("models", self.models.as_str()),
                ("description", self.description.as_str()),
            ],
            &openers,
            self.results.as_ref().map(|r| r.write()),
        ))
    }
}

/// The description as text: indented, each step of a program on a line of
/// its own.
fn render(fields: &[(&str, &str)], openers: &[Value], results: Option<Value>) -> String {
    let compact = |v: &Value| v.to_string();
    let mut out = String::from("{\n");
    for (k, v) in fields {
        out += &format!("  {}: {},\n", compact(&(*k).into()), compact(&(*v).into()));
    }
    out += "  \"openers\": [\n";
    let openers: Vec<String> = openers
        .iter()
        .map(|o| {
            let mut lines = Vec::new();
            for (k, v) in o.as_object().into_iter().flatten() {
                let key = compact(&k.as_str().into());
                match v {
                    Value::Array(steps) if k == "program" => {
                        let steps: Vec<String> = steps
                            .iter()
                            .map(|s| format!("        {}", compact(s)))
                            .collect();
                        lines.push(format!("      {key}: [\n{}\n      ]", steps.join(",\n")));
                    }
                    _ => lines.push(format!("      {key}: {}", compact(v))),
                }
            }
            format!("    {{\n{}\n    }}", lines.join(",\n"))
        })
        .collect();
    out += &openers.join(",\n");
    out += "\n  ]";
    if let Some(r) = results {
        out += &format!(",\n  \"tool_results\": {}", compact(&r));
    }
    out += "\n}";
    out
}

fn opener(o: &Opener, at: &str) -> Result<Value, FormatFileError> {
    let mut m = Map::new();
    if o.stream_start {
        m.insert("stream_start".into(), true.into());
    } else {
        m.insert("open".into(), write_lit(&o.marker, &child(at, "open"))?);
    }
    if o.line_start {
        m.insert("line_start".into(), true.into());
    }
    let trust = match o.trust {
        Trust::Definite => None,
        Trust::Tentative => Some("tentative"),
        Trust::Bare => Some("bare"),
    };
    if let Some(t) = trust {
        m.insert("trust".into(), t.into());
    }
    if o.replay != (o.trust == Trust::Bare) && !o.stream_start {
        m.insert("replay".into(), o.replay.into());
    }
    let at = child(at, "program");
    let steps = o
        .program
        .iter()
        .enumerate()
        .map(|(i, s)| s.write(&child(&at, &i.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    m.insert("program".into(), Value::Array(steps));
    Ok(Value::Object(m))
}
