//! Command-line definitions (clap derive): the `parse` and `formats`
//! subcommands of contract §3, with their options.
//!
//! Everything that can be checked without touching the file system is checked
//! here, so that clap reports it as a usage error (exit status 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::chunking::ChunkPlan;

/// `toolscan`: streaming extraction of tool calls from LLM output.
#[derive(Debug, Parser)]
#[command(name = "toolscan", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse model output into tool-call events (JSON Lines on stdout).
    Parse(ParseArgs),
    /// List the known formats with their catalogue entries and markers.
    Formats(FormatsArgs),
}

/// Options of `toolscan parse`.
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Format name (see `toolscan formats`), or `auto` to detect it from the
    /// content. Default: `auto`, unless `--model` names a known model.
    /// Takes precedence over `--model`.
    #[arg(long, value_name = "NAME|auto")]
    pub format: Option<String>,

    /// Pick the format from a model id, e.g. `Qwen/Qwen3-8B`. An unknown id
    /// falls back to `auto` with a warning.
    #[arg(long, value_name = "MODEL_ID")]
    pub model: Option<String>,

    /// OpenAI-style `tools` array (JSON file): types untyped argument values
    /// and flags unknown tool names.
    #[arg(long, value_name = "TOOLS.json")]
    pub tools: Option<PathBuf>,

    /// Separate reasoning (`<think>…</think>`, Harmony analysis) into
    /// `reasoning` events and a `"reasoning"` field.
    #[arg(long)]
    pub reasoning: bool,

    /// Feed the input in pieces of N bytes, or of random sizes 1..=64 drawn
    /// from SEED (`random:SEED`). Default: as it is read.
    #[arg(long, value_name = "N|random:SEED")]
    pub chunk: Option<ChunkPlan>,

    /// `events`: one JSON object per event per line; `final`: one object
    /// with the whole response.
    #[arg(long, value_enum, default_value_t = Output::Events)]
    pub output: Output,

    /// How ids are minted for calls whose format carries none. `seeded`
    /// (the default) gives reproducible output.
    #[arg(long, value_enum, default_value_t = Ids::Seeded)]
    pub ids: Ids,

    /// Input file; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,
}

/// Options of `toolscan formats`.
#[derive(Debug, Args)]
pub struct FormatsArgs {
    /// One JSON object per format per line instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `toolscan parse` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One JSON object per event per line.
    Events,
    /// One JSON object: text, tool_calls, diagnostics, finish_reason.
    Final,
}

/// How call ids are minted when the format carries none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Ids {
    /// `call_` + 24 alphanumerics from a fixed seed (reproducible).
    Seeded,
    /// `call_` + 24 alphanumerics from a random seed.
    Random,
    /// Mistral's 9 alphanumerics, from a fixed seed (reproducible).
    Mistral,
}

impl Ids {
    /// The core's minting scheme for this choice.
    pub fn mint(self) -> toolscan_core::IdMint {
        match self {
            Ids::Seeded => toolscan_core::IdMint::Seeded(0),
            Ids::Random => toolscan_core::IdMint::Random,
            Ids::Mistral => toolscan_core::IdMint::Mistral(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let cli = Cli::try_parse_from(["toolscan", "parse"]).unwrap();
        let Command::Parse(p) = cli.command else {
            panic!("expected parse");
        };
        assert_eq!(p.format, None);
        assert_eq!(p.output, Output::Events);
        assert_eq!(p.ids, Ids::Seeded);
        assert_eq!(p.chunk, None);
        assert!(!p.reasoning);
        assert_eq!(p.input, None);
    }

    #[test]
    fn usage_errors_exit_2() {
        for argv in [
            &["toolscan", "parse", "--bogus"][..],
            &["toolscan", "parse", "--chunk", "0"],
            &["toolscan", "parse", "--chunk", "random:x"],
            &["toolscan", "parse", "--output", "yaml"],
            &["toolscan", "nope"],
        ] {
            let err = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{argv:?}");
        }
    }
}
