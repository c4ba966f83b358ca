//! The arguments object of a parameter-style call (`<parameter=k>v</parameter>`,
//! `<arg_key>k</arg_key><arg_value>v</arg_value>`, …), built as the
//! parameters arrive: `{` with the first key, `,` before each next one, the
//! value's JSON, and `}` when the call is dispatched. Every byte goes into
//! the call's argument record (or a segment of it) once and is never taken
//! back, so the argument deltas are prefixes of the final arguments text.
//!
//! A value whose type is exactly `string` is a JSON string while it arrives:
//! its bytes, as they stand in the pending buffer, are a span of it that is
//! escaped as the deltas are made (`Seg`), not a copy; bytes that are not
//! the input's (entities decoded) are escaped into the record. Any other
//! value is collected and converted when it ends (`read::typing`).

use serde_json::Value;

use crate::engine::call::calls::{Args, BlockCalls, HeldBytes, Seg, Session};
use crate::engine::call::param::{declared_by_attribute, Frame, NULL};
use crate::event::{Diagnostic, DiagnosticKind};
use crate::offset::Offset;
use crate::read::escape::push_json_str_content;
use crate::read::reason::{Reason, Stop};
use crate::read::typing::{coerce, Coerced, Declared};
use crate::read::value::ValueOut;
use crate::sink::Sink;

impl BlockCalls {
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

    /// The value begins: finds its type (its attribute, else the schema of
    /// its container), and starts the call.
    /// `null`: the text `null` is JSON null whatever the type.
    pub(crate) fn value_begin(
        &mut self,
        session: &mut Session,
        out: &mut dyn Sink,
        at: Offset,
        null: bool,
        src: HeldBytes<'_>,
    ) -> Result<(), Stop> {
        let BlockCalls { call, notes, .. } = self;
        let c = call.get_or_insert_with(Default::default);
        if c.span.is_some() || !matches!(c.args_state, Args::Missing | Args::Params) {
            return Err(Stop::fail(Reason::TwoArgs));
        }
        c.span = None;
        let tool = c.name.as_deref().unwrap_or("");
        let p = &mut c.param;
        // A parameter named again: the first value has streamed, so it is
        // kept, and this one is dropped.
        let repeated = p.frames.is_empty() && p.seen.contains(&p.key);
        if p.frames.is_empty() && !repeated {
            p.seen.insert(p.key.clone());
        }
        p.dropped = repeated || p.frames.last().is_some_and(|f| f.dropped);
        if repeated {
            notes.push(Diagnostic {
                kind: DiagnosticKind::DuplicateParameter,
                offset: at.get(),
                message: format!(
                    "`{}` is named again in the call; its first value is kept and this one dropped",
                    p.key
                ),
            });
        }
        let schema: Option<&Value> = match (p.frames.last(), &session.tools) {
            (Some(f), _) => f.schema.as_ref().and_then(|s| {
                if f.array {
                    s.get("items")
                } else {
                    s.get("properties").and_then(|props| props.get(&p.key))
                }
            }),
            (None, Some(tools)) => {
                if !repeated && tools.has_param(tool, &p.key) == Some(false) {
                    notes.push(Diagnostic {
                        kind: DiagnosticKind::UnknownParameter,
                        offset: at.get(),
                        message: format!(
                            "`{}` is not a parameter of `{tool}`; its value is kept as written",
                            p.key
                        ),
                    });
                }
                tools.param_schema(tool, &p.key)
            }
            (None, None) => None,
        };
        p.declared = match p.attribute {
            Some(d) => d,
            None => schema.map(Declared::from_schema).unwrap_or_default(),
        };
        p.schema = schema
            .filter(|s| s.get("properties").is_some() || s.get("items").is_some())
            .cloned();
        p.raw.clear();
        p.span = None;
        p.slot = false;
        p.live = p.declared.is_string_only();
        p.null = null;
        self.try_start(session, out, at, src)
    }

    /// The value ended: closes the string, or converts what was collected
    /// (the value's bytes are still in the pending buffer, `src`).
    pub(crate) fn value_end(&mut self, at: Offset, src: HeldBytes<'_>) -> Result<(), Stop> {
        let BlockCalls { call, notes, .. } = self;
        let c = call.get_or_insert_with(Default::default);
        let p = &mut c.param;
        let span = p.span.take();
        if p.dropped {
            // A repeated parameter: nothing of it is written.
            p.raw.clear();
            return Ok(());
        }
        let is_null = p.null
            && match span {
                Some((s, e)) => src.between(s, e) == NULL,
                None => p.raw == NULL,
            };
        if is_null {
            p.live = false;
            p.write_slot(&mut c.args, &mut c.args_state);
            c.args.extend_from_slice(NULL);
            return Ok(());
        }
        if p.live {
            // What waited as a possible `null` is the string.
            let held = !p.slot;
            p.write_slot(&mut c.args, &mut c.args_state);
            if held {
                push_json_str_content(&p.raw, &mut c.args);
            }
            c.args.push(b'"');
            return Ok(());
        }
        p.write_slot(&mut c.args, &mut c.args_state);
        let raw = match span {
            Some((s, e)) => src.between(s, e),
            None => &p.raw,
        };
        let Ok(raw) = std::str::from_utf8(raw) else {
            return Err(Stop::fail(Reason::ArgsNotUtf8));
        };
        if coerce(raw, p.declared, &mut c.args) == Coerced::Mismatch {
            notes.push(Diagnostic {
                kind: DiagnosticKind::TypeMismatch,
                offset: at.get(),
                message: format!(
                    "the value of `{}` is not of the type its schema declares; it is kept as written",
                    p.key
                ),
            });
        }
        Ok(())
    }

    /// The value that began turned out to be a container (an object of
    /// nested parameters, or a list of items): opens it. Nesting is bounded
    /// by `max_depth` (`Limits::max_depth`) as in JSON arguments, the
    /// arguments object counting as one level: past it the block fails
    /// with a limit diagnostic instead of growing its frames.
    pub(crate) fn open_container(&mut self, array: bool, max_depth: usize) -> Result<(), Stop> {
        let c = self.cur();
        let p = &mut c.param;
        if p.slot || !p.raw.is_empty() || p.span.is_some() {
            return Err(Stop::fail(Reason::ArgsNotObject));
        }
        if p.frames.len().saturating_add(1) >= max_depth {
            return Err(Stop::fail(Reason::TooDeep { limit: max_depth }));
        }
        if p.dropped {
            // A repeated parameter's container: nothing of it is written.
            p.frames.push(Frame {
                array,
                first: true,
                schema: None,
                dropped: true,
            });
            return Ok(());
        }
        p.live = false;
        p.write_slot(&mut c.args, &mut c.args_state);
        c.args.push(if array { b'[' } else { b'{' });
        p.frames.push(Frame {
            array,
            first: true,
            schema: p.schema.take(),
            dropped: false,
        });
        Ok(())
    }

    /// Closes the innermost container; fails if none is open.
    pub(crate) fn close_container(&mut self) -> Result<(), Stop> {
        let c = self.cur();
        let Some(f) = c.param.frames.pop() else {
            return Err(Stop::fail(Reason::Unbalanced { found: b'<' }));
        };
        if f.dropped {
            return Ok(());
        }
        c.args.push(if f.array { b']' } else { b'}' });
        Ok(())
    }

    /// The key of the parameter being read.
    pub(crate) fn param_name(&self) -> &str {
        self.call.as_ref().map_or("", |c| c.param.key.as_str())
    }
}

impl ValueOut for BlockCalls {
    fn value_bytes(&mut self, bytes: &[u8], at: Option<Offset>, src: HeldBytes<'_>) {
        if bytes.is_empty() {
            return;
        }
        let c = self.cur();
        let p = &mut c.param;
        if p.dropped {
            return;
        }
        if p.live {
            if p.null && !p.slot {
                // Not written while it may still be `null`.
                let held = p.raw.len();
                if NULL.get(held..held + bytes.len()) == Some(bytes) {
                    p.raw.extend_from_slice(bytes);
                    return;
                }
                p.write_slot(&mut c.args, &mut c.args_state);
                push_json_str_content(&p.raw, &mut c.args);
                p.raw.clear();
            }
            p.write_slot(&mut c.args, &mut c.args_state);
            let Some(a) = at else {
                // Bytes that are not the input's as they stand (entities
                // decoded): escaped into the record.
                push_json_str_content(bytes, &mut c.args);
                return;
            };
            // Bytes of the input as they stand: a span of it, escaped only
            // as the deltas are made.
            let end = a.after(bytes.len());
            match c.segs.last_mut() {
                Some(s) if s.at == c.args.len() && s.to == a => s.to = end,
                _ => c.segs.push(Seg {
                    at: c.args.len(),
                    from: a,
                    to: end,
                }),
            }
            return;
        }
        let end = at.map(|a| a.after(bytes.len()));
        match (p.span, at) {
            // The first bytes, or the next ones of the span.
            (None, Some(a)) if p.raw.is_empty() => p.span = Some((a, a)),
            (Some((_, e)), Some(a)) if a == e => {}
            // Not contiguous: the value is copied from here on.
            (Some((s, e)), _) => {
                p.raw.extend_from_slice(src.between(s, e));
                p.span = None;
            }
            (None, _) => {}
        }
        match (&mut p.span, end) {
            (Some((_, e)), Some(end)) => *e = end,
            _ => p.raw.extend_from_slice(bytes),
        }
    }
}
