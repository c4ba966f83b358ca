//! The input being run, written to a file before it runs
//! (`TOOLSCAN_FUZZ_LAST_INPUT=PATH`): a crash that kills the process
//! before libFuzzer can write its artifact (a stack overflow, whose
//! SIGSEGV libFuzzer's handler cannot take without an alternate stack)
//! still leaves the input behind. Unset (the default), nothing is written.

use std::sync::OnceLock;

fn path() -> Option<&'static str> {
    static PATH: OnceLock<Option<String>> = OnceLock::new();
    PATH.get_or_init(|| std::env::var("TOOLSCAN_FUZZ_LAST_INPUT").ok())
        .as_deref()
}

/// Writes `data` to the file, replacing the last input (write errors are
/// ignored: this is a debugging aid, not a check).
pub fn note(data: &[u8]) {
    if let Some(p) = path() {
        let _ = std::fs::write(p, data);
    }
}
