//! What a format is: a name, who writes it, and its openers — each a
//! marker that opens a block and a small program of steps that says what
//! the block holds (where the name is, how the arguments are encoded, what
//! ends the call).
//!
//! Every built-in format is such a declaration over the same machinery,
//! and so is a user's, written as a format file (`format_file/`): the one
//! public form of the language. [`Format`] is public as a value to load,
//! inspect, write back and register; the steps (`step.rs`, one table) and
//! what they carry (`payload.rs`) are the crate's own, and are re-exported
//! here for the catalogue and the engine.

pub(crate) use crate::lang::hint::{Hint, Style, TypeWords};
pub(crate) use crate::lang::payload::{
    ByteSet, CallKeys, Capture, Close, Container, ElementEnd, Field, JsonStep, Label, Lit, PyArgs,
    PyStep, PyStrings, Shape, Trim, ValueStep,
};
pub(crate) use crate::lang::results::Results;
pub(crate) use crate::lang::step::Step;

/// How much an opening marker says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Trust {
    /// Dedicated tool-call markup: a block that fails to parse is reported.
    Definite,
    /// Markup that often wraps other things (a code fence, `<response>`):
    /// until a call is recognised in it, a failed block is silently text.
    Tentative,
    /// Like tentative, and so common (a bare `{`) that `auto` leaves it out.
    Bare,
}

/// A marker that opens a block, and the block's program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Opener {
    /// The marker.
    pub marker: Lit,
    /// The marker only counts at the start of a line (or of the stream).
    pub line_start: bool,
    /// There is no marker: the program runs at the start of the stream
    /// (a completion that begins inside the format's markup, such as
    /// Functionary's first recipient line). `marker` is empty then. A
    /// grammar has at most one; `auto` leaves it out.
    pub stream_start: bool,
    /// How much the marker says.
    pub trust: Trust,
    /// The marker's bytes are also the start of the body (a bare `{`), so
    /// the program reads them again.
    pub replay: bool,
    /// The program.
    pub program: Vec<Step>,
}

impl Opener {
    /// A definite marker.
    pub(crate) fn definite(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            marker: Lit::new(marker),
            line_start: false,
            stream_start: false,
            trust: Trust::Definite,
            replay: false,
            program,
        }
    }

    /// A tentative marker.
    pub(crate) fn tentative(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            trust: Trust::Tentative,
            ..Opener::definite(marker, program)
        }
    }

    /// A bare marker whose bytes start the body (`{`, `[`).
    pub(crate) fn bare(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            trust: Trust::Bare,
            replay: true,
            ..Opener::definite(marker, program)
        }
    }

    /// A program that runs at the start of the stream, before any byte
    /// (see [`Opener::stream_start`]); tentative: until a call shows, what
    /// it read is text, silently.
    pub(crate) fn stream_start(program: Vec<Step>) -> Opener {
        Opener {
            stream_start: true,
            trust: Trust::Tentative,
            ..Opener::definite("", program)
        }
    }

    /// Makes the marker ASCII-case-insensitive.
    pub(crate) fn case_insensitive(mut self) -> Opener {
        self.marker.case_insensitive = true;
        self
    }

    /// Sets the trust (a definite marker may be weakened to tentative).
    pub(crate) fn with_trust(mut self, trust: Trust) -> Opener {
        self.trust = trust;
        self
    }

    /// Anchors the marker at the start of a line.
    pub(crate) fn at_line_start(mut self) -> Opener {
        self.line_start = true;
        self
    }
}

/// A named format: its openers and where it comes from. A format is
/// loaded from its JSON description ([`Format::from_json`], the format
/// files of [`format_file`](crate::format_file)), inspected, written back
/// ([`Format::to_json`]) and registered
/// ([`Registry::register`](crate::Registry::register)); the built-in ones
/// are in [`Registry::builtin`](crate::Registry::builtin).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub(crate) name: String,
    pub(crate) models: String,
    pub(crate) description: String,
    pub(crate) openers: Vec<Opener>,
    /// How tool results are written, where the format's chat template
    /// defines it.
    pub(crate) results: Option<Results>,
    /// The format's grammar on its own, compiled by its first
    /// [`render`](Format::render) (which reads each candidate back with
    /// it); empty until then, and emptied when the format changes.
    pub(crate) alone: Alone,
}

/// The grammar of a format on its own, compiled once by the renderer. It
/// is a cache: two formats are equal whatever their caches hold. Its value
/// is type-erased (the renderer's `Arc<Grammar>`), so that a format does
/// not depend on the grammar compiled from it.
#[derive(Clone, Default)]
pub(crate) struct Alone(std::sync::OnceLock<Erased>);

/// What [`Alone`] holds.
pub(crate) type Erased = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl Alone {
    /// The value, made by `make` the first time.
    pub(crate) fn get_or_try_init<E>(
        &self,
        make: impl FnOnce() -> Result<Erased, E>,
    ) -> Result<Erased, E> {
        if let Some(v) = self.0.get() {
            return Ok(v.clone());
        }
        let v = make()?;
        Ok(self.0.get_or_init(|| v).clone())
    }
}

impl PartialEq for Alone {
    fn eq(&self, _: &Alone) -> bool {
        true
    }
}

impl Eq for Alone {}

impl std::fmt::Debug for Alone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "compiled"
        } else {
            "not compiled"
        })
    }
}

impl Format {
    /// A format with no openers yet: its name, who writes it, one line on
    /// what it looks like.
    pub(crate) fn new(name: &str, models: &str, description: &str) -> Format {
        Format {
            name: name.into(),
            models: models.into(),
            description: description.into(),
            openers: Vec::new(),
            results: None,
            alone: Alone::default(),
        }
    }

    /// Says how the format writes tool results.
    pub(crate) fn tool_results(mut self, results: Results) -> Format {
        self.results = Some(results);
        self.alone = Alone::default();
        self
    }

    /// Adds an opener.
    pub(crate) fn opener(mut self, opener: Opener) -> Format {
        self.openers.push(opener);
        self.alone = Alone::default();
        self
    }

    /// The format's name (`--format NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Who writes it: model families or tools (e.g. `Qwen2.5, Qwen3`).
    pub fn models(&self) -> &str {
        &self.models
    }

    /// One line on what it looks like.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The opening markers, as display text (`^` before a marker that
    /// counts only at a line start; `(stream start)` for a program that
    /// runs where the stream starts).
    pub fn markers(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for o in &self.openers {
            if o.stream_start {
                // No marker: the program runs where the stream starts.
                if !v.iter().any(|m| m == "(stream start)") {
                    v.push("(stream start)".into());
                }
                continue;
            }
            let mut m = o.marker.display();
            if o.line_start {
                m = format!("^{m}");
            }
            if !v.contains(&m) {
                v.push(m);
            }
        }
        v
    }
}
