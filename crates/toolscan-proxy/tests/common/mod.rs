//! What the proxy's test suites share: the `toolscan-replay` binary run as
//! a real upstream process.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `toolscan-replay` (started with `args`), killed when dropped.
pub struct ReplayProcess {
    child: Child,
    /// Its URL, `http://127.0.0.1:PORT`, the first line it prints.
    pub url: String,
}

impl ReplayProcess {
    pub fn start(args: &[&str]) -> ReplayProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolscan-replay"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("toolscan-replay starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("first line");
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        ReplayProcess { child, url }
    }
}

impl Drop for ReplayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
