//! The parameter being read in a parameter-style body (its key, declared
//! type, raw value so far) and the objects and arrays open around it.

use std::collections::HashSet;

use serde_json::Value;

use crate::engine::call::args::Args;
use crate::offset::Offset;
use crate::read::escape::push_json_str;
use crate::read::typing::Declared;

/// The parameter being read, and the containers open around it.
#[derive(Debug, Default)]
pub(crate) struct Param {
    /// Its key (a later capture may still replace it: `<parameter
    /// name="k">` read after `<parameter`).
    pub(super) key: String,
    /// The type its own attribute declares (`string="true"`), which takes
    /// precedence over the schema.
    pub(super) attribute: Option<Declared>,
    /// What its value is declared to be (empty: untyped); set when the
    /// value begins.
    pub(super) declared: Declared,
    /// The schema of the parameter, when the value may turn out to be a
    /// container of parameters (its members are typed by it).
    pub(super) schema: Option<Value>,
    /// The separator and the key were written (the value's first byte, its
    /// end or a container made them due; until then nothing of it is in
    /// the arguments).
    pub(super) slot: bool,
    /// The value is being written as a JSON string (only when `declared`
    /// is exactly `string`); otherwise it is collected in `raw`.
    pub(super) live: bool,
    /// The text `null` is JSON null whatever `declared` says: a live
    /// string's first bytes wait in `raw` while they may still be `null`.
    pub(super) null: bool,
    /// The raw value so far (not live), when it is not [`Param::span`]:
    /// its bytes were not handed on as they stand in the pending buffer
    /// (entities decoded, a guard skipped), so they are copied here.
    pub(super) raw: Vec<u8>,
    /// The raw value so far (not live), as the absolute offsets of a span
    /// of the pending buffer, which holds the block's bytes anyway: while
    /// the value's bytes come as they stand there, nothing is copied, so a
    /// long value costs its bytes once, not twice.
    pub(super) span: Option<(Offset, Offset)>,
    /// Objects and arrays open inside the arguments object, innermost
    /// last (nested `<arg>` objects, `<item>` lists).
    pub(super) frames: Vec<Frame>,
    /// The keys of the arguments object written so far (its own, not
    /// those of nested objects): one set per call, so a repeated key is
    /// found in one lookup.
    pub(super) seen: HashSet<String>,
    /// The value is a parameter named before in the call (or inside one):
    /// nothing of it is written — the first value has already streamed.
    pub(super) dropped: bool,
}

/// An object or array open inside the arguments.
#[derive(Debug)]
pub(super) struct Frame {
    /// An array (its members have no key).
    pub(super) array: bool,
    /// No member was written yet.
    pub(super) first: bool,
    /// Its schema: members are typed by its `properties` or `items`.
    pub(super) schema: Option<Value>,
    /// It is the value of a repeated parameter (or inside one): nothing of
    /// it is written.
    pub(super) dropped: bool,
}

/// The text that is JSON null for a value that may be null whatever its
/// type ([`Param::null`]).
pub(super) const NULL: &[u8] = b"null";

/// How a parameter's own type attribute reads.
pub(super) fn declared_by_attribute(word: &str) -> Declared {
    match word {
        "true" | "string" | "str" => Declared::STRING,
        "false" | "json" => Declared::JSON,
        other => Declared::from_schema(&serde_json::json!({ "type": other })),
    }
}

impl Param {
    /// Whether a nested container is still open.
    pub(crate) fn frames_open(&self) -> bool {
        !self.frames.is_empty()
    }

    /// Writes what goes before the value: `{` or `,`, and the key unless
    /// the innermost container is an array.
    ///
    /// Called only after `BlockCalls::value_begin`, which checked that the
    /// arguments are parameters (or none yet).
    pub(super) fn write_slot(&mut self, args: &mut Vec<u8>, state: &mut Args) {
        if self.slot || self.dropped {
            return;
        }
        self.slot = true;
        let keyed = match self.frames.last_mut() {
            None => {
                match state {
                    Args::Missing => {
                        args.clear();
                        args.push(b'{');
                        *state = Args::Params;
                    }
                    Args::Params => args.push(b','),
                    // `value_begin` checked the arguments are parameters;
                    // were they not, nothing is written and the call is
                    // left unfinished: `dispatch` refuses it (a typed
                    // failure, never a panic).
                    _ => {
                        *state = Args::Written;
                        return;
                    }
                }
                true
            }
            Some(f) => {
                if !std::mem::replace(&mut f.first, false) {
                    args.push(b',');
                }
                !f.array
            }
        };
        if keyed {
            push_json_str(self.key.as_bytes(), args);
            args.push(b':');
        }
        if self.live {
            args.push(b'"');
        }
    }
}
