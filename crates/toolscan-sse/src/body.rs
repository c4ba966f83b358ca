//! The whole-response rewrite: `choices[i].message.content` parsed, its
//! calls into `message.tool_calls`.

use serde_json::{Map, Value};

use crate::choice::{finish_reason, Choice};
use crate::config::Config;
use crate::deltas::Delta;
use crate::error::BodyError;

/// See [`crate::rewrite_body`].
pub(crate) fn rewrite(body: &[u8], config: &Config) -> Result<Vec<u8>, BodyError> {
    let mut value: Value = serde_json::from_slice(body).map_err(BodyError::NotJson)?;
    let Some(Value::Array(choices)) = value.get_mut("choices") else {
        return Ok(body.to_vec());
    };
    let mut changed = false;
    for (pos, choice) in choices.iter_mut().enumerate() {
        if let Some(choice) = choice.as_object_mut() {
            changed |= rewrite_choice(choice, pos, config);
        }
    }
    if !changed {
        return Ok(body.to_vec());
    }
    serde_json::to_vec(&value).map_err(BodyError::Encode)
}

/// Rewrites one choice; whether it changed.
fn rewrite_choice(choice: &mut Map<String, Value>, pos: usize, config: &Config) -> bool {
    let index = choice
        .get("index")
        .and_then(Value::as_u64)
        .unwrap_or(pos as u64);
    let upstream = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(Value::Object(message)) = choice.get_mut("message") else {
        return false;
    };
    let Some(Value::String(content)) = message.get_mut("content") else {
        return false;
    };
    let content = std::mem::take(content);
    let mut state = Choice::new(config, index);
    let mut pieces = Delta::keeping();
    state.feed(&content, &mut pieces);
    state.finish(upstream.as_deref(), &mut pieces);
    if pieces.calls.is_empty() && pieces.reasoning.is_empty() && pieces.text == content {
        message.insert("content".into(), content.into());
        return false;
    }
    let has_calls = !pieces.calls.is_empty();
    let text = if pieces.text.is_empty() && has_calls {
        Value::Null
    } else {
        Value::String(pieces.text)
    };
    message.insert("content".into(), text);
    if !pieces.reasoning.is_empty() {
        match message.get_mut("reasoning_content") {
            Some(Value::String(r)) => r.push_str(&pieces.reasoning),
            _ => {
                message.insert("reasoning_content".into(), pieces.reasoning.into());
            }
        }
    }
    if has_calls {
        let calls = pieces.calls.into_iter().map(|c| {
            let mut function = Map::new();
            function.insert("name".into(), c.name.into());
            function.insert("arguments".into(), c.arguments.into());
            let mut call = Map::new();
            call.insert("id".into(), c.id.into());
            call.insert("type".into(), "function".into());
            call.insert("function".into(), Value::Object(function));
            Value::Object(call)
        });
        match message.get_mut("tool_calls") {
            Some(Value::Array(native)) => native.extend(calls),
            _ => {
                message.insert("tool_calls".into(), Value::Array(calls.collect()));
            }
        }
        let reason = match upstream.as_deref() {
            Some(r) => finish_reason(r, state.deltas.completed()).to_owned(),
            None => "tool_calls".to_owned(),
        };
        choice.insert("finish_reason".into(), reason.into());
    }
    true
}
