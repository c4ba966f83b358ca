use std::time::Instant;
use toolscan_core::format::Format;
use toolscan_core::format::Trust;
use toolscan_core::{Grammar, Options, Parser, Registry};
fn prose() -> String {
    let odd = [
        "a < b",
        "x <= 3",
        "<br>",
        "<b>bold</b>",
        "<tooling>",
        "<tool_",
        "[1]",
        "[note]",
        "[TOOL]",
        "<think about it>",
        "<function>",
        "Vec<u8>",
        "a[i] < a[j]",
    ];
    let words = [
        "the", "model", "writes", "text", "and", "then", "a", "call", "café", "東京", "value", "of",
    ];
    let mut s = String::new();
    let mut k = 0usize;
    while s.len() < 1 << 20 {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (k >> 33) as usize;
        if r % 12 == 0 {
            s.push_str(odd[r / 12 % odd.len()]);
        } else {
            s.push_str(words[r % words.len()]);
        }
        s.push(' ');
        if r % 17 == 0 {
            s.push_str(".\n\n");
        }
    }
    s
}
fn time(g: &std::sync::Arc<Grammar>, text: &str, size: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..15 {
        let t = Instant::now();
        let mut p = Parser::new(g.clone(), Options::default());
        let mut n = 0usize;
        let mut s = toolscan_core::sink::from_fn(|e: toolscan_core::EventRef<'_>| {
            if let toolscan_core::EventRef::Text(t) = e {
                n += t.len();
            }
        });
        let mut at = 0;
        while at < text.len() {
            let mut e = (at + size).min(text.len());
            while !text.is_char_boundary(e) {
                e += 1;
            }
            p.feed_with(&text.as_bytes()[at..e], &mut s);
            at = e;
        }
        p.finish_with(&mut s);
        drop(s);
        assert!(n >= text.len() - 8);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best * 1e3
}
fn main() {
    let text = prose();
    let reg = Registry::builtin();
    let all: Vec<Format> = reg
        .formats()
        .iter()
        .map(|f| {
            let mut g = Format::new(f.name(), "", "");
            for o in f.openers() {
                if o.trust != Trust::Bare && !o.stream_start {
                    g = g.opener(o.clone());
                }
            }
            g
        })
        .filter(|f| !f.openers().is_empty())
        .collect();
    if let Ok(f) = std::env::var("ONLY") {
        let g = reg.grammar(&f).unwrap();
        for _ in 0..20 {
            time(&g, &text, 4);
        }
        return;
    }
    let h = reg.grammar("hermes").unwrap();
    let a = reg.grammar("auto").unwrap();
    for size in [4usize, 65536] {
        println!(
            "size {size}: hermes {:.2} ms auto {:.2} ms",
            time(&h, &text, size),
            time(&a, &text, size)
        );
    }
    let old: Vec<&Format> = all.iter().take_while(|f| f.name() != "granite").collect();
    let g = Grammar::new("old", &old).unwrap().shared();
    println!(
        "old set ({}) 4B {:.2} ms 64K {:.2} ms",
        old.len(),
        time(&g, &text, 4),
        time(&g, &text, 65536)
    );
    let mut extra: Vec<&Format> = old.clone();
    for f in all.iter().skip(old.len()) {
        extra.push(f);
        let g = Grammar::new("x", &extra).unwrap().shared();
        println!("+ {:20} 4B {:.2} ms", f.name(), time(&g, &text, 4));
    }
}
