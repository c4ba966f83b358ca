//! Prints the markdown tables of BENCHMARKS.md from the last `cargo bench`
//! run (criterion's `target/criterion/*/*/new/estimates.json`): absolute
//! times and throughputs, and the ratios and targets, all from that one run.
//!
//!     cd benches/peer && cargo bench && cargo run --release
//!
//! Byte and chunk counts are recomputed from the same input generators the
//! benchmarks use.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolscan_peer_bench::input;

/// Mean time of one iteration (one whole response), in nanoseconds.
fn mean_ns(root: &Path, group: &str, id: &str) -> Option<f64> {
    let path = root.join(group).join(id).join("new").join("estimates.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
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
    } else {
        format!("{mib_s:.2} MiB/s")
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
    what: String,
    bytes: usize,
    chunks: usize,
    ids: &'static [&'static str],
}

struct Report {
    root: PathBuf,
    out: String,
    targets: Vec<[String; 5]>,
}

impl Report {
    fn t(&self, group: &str, id: &str) -> f64 {
        mean_ns(&self.root, group, id).unwrap_or(f64::NAN)
    }

    fn group_table(&mut self, g: &Group) {
        let _ = writeln!(
            self.out,
            "\n### `{}`: {} ({} bytes, {} chunks)\n",
            g.name, g.what, g.bytes, g.chunks
        );
        let _ = writeln!(
            self.out,
            "| contender | time per response | throughput | ns per chunk |"
        );
        let _ = writeln!(self.out, "| --- | ---: | ---: | ---: |");
        for id in g.ids {
            let ns = self.t(g.name, id);
            let _ = writeln!(
                self.out,
                "| `{id}` | {} | {} | {:.1} |",
                fmt_time(ns),
                fmt_rate(g.bytes, ns),
                ns / g.chunks as f64
            );
        }
    }

    /// A target row: `what`, the measured value, the target, met or not.
    /// `ok` is `None` for a reference row that is not a target.
    fn target(
        &mut self,
        what: &str,
        detail: String,
        value: f64,
        shown: String,
        goal: &str,
        ok: Option<bool>,
    ) {
        let met = match ok {
            _ if value.is_nan() => "no data",
            None => "reference",
            Some(true) => "**met**",
            Some(false) => "not met",
        };
        self.targets.push([
            what.to_string(),
            detail,
            shown,
            goal.to_string(),
            met.to_string(),
        ]);
    }
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/criterion"));
    let mut r = Report {
        root,
        out: String::new(),
        targets: Vec::new(),
    };

    let big = input::prose(input::PROSE_BIG, 0x5EED_0001);
    let big_chunks = input::cuts(&big, input::BIG_CHUNK).len();
    drop(big);
    let small = input::prose(input::PROSE_SMALL, 0x5EED_0001);
    let small_chunks = input::cuts(&small, input::SMALL_CHUNK).len();
    let arg = |size| {
        let call = input::hermes_call(&input::content(size), true);
        let n = input::cuts(&call, input::SMALL_CHUNK).len();
        (call.len(), n)
    };
    let (a4_bytes, a4_chunks) = arg(input::ARG_SMALL);
    let (a64_bytes, a64_chunks) = arg(input::ARG_BIG);

    let groups = [
        Group {
            name: "prose_64KiB_chunks",
            what: "64 MiB of marker-free prose in 64 KiB chunks".into(),
            bytes: input::PROSE_BIG,
            chunks: big_chunks,
            ids: &[
                "memchr2",
                "peer_qwen",
                "peer_json",
                "peer_passthrough",
                "toolscan_hermes_bytes",
                "toolscan_hermes_str",
                "toolscan_auto_bytes",
                "toolscan_auto_str",
            ],
        },
        Group {
            name: "prose_4B_chunks",
            what: "1 MiB of the same prose in 4-byte chunks".into(),
            bytes: input::PROSE_SMALL,
            chunks: small_chunks,
            ids: &[
                "peer_qwen",
                "peer_json",
                "toolscan_hermes_bytes",
                "toolscan_hermes_str",
                "toolscan_auto_bytes",
                "toolscan_auto_str",
            ],
        },
        Group {
            name: "arg_4KB_4B",
            what: "one hermes call with a 4 KiB `content`, 4-byte chunks".into(),
            bytes: a4_bytes,
            chunks: a4_chunks,
            ids: &["peer_qwen", "toolscan_hermes_bytes", "toolscan_hermes_str"],
        },
        Group {
            name: "arg_64KB_4B",
            what: "one hermes call with a 64 KiB `content`, 4-byte chunks".into(),
            bytes: a64_bytes,
            chunks: a64_chunks,
            ids: &["peer_qwen", "toolscan_hermes_bytes", "toolscan_hermes_str"],
        },
    ];
    for g in &groups {
        r.group_table(g);
    }

    // Ratios and targets, all from the same run.
    let (p64, p4, a4, a64) = (
        "prose_64KiB_chunks",
        "prose_4B_chunks",
        "arg_4KB_4B",
        "arg_64KB_4B",
    );
    let memchr = r.t(p64, "memchr2");
    for fmt in ["hermes", "auto"] {
        for api in ["bytes", "str"] {
            let id = format!("toolscan_{fmt}_{api}");
            let ours = r.t(p64, &id);
            let frac = memchr / ours;
            r.target(
                "prose, 64 KiB chunks: share of the memchr2 ceiling",
                format!("`{id}` ÷ `memchr2` (throughput)"),
                frac,
                format!("{:.1} %", frac * 100.0),
                "≥ 40 %",
                Some(frac >= 0.40),
            );
        }
    }
    for (fmt, peer_id) in [
        ("hermes", "peer_qwen"),
        ("auto", "peer_json"),
        ("auto", "peer_passthrough"),
    ] {
        let id = format!("toolscan_{fmt}_bytes");
        let x = r.t(p64, peer_id) / r.t(p64, &id);
        r.target(
            "prose, 64 KiB chunks: speed-up over the peer",
            format!("`{id}` vs `{peer_id}`"),
            x,
            fmt_ratio(x),
            "≥ 2×",
            Some(x >= 2.0),
        );
    }
    for fmt in ["hermes", "auto"] {
        let id = format!("toolscan_{fmt}_bytes");
        let per = r.t(p4, &id) / small_chunks as f64;
        r.target(
            "prose, 4-byte chunks: cost per chunk",
            format!("`{id}`"),
            per,
            format!("{per:.1} ns"),
            "≤ 20 ns",
            Some(per <= 20.0),
        );
    }
    for (fmt, peer_id) in [("hermes", "peer_qwen"), ("auto", "peer_json")] {
        let id = format!("toolscan_{fmt}_bytes");
        let x = r.t(p4, peer_id) / r.t(p4, &id);
        r.target(
            "prose, 4-byte chunks: speed-up over the peer",
            format!("`{id}` vs `{peer_id}`"),
            x,
            fmt_ratio(x),
            "≥ 4×",
            Some(x >= 4.0),
        );
    }
    for g in [p64, p4] {
        let x = r.t(g, "toolscan_auto_bytes") / r.t(g, "toolscan_hermes_bytes");
        r.target(
            "auto's cost over hermes",
            format!("`{g}`: time of auto ÷ hermes"),
            x,
            fmt_ratio(x),
            "≤ 1.5×",
            Some(x <= 1.5),
        );
    }
    for id in ["toolscan_hermes_bytes", "peer_qwen"] {
        let x = r.t(a64, id) / r.t(a4, id);
        // 16× the bytes: linear is 16; allow 25 % on the cost per byte.
        r.target(
            "64 KB argument, 4-byte chunks: linear",
            format!("`{id}`: time 64 KB ÷ 4 KB (linear = 16, quadratic = 256)"),
            x,
            fmt_ratio(x),
            if id == "peer_qwen" {
                "—"
            } else {
                "≤ 20× (linear)"
            },
            (id != "peer_qwen").then_some(x <= 20.0),
        );
    }
    let x = r.t(a64, "peer_qwen") / r.t(a64, "toolscan_hermes_bytes");
    r.target(
        "64 KB argument, 4-byte chunks: speed-up over the peer",
        "`toolscan_hermes_bytes` vs `peer_qwen`".into(),
        x,
        fmt_ratio(x),
        "≥ 1000×",
        Some(x >= 1000.0),
    );

    println!("| target | measured as | value | target | status |");
    println!("| --- | --- | ---: | --- | --- |");
    for [what, detail, shown, goal, met] in &r.targets {
        println!("| {what} | {detail} | {shown} | {goal} | {met} |");
    }
    print!("{}", r.out);
}
