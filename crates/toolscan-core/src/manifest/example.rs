//! A usage example's arguments, made from a tool's parameters schema: the
//! required parameters (or, when none is required, the first one), each
//! with a plausible value — the schema's own example or default, the
//! first of an enum, a value of the string's `format`, a number inside
//! the bounds —, objects and lists filled the same way, one level at a
//! time (at most a few levels deep).

use serde_json::{Map, Number, Value};

/// How deep nested objects and lists are filled before a value stops at
/// an empty one.
const MAX_DEPTH: usize = 6;

/// The example arguments object for a tool's `parameters` schema.
pub(crate) fn arguments(schema: &Value) -> Map<String, Value> {
    match object(schema, 0) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The type a schema names first, leaving out `null` where another is
/// given (`["string", "null"]` is a string); `anyOf`/`oneOf` take their
/// first alternative that is not `null`.
pub(crate) fn main_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(t),
        Some(Value::Array(ts)) => {
            let mut names = ts.iter().filter_map(Value::as_str);
            let all: Vec<&str> = names.by_ref().collect();
            return all.iter().find(|t| **t != "null").or(all.first()).copied();
        }
        _ => {}
    }
    if let Some(alt) = alternative(schema) {
        return main_type(alt);
    }
    if schema.get("properties").is_some() {
        return Some("object");
    }
    if schema.get("items").is_some() {
        return Some("array");
    }
    None
}

/// The first alternative of an `anyOf`/`oneOf` that is not `null`.
pub(crate) fn alternative(schema: &Value) -> Option<&Value> {
    let alts = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))?
        .as_array()?;
    alts.iter()
        .find(|a| a.get("type").and_then(Value::as_str) != Some("null"))
        .or(alts.first())
}

/// The names of an object schema's required properties that it declares.
pub(crate) fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// An example value for `schema`, as the parameter `key`.
fn value(schema: &Value, key: &str, depth: usize) -> Value {
    if let Some(v) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .or_else(|| schema.get("example"))
        .or_else(|| schema.get("default"))
        .or_else(|| schema.get("const"))
        .filter(|v| !v.is_null())
    {
        return v.clone();
    }
    if let Some(v) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.iter().find(|v| !v.is_null()))
    {
        return v.clone();
    }
    if schema.get("type").is_none() {
        if let Some(alt) = alternative(schema) {
            return value(alt, key, depth);
        }
    }
    match main_type(schema) {
        Some("object") => object(schema, depth + 1),
        Some("array") => array(schema, key, depth + 1),
        Some("integer") => integer(schema),
        Some("number") => number(schema),
        Some("boolean") => Value::Bool(true),
        Some("null") => Value::Null,
        _ => string(schema, key),
    }
}

/// An object with its required properties (or its first one, when none
/// is required).
fn object(schema: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    if depth > MAX_DEPTH {
        return Value::Object(out);
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    let required = required(schema);
    let keys: Vec<&String> = if required.is_empty() {
        props.keys().take(1).collect()
    } else {
        props
            .keys()
            .filter(|k| required.contains(&k.as_str()))
            .collect()
    };
    for k in keys {
        out.insert(k.clone(), value(&props[k.as_str()], k, depth));
    }
    Value::Object(out)
}

/// A list of `minItems` items (at least one) made from `items`.
fn array(schema: &Value, key: &str, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Array(Vec::new());
    }
    let n = schema
        .get("minItems")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .clamp(1, 3);
    let item = schema.get("items").cloned().unwrap_or(Value::Null);
    let singular = key
        .strip_suffix('s')
        .filter(|s| !s.is_empty())
        .unwrap_or(key);
    Value::Array(
        (0..n)
            .map(|i| {
                let v = value(&item, singular, depth);
                match (v, i) {
                    (Value::String(s), i) if i > 0 => Value::String(format!("{s} {}", i + 1)),
                    (v, _) => v,
                }
            })
            .collect(),
    )
}

/// An integer inside the bounds: 1 unless they rule it out.
fn integer(schema: &Value) -> Value {
    let min =
        bound(schema, "minimum").or_else(|| bound(schema, "exclusiveMinimum").map(|m| m + 1.0));
    let max =
        bound(schema, "maximum").or_else(|| bound(schema, "exclusiveMaximum").map(|m| m - 1.0));
    let mut v = 1.0_f64;
    if let Some(m) = min {
        v = v.max(m.ceil());
    }
    if let Some(m) = max {
        v = v.min(m.floor());
    }
    // (Within `i64`: the bounds of a schema are small in practice.)
    Value::Number(Number::from(v.clamp(-9.0e15, 9.0e15) as i64))
}

/// A number inside the bounds: 1.5 unless they rule it out.
fn number(schema: &Value) -> Value {
    let min = bound(schema, "minimum").or_else(|| bound(schema, "exclusiveMinimum"));
    let max = bound(schema, "maximum").or_else(|| bound(schema, "exclusiveMaximum"));
    let mut v = 1.5_f64;
    match (min, max) {
        (Some(lo), Some(hi)) => v = lo + (hi - lo) / 2.0,
        (Some(lo), None) if v <= lo => v = lo + 1.5,
        (None, Some(hi)) if v >= hi => v = hi - 1.5,
        _ => {}
    }
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn bound(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

/// A string of the schema's `format`, or a few words naming the
/// parameter.
fn string(schema: &Value, key: &str) -> Value {
    let s = match schema.get("format").and_then(Value::as_str) {
        Some("date") => "2025-01-31".to_owned(),
        Some("date-time") => "2025-01-31T09:30:00Z".to_owned(),
        Some("time") => "09:30:00".to_owned(),
        Some("email") => "alice@example.com".to_owned(),
        Some("uri" | "url" | "iri") => "https://example.com/".to_owned(),
        Some("uuid") => "123e4567-e89b-12d3-a456-426614174000".to_owned(),
        Some("ipv4") => "192.0.2.1".to_owned(),
        Some("hostname") => "example.com".to_owned(),
        _ => {
            let words = key.replace(['_', '-'], " ");
            let words = words.trim();
            if words.is_empty() {
                "example".to_owned()
            } else {
                format!("example {words}")
            }
        }
    };
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = schema.get("maxLength").and_then(Value::as_u64);
    let mut s = s;
    while (s.chars().count() as u64) < min.min(256) {
        s.push('x');
    }
    if let Some(max) = max {
        s = s.chars().take(max as usize).collect();
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_parameters_with_values_of_their_kind() {
        let schema = json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 3, "maximum": 10},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "when": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "stop": {"type": "object", "properties": {
                "name": {"type": "string"}, "lat": {"type": "number"}}, "required": ["lat"]},
            "note": {"type": ["string", "null"]},
            "left_out": {"type": "string"}},
            "required": ["city", "unit", "days", "ratio", "when", "tags", "stop", "note"]});
        assert_eq!(
            Value::Object(arguments(&schema)),
            json!({"city": "example city", "unit": "celsius", "days": 3, "ratio": 0.5,
                   "when": "2025-01-31", "tags": ["example tag"], "stop": {"lat": 1.5},
                   "note": "example note"})
        );
    }

    #[test]
    fn no_required_parameter_gives_the_first_one() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}});
        assert_eq!(arguments(&schema).len(), 1);
        assert_eq!(arguments(&json!(null)), Map::new());
    }

    #[test]
    fn recursion_stops() {
        let mut s = json!({"type": "object", "properties": {}, "required": ["a"]});
        for _ in 0..20 {
            s = json!({"type": "object", "properties": {"a": s}, "required": ["a"]});
        }
        let _ = arguments(&s);
    }
}
