//! Prose for benchmarks and tests: paragraphs of sentences with
//! punctuation, non-ASCII words and some `<` and `[` (the bytes markers
//! begin with), but no tool-call marker. The same text on every run and
//! every machine (a fixed seed), so figures taken apart compare.

use crate::rng::Rng;

const WORDS: &[&str] = &[
    "the",
    "a",
    "request",
    "server",
    "returns",
    "value",
    "function",
    "weather",
    "in",
    "Zürich",
    "東京",
    "café",
    "naïve",
    "résumé",
    "token",
    "stream",
    "parser",
    "model",
    "output",
    "because",
    "when",
    "each",
    "chunk",
    "arrives",
    "tool",
    "call",
    "is",
    "not",
    "always",
    "complete",
    "größer",
    "Straße",
    "données",
    "temperature",
    "forecast",
    "°C",
    "—",
    "and",
    "of",
    "to",
    "with",
    "buffer",
    "😀",
    "Ελλάδα",
    "Москва",
];

/// Inserts that exercise the marker automaton without completing a marker:
/// `<` and `[` starting tags that are not tool-call markers.
const ODDITIES: &[&str] = &[
    "a < b",
    "x <= 3",
    "<br>",
    "<b>bold</b>",
    "<tooling>",
    "<tool_",
    "<toolbox>",
    "[1]",
    "[note]",
    "[TOOL]",
    "[see above]",
    "<think about it>",
    "<function>",
    "Vec<u8>",
    "<｜",
    "a[i] < a[j]",
];

/// About `target` bytes of prose: paragraphs of sentences with punctuation,
/// non-ASCII words and some `<` / `[`, but no tool-call marker.
pub fn prose(target: usize) -> String {
    let mut rng = Rng::new(0x70_726f_7365);
    let mut s = String::with_capacity(target + 256);
    while s.len() < target {
        let sentences = 3 + rng.below(5);
        for _ in 0..sentences {
            let words = 6 + rng.below(14);
            for w in 0..words {
                let word = if rng.below(12) == 0 {
                    pick(&mut rng, ODDITIES)
                } else {
                    pick(&mut rng, WORDS)
                };
                if w == 0 {
                    let mut cs = word.chars();
                    if let Some(c) = cs.next() {
                        s.extend(c.to_uppercase());
                        s.push_str(cs.as_str());
                    }
                } else {
                    s.push_str(word);
                }
                if w + 1 < words {
                    s.push_str(match rng.below(10) {
                        0 => ", ",
                        1 if w > 2 => "; ",
                        _ => " ",
                    });
                }
            }
            s.push_str(pick(&mut rng, &[". ", ". ", ". ", "? ", "! ", ": "]));
        }
        s.push_str("\n\n");
    }
    s
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

/// Pieces of `text` of about `size` bytes, each ending on a character
/// boundary (the last one may be shorter).
///
/// ```
/// let p = toolscan_testkit::prose::pieces("aé東z", 2);
/// assert_eq!(p, ["aé", "東", "z"]);
/// ```
pub fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut v = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        v.push(&text[at..end]);
        at = end;
    }
    v
}
