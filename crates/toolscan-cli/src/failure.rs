//! How `toolscan` fails: exit statuses and one-line messages on stderr.
//!
//! - 0: the input was read, whatever it held;
//! - 1: the output could not be written: disk full, or a reader that went
//!   away (`| head`, `| head -c0`: a broken pipe), reported as one line
//!   on stderr (`toolscan: cannot write output: …`), never a panic — as
//!   GNU tools do when SIGPIPE does not kill them; whoever reads the
//!   output cut short learns it was cut;
//! - 2: bad usage, an unreadable input or tools file, an invalid tools array.

use std::io::{self, Write};
use std::process::ExitCode;

/// Why a command stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Bad usage or unreadable input: exit 2.
    Usage(String),
    /// Writing stdout failed.
    Output(io::Error),
    /// The input was read but cannot be done (a response the format cannot
    /// render): exit 1.
    Failed(String),
}

impl Failure {
    /// Reports the failure on stderr and gives the exit status.
    pub fn report(self) -> ExitCode {
        match self {
            Failure::Usage(message) => {
                error(&message);
                ExitCode::from(2)
            }
            Failure::Output(e) => {
                error(&format!("cannot write output: {e}"));
                ExitCode::from(1)
            }
            Failure::Failed(message) => {
                error(&message);
                ExitCode::from(1)
            }
        }
    }
}

/// Prints `toolscan: MESSAGE` on one line of stderr.
pub fn error(message: &str) {
    say("", message);
}

/// Prints `toolscan: warning: MESSAGE` on one line of stderr.
pub fn warn(message: &str) {
    say("warning: ", message);
}

/// Writes one line to stderr, never panicking (a closed stderr is ignored)
/// and folding any line breaks in `message` into spaces.
fn say(prefix: &str, message: &str) {
    let line = one_line(message);
    let _ = writeln!(io::stderr().lock(), "toolscan: {prefix}{line}");
}

/// `message` with runs of whitespace containing a line break turned into one
/// space, and surrounding whitespace trimmed.
pub fn one_line(message: &str) -> String {
    message
        .trim()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_lines() {
        assert_eq!(one_line("  a\n\n  b \r\nc\n"), "a b c");
        assert_eq!(one_line("plain"), "plain");
    }
}
