use toolscan::{render::Call, Registry};
#[test]
fn explore() {
    let reg = Registry::builtin();
    let calls = vec![
        Call::new(
            "get_weather",
            &serde_json::json!({"city": "Zürich", "unit": "celsius"}),
        )
        .with_id("abcDEF123"),
        Call::new(
            "search",
            &serde_json::json!({"query": "q \"x\"", "filters": {"max": 3, "tags": ["a"]}}),
        )
        .with_id("xyzXYZ789"),
    ];
    for f in reg.formats() {
        for n in [1, 2] {
            match f.render("Let me check.", &calls[..n], None) {
                Ok(s) => eprintln!("{} [{n}]: {:?}", f.name(), s),
                Err(e) => eprintln!("{} [{n}]: ERR {e}", f.name()),
            }
        }
    }
}
