//! Prints the markdown tables of BENCHMARKS.md from the last `cargo bench`
//! run (criterion's `target/criterion/<group>/<contender>/new/`): absolute
//! times and throughputs, and the ratios and targets, all from that one run.
//!
//!     cd benches/peer && cargo bench && cargo run --release
//!
//! Two statistics of each benchmark: criterion's mean time per iteration,
//! and the fastest sample (the lowest time per iteration among its samples).
//! On a machine shared with other work the fastest sample is the one least
//! disturbed; ratios and targets are computed from both, each ratio from
//! one statistic on both sides. Byte and chunk counts are recomputed from
//! the input generators the benchmarks use.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolscan_peer_bench::input;

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Criterion's mean time of one iteration (one whole response), in ns.
fn mean_ns(dir: &Path) -> Option<f64> {
    read_json(&dir.join("estimates.json"))?["mean"]["point_estimate"].as_f64()
}

/// The fastest sample's time per iteration, in ns.
fn fastest_ns(dir: &Path) -> Option<f64> {
    let v = read_json(&dir.join("sample.json"))?;
    let iters = v["iters"].as_array()?;
    let times = v["times"].as_array()?;
    iters
        .iter()
        .zip(times)
        .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64()?))
        .min_by(f64::total_cmp)
}

fn fmt_time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn fmt_rate(bytes: usize, ns: f64) -> String {
    let mib_s = bytes as f64 / ns * 1e9 / (1 << 20) as f64;
    if mib_s >= 1024.0 {
        format!("{:.2} GiB/s", mib_s / 1024.0)
    } else if mib_s >= 10.0 {
        format!("{mib_s:.0} MiB/s")
    } else if mib_s >= 0.1 {
        format!("{mib_s:.2} MiB/s")
    } else {
        format!("{:.1} KiB/s", mib_s * 1024.0)
    }
}

fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

/// One group's inputs and contenders.
struct Group {
    name: &'static str,
    what: &'static str,
    bytes: usize,
    chunks: usize,
    ids: &'static [&'static str],
}

/// Which statistic a computation reads.
#[derive(Clone, Copy)]
enum Stat {
    Fastest,
    Mean,
}

struct Times {
    root: PathBuf,
}

impl Times {
    fn get(&self, stat: Stat, group: &str, id: &str) -> f64 {
        let dir = self.root.join(group).join(id).join("new");
        match stat {
            Stat::Fastest => fastest_ns(&dir),
            Stat::Mean => mean_ns(&dir),
        }
        .unwrap_or(f64::NAN)
    }
}

/// One row of the targets table, for one statistic.
struct Row {
    what: &'static str,
    detail: String,
    shown: String,
    goal: &'static str,
    /// `None`: a reference row, not a target.
    met: Option<bool>,
    missing: bool,
}

fn status(row: &Row) -> &'static str {
    match row.met {
        _ if row.missing => "no data",
        None => "reference",
        Some(true) => "**met**",
        Some(false) => "not met",
    }
}

/// Every ratio and target, from one statistic.
/// Chunk counts of the inputs (recomputed from the generators).
struct Counts {
    /// `prose_4B_chunks`.
    small: usize,
    /// `arg_64KB_4B`.
    arg: usize,
    /// `xml_256KB_4B`.
    xml: usize,
}

fn targets(t: &Times, s: Stat, n: &Counts) -> Vec<Row> {
    let small_chunks = n.small;
    let (p64, p4, a4, a64) = (
        "prose_64KiB_chunks",
        "prose_4B_chunks",
        "arg_4KB_4B",
        "arg_64KB_4B",
    );
    let mut rows = Vec::new();
    let mut row = |what, detail, value: f64, shown, goal, met| {
        rows.push(Row {
            what,
            detail,
            shown,
            goal,
            met,
            missing: value.is_nan(),
        })
    };
    let memchr = t.get(s, p64, "memchr2");
    for id in [
        "toolscan_hermes_bytes",
        "toolscan_hermes_str",
        "toolscan_auto_bytes",
        "toolscan_auto_str",
    ] {
        let frac = memchr / t.get(s, p64, id);
        row(
            "prose, 64 KiB chunks: share of the memchr2 ceiling",
            format!("`{id}` ÷ `memchr2`, throughput"),
            frac,
            format!("{:.1} %", frac * 100.0),
            "≥ 40 %",
            Some(frac >= 0.40),
        );
    }
    // The peer takes `&str`: compared with toolscan's `&str` entry point.
    for (id, peer) in [
        ("toolscan_hermes_str", "peer_qwen"),
        ("toolscan_auto_str", "peer_json"),
        ("toolscan_auto_str", "peer_passthrough"),
    ] {
        let x = t.get(s, p64, peer) / t.get(s, p64, id);
        row(
            "prose, 64 KiB chunks: speed-up over the peer",
            format!("`{id}` vs `{peer}`"),
            x,
            fmt_ratio(x),
            "≥ 2×",
            Some(x >= 2.0),
        );
    }
    for id in [
        "toolscan_hermes_str",
        "toolscan_auto_str",
        "toolscan_hermes_bytes",
        "toolscan_auto_bytes",
    ] {
        let per = t.get(s, p4, id) / small_chunks as f64;
        row(
            "prose, 4-byte chunks: time per chunk",
            format!("`{id}`"),
            per,
            format!("{per:.1} ns"),
            "≤ 20 ns",
            Some(per <= 20.0),
        );
    }
    for (id, peer) in [
        ("toolscan_hermes_str", "peer_qwen"),
        ("toolscan_auto_str", "peer_json"),
    ] {
        let x = t.get(s, p4, peer) / t.get(s, p4, id);
        row(
            "prose, 4-byte chunks: speed-up over the peer",
            format!("`{id}` vs `{peer}`"),
            x,
            fmt_ratio(x),
            "≥ 4×",
            Some(x >= 4.0),
        );
    }
    for g in [p64, p4] {
        let x = t.get(s, g, "toolscan_auto_str") / t.get(s, g, "toolscan_hermes_str");
        row(
            "auto's cost over hermes",
            format!("`{g}`: time of `auto` ÷ `hermes` (str)"),
            x,
            fmt_ratio(x),
            "≤ 1.3×",
            Some(x <= 1.3),
        );
    }
    for g in [p64, p4] {
        for format in ["hermes", "auto"] {
            let vec = format!("toolscan_{format}_vec");
            let bytes = format!("toolscan_{format}_bytes");
            let x = t.get(s, g, &vec) / t.get(s, g, &bytes);
            row(
                "the Vec API's cost over the sink API",
                format!("`{g}`: time of `{vec}` ÷ `{bytes}`"),
                x,
                fmt_ratio(x),
                "≤ 1.5×",
                Some(x <= 1.5),
            );
        }
    }
    for format in ["hermes", "auto"] {
        let feed = format!("toolscan_{format}_feed");
        let bytes = format!("toolscan_{format}_bytes");
        let x = t.get(s, p4, &feed) / t.get(s, p4, &bytes);
        row(
            "the convenience `feed` (its `Events` a chunk) over the sink API",
            format!("`{p4}`: time of `{feed}` ÷ `{bytes}`"),
            x,
            fmt_ratio(x),
            "≤ 2×",
            Some(x <= 2.0),
        );
    }
    let (x64, xml) = ("toolscan_hermes_str", "xml_256KB_4B");
    for (what, group, id, chunks, whole) in [
        (
            "64 KB hermes argument, 4-byte chunks",
            a64,
            x64,
            n.arg,
            0.4e6,
        ),
        (
            "256 KB Qwen3-Coder string parameter, 4-byte chunks",
            xml,
            "toolscan_qwen3coder_str",
            n.xml,
            1.6e6,
        ),
    ] {
        let time = t.get(s, group, id);
        let per = time / chunks as f64;
        row(
            what,
            format!("`{id}`: time per chunk"),
            per,
            format!("{per:.1} ns"),
            "≤ 25 ns",
            Some(per <= 25.0),
        );
        row(
            what,
            format!("`{id}`: time of the response"),
            time,
            fmt_time(time),
            if whole < 1e6 {
                "≤ 0.4 ms"
            } else {
                "≤ 1.6 ms"
            },
            Some(time <= whole),
        );
        let x = per / (t.get(s, p4, "toolscan_hermes_str") / small_chunks as f64);
        row(
            what,
            format!("`{id}`: a chunk's time ÷ a prose chunk's (`{p4}`, hermes str)"),
            x,
            fmt_ratio(x),
            "—",
            None,
        );
    }
    for id in ["toolscan_hermes_bytes", "peer_qwen"] {
        let x = t.get(s, a64, id) / t.get(s, a4, id);
        let peer = id == "peer_qwen";
        // 16 times the bytes: linear is 16; allow 25 % on the cost per byte.
        row(
            "64 KB argument, 4-byte chunks: linear",
            format!("`{id}`: time at 64 KB ÷ at 4 KB (linear 16×, quadratic 256×)"),
            x,
            fmt_ratio(x),
            if peer { "—" } else { "≤ 20× (linear)" },
            (!peer).then_some(x <= 20.0),
        );
    }
    let x = t.get(s, a64, "peer_qwen") / t.get(s, a64, "toolscan_hermes_str");
    row(
        "64 KB argument, 4-byte chunks: speed-up over the peer",
        "`toolscan_hermes_str` vs `peer_qwen`".into(),
        x,
        fmt_ratio(x),
        "≥ 1000×",
        Some(x >= 1000.0),
    );
    rows
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/criterion"));
    let t = Times { root };

    let big = input::prose(input::PROSE_BIG, input::PROSE_SEED);
    let big_chunks = input::cuts(&big, input::BIG_CHUNK).len();
    drop(big);
    let small = input::prose(input::PROSE_SMALL, input::PROSE_SEED);
    let small_chunks = input::cuts(&small, input::SMALL_CHUNK).len();
    let arg = |size| {
        let call = input::hermes_call(&input::content(size), true);
        let n = input::cuts(&call, input::SMALL_CHUNK).len();
        (call.len(), n)
    };
    let (a4_bytes, a4_chunks) = arg(input::ARG_SMALL);
    let (a64_bytes, a64_chunks) = arg(input::ARG_BIG);
    let xml = input::qwen3_coder_call(&input::content(input::XML_BIG));
    let (xml_bytes, xml_chunks) = (xml.len(), input::cuts(&xml, input::SMALL_CHUNK).len());
    let counts = Counts {
        small: small_chunks,
        arg: a64_chunks,
        xml: xml_chunks,
    };

    let groups = [
        Group {
            name: "prose_64KiB_chunks",
            what: "64 MiB of marker-free prose in 64 KiB chunks",
            bytes: input::PROSE_BIG,
            chunks: big_chunks,
            ids: &[
                "memchr2",
                "peer_qwen",
                "peer_json",
                "peer_passthrough",
                "toolscan_hermes_bytes",
                "toolscan_hermes_str",
                "toolscan_hermes_vec",
                "toolscan_hermes_feed",
                "toolscan_auto_bytes",
                "toolscan_auto_str",
                "toolscan_auto_vec",
                "toolscan_auto_feed",
            ],
        },
        Group {
            name: "prose_4B_chunks",
            what: "1 MiB of the same prose in 4-byte chunks",
            bytes: input::PROSE_SMALL,
            chunks: small_chunks,
            ids: &[
                "peer_qwen",
                "peer_json",
                "toolscan_hermes_bytes",
                "toolscan_hermes_str",
                "toolscan_hermes_vec",
                "toolscan_hermes_feed",
                "toolscan_auto_bytes",
                "toolscan_auto_str",
                "toolscan_auto_vec",
                "toolscan_auto_feed",
            ],
        },
        Group {
            name: "arg_4KB_4B",
            what: "one hermes call with a 4 KiB `content`, 4-byte chunks",
            bytes: a4_bytes,
            chunks: a4_chunks,
            ids: &["peer_qwen", "toolscan_hermes_bytes", "toolscan_hermes_str"],
        },
        Group {
            name: "arg_64KB_4B",
            what: "one hermes call with a 64 KiB `content`, 4-byte chunks",
            bytes: a64_bytes,
            chunks: a64_chunks,
            ids: &["peer_qwen", "toolscan_hermes_bytes", "toolscan_hermes_str"],
        },
        Group {
            name: "xml_256KB_4B",
            what: "one Qwen3-Coder call with a 256 KiB `content` parameter, 4-byte chunks",
            bytes: xml_bytes,
            chunks: xml_chunks,
            ids: &["toolscan_qwen3coder_bytes", "toolscan_qwen3coder_str"],
        },
    ];

    let mut out = String::new();
    let fastest = targets(&t, Stat::Fastest, &counts);
    let mean = targets(&t, Stat::Mean, &counts);
    let _ = writeln!(
        out,
        "| target | measured as | fastest samples | means | target | status (fastest / means) |"
    );
    let _ = writeln!(out, "| --- | --- | ---: | ---: | --- | --- |");
    for (f, m) in fastest.iter().zip(&mean) {
        let st = if status(f) == status(m) {
            status(f).to_string()
        } else {
            format!("{} / {}", status(f), status(m))
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {st} |",
            f.what, f.detail, f.shown, m.shown, f.goal
        );
    }

    for g in &groups {
        let _ = writeln!(
            out,
            "\n### `{}`: {} ({} bytes, {} chunks)\n",
            g.name, g.what, g.bytes, g.chunks
        );
        let _ = writeln!(
            out,
            "| contender | fastest sample | its throughput | its ns per chunk | mean | mean throughput |"
        );
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: |");
        for id in g.ids {
            let f = t.get(Stat::Fastest, g.name, id);
            let m = t.get(Stat::Mean, g.name, id);
            let _ = writeln!(
                out,
                "| `{id}` | {} | {} | {:.1} | {} | {} |",
                fmt_time(f),
                fmt_rate(g.bytes, f),
                f / g.chunks as f64,
                fmt_time(m),
                fmt_rate(g.bytes, m),
            );
        }
    }
    print!("{out}");
}
