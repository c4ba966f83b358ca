//! `toolscan demo`: the bundled stream replayed at token pace; each tool
//! starts before the stream ends, and the summary says by how much.

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

#[test]
fn the_demo_starts_each_tool_before_the_stream_ends() {
    let out = toolscan_testkit::process::run(
        BIN,
        None,
        &["demo", "--delay-ms", "2", "--tool-ms", "20"],
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{stdout}"))
    };
    let started: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("complete: tool started"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(started.len(), 2, "{stdout}");
    let done = at("[DONE]");
    assert!(started.iter().all(|&i| i < done), "{stdout}");
    assert!(
        at("\"city\": \"Zürich\"") < at("\"city\": \"東京\""),
        "{stdout}"
    );
    assert!(at("finish_reason: tool_calls") < done, "{stdout}");
    // The text after the calls still streams, and the reasoning is apart.
    assert!(at("umbrella") > started[1], "{stdout}");
    assert!(
        lines[at("The user wants")].contains("reasoning"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Started only after the stream ended"),
        "{stdout}"
    );
}
