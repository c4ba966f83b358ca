//! Running a binary (the `toolscan` command line) with input on stdin.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `exe ARGS` in `dir` (or the current directory) with `stdin` piped
/// in; returns its output, whatever its exit status.
///
/// The input is written from a thread, so a large input cannot deadlock
/// against a large output, and a binary that exits before reading it all
/// (a usage error) is not an error here.
pub fn run(exe: &str, dir: Option<&Path>, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().expect("the binary starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("the binary exits");
    writer.join().expect("the writer thread ends");
    out
}

/// Like [`run`], and asserts that it exited 0; returns its stdout.
pub fn run_ok(exe: &str, dir: Option<&Path>, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(exe, dir, args, stdin);
    assert!(
        out.status.success(),
        "{exe} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
