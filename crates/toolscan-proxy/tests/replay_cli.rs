//! The `toolscan-replay` binary's command line: `--help`, bad usage, and
//! that each flag reaches the server it starts (a real process on
//! loopback, spoken to over plain HTTP/1.1).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output};
use std::time::Duration;

use common::ReplayProcess;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sse");

fn replay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolscan-replay"))
        .args(args)
        .output()
        .expect("toolscan-replay runs")
}

/// A running `toolscan-replay`; killed when dropped.
struct Server {
    _process: ReplayProcess,
    addr: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let process = ReplayProcess::start(args);
        let addr = process.url["http://".len()..].to_owned();
        Server {
            _process: process,
            addr,
        }
    }

    /// One request on a fresh connection; the whole answer, headers and
    /// body (`Connection: close`, so the server ends it), or what came
    /// before the server broke the connection.
    fn request(&self, method: &str, path: &str, body: &str) -> String {
        let mut tcp = TcpStream::connect(&self.addr).expect("connects");
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            tcp,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut answer = Vec::new();
        // A broken connection is an error here; what came before it stays
        // in `answer`.
        let _ = tcp.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }
}

#[test]
fn replay_help_names_every_flag_and_exits_zero() {
    let out = replay(&["--help"]);
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Usage: toolscan-replay"), "{help}");
    for flag in [
        "--dir <DIR>",
        "--delay-ms <N>",
        "--default <NAME>",
        "--die-after <N>",
        "--stamp",
        "--listen <ADDR>",
        "--version",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    // The defaults are told.
    assert!(help.contains("examples/data/sse"), "{help}");
    assert!(help.contains("127.0.0.1:0"), "{help}");
    assert!(help.contains("proxy-qwen3-weather"), "{help}");
}

#[test]
fn replay_bad_usage_exits_two_naming_the_argument() {
    for (args, named) in [
        (&["--bogus"][..], "--bogus"),
        (&["--delay-ms", "soon"][..], "soon"),
        (&["--die-after", "-3"][..], "-3"),
        (&["--listen"][..], "--listen"),
    ] {
        let out = replay(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(named), "{args:?}: stderr {err:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn replay_serves_the_recordings_of_dir() {
    let server = Server::start(&["--dir", DATA, "--delay-ms", "0"]);
    let models = server.request("GET", "/v1/models", "");
    assert!(models.starts_with("HTTP/1.1 200"), "{models}");
    for name in ["proxy-qwen3-weather", "qwen3-weather", "two-choices"] {
        assert!(models.contains(&format!("\"{name}\"")), "{name}: {models}");
    }
}

#[test]
fn replay_default_picks_the_recording_of_an_unknown_model() {
    // qwen3-weather.sse's chunks have this id; the built-in default
    // (proxy-qwen3-weather) has another.
    let id = "chatcmpl-7f3c9a2e41b84d0f9e6a1c5b2d8e4f60";
    let request = r#"{"model": "no-such-model", "stream": true}"#;

    let server = Server::start(&["--dir", DATA, "--delay-ms", "0"]);
    let answer = server.request("POST", "/v1/chat/completions", request);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("chatcmpl-proxy-replay-1"), "{answer}");
    assert!(!answer.contains(id));

    let server = Server::start(&[
        "--dir",
        DATA,
        "--delay-ms",
        "0",
        "--default",
        "qwen3-weather",
    ]);
    let answer = server.request("POST", "/v1/chat/completions", request);
    assert!(answer.contains(id), "{answer}");
    assert!(answer.contains("data: [DONE]"), "{answer}");
}

#[test]
fn replay_stamp_and_die_after_reach_the_server() {
    let server = Server::start(&[
        "--dir",
        DATA,
        "--delay-ms",
        "0",
        "--stamp",
        "--die-after",
        "2",
        "--listen",
        "127.0.0.1:0",
    ]);
    let whole = server.request(
        "POST",
        "/v1/chat/completions",
        r#"{"model": "qwen3-weather", "stream": true}"#,
    );
    let events = whole.matches("data: {").count();
    assert!(events > 2, "{whole}");
    assert_eq!(
        whole.matches("\"replay_sent_us\":").count(),
        events,
        "{whole}"
    );

    let cut = server.request(
        "POST",
        "/v1/chat/completions",
        r#"{"model": "die-midway", "stream": true}"#,
    );
    assert_eq!(cut.matches("data: {").count(), 2, "{cut}");
    assert!(!cut.contains("[DONE]"), "{cut}");
}
