//! The arguments object of a parameter-style call (`<parameter=k>v</parameter>`,
//! `<arg_key>k</arg_key><arg_value>v</arg_value>`, …), built as the
//! parameters arrive: `{` with the first key, `,` before each next one, the
//! value's JSON, and `}` when the call is dispatched. Every byte goes into
//! the call's argument record once and is never taken back, so the argument
//! deltas are prefixes of the final arguments text.
//!
//! A value whose type is exactly `string` is written as a JSON string while
//! it arrives (escaped on the fly); any other value is collected and
//! converted when it ends (`xml::coerce`).

use crate::call::calls::{Args, Calls, Ctx, Src};
use crate::event::{Diagnostic, DiagnosticKind};
use crate::reason::{Reason, Stop};
use crate::sink::Sink;
use crate::xml::coerce::{coerce, Coerced, Declared};
use crate::xml::escape::{push_json_str, push_json_str_content};

/// The parameter being read.
#[derive(Debug, Default)]
pub(crate) struct Param {
    /// Its key (written into the object when the value begins, so a
    /// later capture may still replace it: `<parameter name="k">` read
    /// after `<parameter`).
    key: String,
    /// The type its own attribute declares (`string="true"`), which takes
    /// precedence over the schema.
    attribute: Option<Declared>,
    /// What its value is declared to be (empty: untyped); set when the
    /// value begins.
    declared: Declared,
    /// The value is being written as a JSON string (only when `declared`
    /// is exactly `string`); otherwise it is collected in `raw`.
    live: bool,
    /// The raw value so far (not live).
    raw: Vec<u8>,
}

/// How a parameter's own type attribute reads.
fn declared_by_attribute(word: &str) -> Declared {
    match word {
        "true" | "string" | "str" => Declared::STRING,
        "false" | "json" => Declared::JSON,
        other => Declared::from_schema(&serde_json::json!({ "type": other })),
    }
}

impl Calls {
    /// A parameter's key.
    pub(crate) fn param_key(&mut self, key: &str) {
        let p = &mut self.cur().param;
        p.key.clear();
        p.key.push_str(key);
        p.attribute = None;
    }

    /// The parameter's own type attribute (`string="true"`, `type="number"`),
    /// which takes precedence over the schema.
    pub(crate) fn param_type(&mut self, word: &str) {
        self.cur().param.attribute = Some(declared_by_attribute(word));
    }

    /// The value begins: opens the object or separates the parameter from
    /// the one before, writes its key, finds its type (its attribute, else
    /// the schema) and, for a string, opens the JSON string.
    pub(crate) fn value_begin(
        &mut self,
        ctx: &mut Ctx,
        out: &mut dyn Sink,
        at: u64,
        src: Src<'_>,
    ) -> Result<(), Stop> {
        let Calls { call, notes, .. } = self;
        let c = call.get_or_insert_with(Default::default);
        match c.args_state {
            Args::Missing => {
                c.span = None;
                c.args.clear();
                c.args.push(b'{');
                c.args_state = Args::Params;
            }
            Args::Params => c.args.push(b','),
            _ => return Err(Stop::fail(Reason::TwoArgs)),
        }
        let p = &mut c.param;
        push_json_str(p.key.as_bytes(), &mut c.args);
        c.args.push(b':');
        let tool = c.name.as_deref().unwrap_or("");
        p.declared = match (p.attribute, &ctx.tools) {
            (Some(d), _) => d,
            (None, Some(tools)) => {
                if tools.has_param(tool, &p.key) == Some(false) {
                    notes.push(Diagnostic {
                        kind: DiagnosticKind::UnknownParameter,
                        offset: at,
                        message: format!(
                            "`{}` is not a parameter of `{tool}`; its value is kept as written",
                            p.key
                        ),
                    });
                }
                tools
                    .param_schema(tool, &p.key)
                    .map(Declared::from_schema)
                    .unwrap_or_default()
            }
            (None, None) => Declared::UNTYPED,
        };
        p.raw.clear();
        p.live = p.declared.is_string_only();
        if p.live {
            c.args.push(b'"');
        }
        self.try_start(ctx, out, at, src)
    }

    /// The next bytes of the value (entities decoded, markup whitespace
    /// trimmed).
    pub(crate) fn value_bytes(&mut self, bytes: &[u8]) {
        let c = self.cur();
        if c.param.live {
            push_json_str_content(bytes, &mut c.args);
        } else {
            c.param.raw.extend_from_slice(bytes);
        }
    }

    /// The value ended: closes the string, or converts what was collected.
    pub(crate) fn value_end(&mut self, at: u64) -> Result<(), Stop> {
        let Calls { call, notes, .. } = self;
        let c = call.get_or_insert_with(Default::default);
        let p = &mut c.param;
        if p.live {
            c.args.push(b'"');
            return Ok(());
        }
        let Ok(raw) = std::str::from_utf8(&p.raw) else {
            return Err(Stop::fail(Reason::ArgsNotUtf8));
        };
        if coerce(raw, p.declared, &mut c.args) == Coerced::Mismatch {
            notes.push(Diagnostic {
                kind: DiagnosticKind::TypeMismatch,
                offset: at,
                message: format!(
                    "the value of `{}` is not of the type its schema declares; it is kept as written",
                    p.key
                ),
            });
        }
        Ok(())
    }

    /// The key of the parameter being read.
    pub(crate) fn param_name(&self) -> &str {
        self.call.as_ref().map_or("", |c| c.param.key.as_str())
    }
}
