//! `toolscan formats`: the built-in formats (and the one `--format-file`
//! describes, last) with their opening markers and a one-line description,
//! as a table or as JSON Lines (`--json`).
//!
//! A marker written `^MARKER` only counts at the start of a line.
//! `--describe NAME` prints one format as a JSON description instead.
//! `docs/formats.md` describes each format in full.

use std::io::{self, Write};

use toolscan_core::Format;

use crate::args::FormatsArgs;
use crate::failure::Failure;
use crate::setup::registry_with;

/// Runs `toolscan formats`.
pub fn run(args: FormatsArgs) -> Result<(), Failure> {
    let (registry, _) = registry_with(args.format_file.as_deref())?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if let Some(name) = &args.describe {
        let format = registry.get(name).ok_or_else(|| {
            // The registry's error names the closest known name.
            Failure::Usage(
                registry
                    .grammar(name)
                    .err()
                    .map_or_else(|| format!("unknown format `{name}`"), |e| e.to_string()),
            )
        })?;
        let text = format
            .to_json()
            .map_err(|e| Failure::Usage(format!("cannot describe `{name}`: {e}")))?;
        return writeln!(out, "{text}")
            .and_then(|()| out.flush())
            .map_err(Failure::Output);
    }
    if args.json {
        write_json(&mut out, registry.formats())
    } else {
        write_table(&mut out, registry.formats())
    }
    .and_then(|()| out.flush())
    .map_err(Failure::Output)
}

/// One JSON object per format per line, keys in this order:
/// `{"name","markers":[…],"description"}`.
fn write_json(out: &mut impl Write, formats: &[Format]) -> io::Result<()> {
    for f in formats {
        out.write_all(b"{\"name\":")?;
        serde_json::to_writer(&mut *out, f.name())?;
        out.write_all(b",\"markers\":")?;
        serde_json::to_writer(&mut *out, &f.markers())?;
        out.write_all(b",\"description\":")?;
        serde_json::to_writer(&mut *out, f.description())?;
        out.write_all(b",\"aliases\":")?;
        serde_json::to_writer(&mut *out, &toolscan_core::aliases::of(f.name()))?;
        out.write_all(b"}\n")?;
    }
    Ok(())
}

/// A table with the columns NAME, MARKERS, DESCRIPTION.
fn write_table(out: &mut impl Write, formats: &[Format]) -> io::Result<()> {
    let header = ["NAME", "MARKERS", "DESCRIPTION"].map(str::to_owned);
    let rows: Vec<[String; 3]> = formats
        .iter()
        .map(|f| {
            [
                f.name().to_owned(),
                dash_if_empty(&f.markers().join(" ")),
                dash_if_empty(f.description()),
            ]
        })
        .collect();
    let mut widths = [0usize; 2];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(display_width(cell));
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (w, cell) in widths.iter().zip(row) {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', w - display_width(cell) + 2));
        }
        line.push_str(&row[2]);
        writeln!(out, "{}", line.trim_end())?;
    }
    // vLLM's and SGLang's parser names.
    let aliases: Vec<String> = toolscan_core::aliases::ALIASES
        .iter()
        .map(|(a, f)| format!("{a} → {f}"))
        .collect();
    writeln!(
        out,
        "\nAliases (vLLM and SGLang tool-parser names; `_` reads as `-`, case does not matter):\n  {}",
        aliases.join(", ")
    )?;
    Ok(())
}

/// Table cells must not be empty, or the columns read wrong.
fn dash_if_empty(s: &str) -> String {
    let s = crate::failure::one_line(s);
    if s.is_empty() {
        "-".to_owned()
    } else {
        s
    }
}

/// Columns a string takes in a terminal: wide (East Asian) characters such as
/// DeepSeek's `｜` count two, everything else one. An estimate; good enough
/// to line a table up.
fn display_width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let c = u32::from(c);
            let wide = matches!(c,
                0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
                | 0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
                | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6
                | 0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD);
            if wide {
                2
            } else {
                1
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolscan_core::Registry;

    #[test]
    fn json_lines_have_the_three_fields() {
        let registry = Registry::builtin();
        let mut buf = Vec::new();
        write_json(&mut buf, registry.formats()).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text.lines().count(), registry.formats().len());
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v.as_object().map(|o| o.len()), Some(4), "{v}");
            assert!(v["name"].is_string());
            assert!(v["markers"].is_array());
            assert!(v["description"].is_string());
            assert!(v["aliases"].is_array());
        }
    }

    #[test]
    fn table_has_a_header_and_a_row_per_format() {
        let registry = Registry::builtin();
        let mut buf = Vec::new();
        write_table(&mut buf, registry.formats()).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let n = registry.formats().len();
        // The header, a row per format, a blank line and the aliases.
        assert_eq!(lines.len(), n + 4);
        assert!(lines[0].starts_with("NAME"));
        for (line, f) in lines[1..].iter().zip(registry.formats()) {
            assert!(line.starts_with(f.name()));
        }
        assert!(lines[n + 2].starts_with("Aliases"));
        assert!(
            lines[n + 3].contains("openai → harmony"),
            "{}",
            lines[n + 3]
        );
    }

    #[test]
    fn widths() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("<｜tool｜>"), 10);
        assert_eq!(display_width("東京"), 4);
    }
}
