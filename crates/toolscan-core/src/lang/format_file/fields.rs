//! Reading the fields of a JSON object, each error naming its field: the
//! walker every part of a description is read with; and [`Payload`], what
//! a step's payload does to be read from its step's object and written
//! back.

use serde_json::{Map, Value};

use crate::error::{child, FormatFileError};

/// One JSON object of a description and where it is.
pub(crate) struct Obj<'a> {
    /// The object's members.
    map: &'a Map<String, Value>,
    /// The object's JSON pointer (empty for the root).
    path: String,
}

/// The JSON form of what a step carries (its payload), in the object
/// that holds the step's kind key (`{"lit": "</call>"}`,
/// `{"capture": "name", "until": [...]}`). The table of steps (`step.rs`)
/// reads and writes every step through this; a step without a payload is
/// a bare string and needs nothing.
pub(crate) trait Payload: Sized {
    /// The keys the step's object may hold besides its kind (any other is
    /// an error naming it).
    const MODIFIERS: &'static [&'static str] = &[];

    /// The payload of the step whose kind key is `kind`, from its object
    /// (only `kind` and [`Payload::MODIFIERS`] are in it).
    fn read(o: &Obj<'_>, kind: &str) -> Result<Self, FormatFileError>;

    /// Writes the payload into the step's object: `kind` first, then the
    /// modifiers that differ from their defaults. `at` is the step's JSON
    /// pointer, for errors (a literal that is not UTF-8 text).
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError>;
}

/// The JSON type of a value, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Obj<'a> {
    /// `v`, which must be an object, found at `path`.
    pub(crate) fn new(v: &'a Value, path: String) -> Result<Obj<'a>, FormatFileError> {
        match v {
            Value::Object(map) => Ok(Obj { map, path }),
            other => Err(FormatFileError::new(
                path,
                format!("must be an object, not {}", kind(other)),
            )),
        }
    }

    /// The object's own pointer.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The first member's key, if any.
    pub(crate) fn first_key(&self) -> Option<&'a str> {
        self.map.keys().next().map(String::as_str)
    }

    /// The pointer of member `key`.
    pub(crate) fn at(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// An error about member `key`.
    pub(crate) fn err(&self, key: &str, reason: impl Into<String>) -> FormatFileError {
        FormatFileError::new(self.at(key), reason)
    }

    /// Whether member `key` is present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// Rejects every member not in `allowed`, naming it.
    pub(crate) fn only(&self, allowed: &[&str]) -> Result<(), FormatFileError> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(self.err(
                k,
                format!("unknown key; expected one of {}", allowed.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// Member `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// Member `key` as a string, if present.
    pub(crate) fn str(&self, key: &str) -> Result<Option<&'a str>, FormatFileError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.err(key, format!("must be a string, not {}", kind(other)))),
        }
    }

    /// Member `key` as a non-empty string (a literal), if present.
    pub(crate) fn lit(&self, key: &str) -> Result<Option<&'a str>, FormatFileError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
            Some(_) => Err(self.err(key, "must be a non-empty string")),
        }
    }

    /// Member `key`, which must be present, as a non-empty string.
    pub(crate) fn need_lit(&self, key: &str) -> Result<&'a str, FormatFileError> {
        self.lit(key)?
            .ok_or_else(|| self.err(key, "missing; must be a non-empty string"))
    }

    /// Member `key` as a boolean; `false` when absent.
    pub(crate) fn flag(&self, key: &str) -> Result<bool, FormatFileError> {
        match self.map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.err(key, format!("must be true or false, not {}", kind(other))))
            }
        }
    }

    /// Member `key` as a list of non-empty strings (a single string is a
    /// list of one); `None` when absent. An empty list is an error: leave
    /// the key out instead.
    pub(crate) fn lits(&self, key: &str) -> Result<Option<Vec<String>>, FormatFileError> {
        let items = match self.map.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) if !s.is_empty() => return Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) if !items.is_empty() => items,
            Some(_) => {
                return Err(self.err(
                    key,
                    "must be a non-empty string or a non-empty array of them",
                ))
            }
        };
        let at = self.at(key);
        items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(FormatFileError::new(
                    child(&at, &i.to_string()),
                    "must be a non-empty string",
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Member `key` as an object, if present.
    pub(crate) fn obj(&self, key: &str) -> Result<Option<Obj<'a>>, FormatFileError> {
        self.map
            .get(key)
            .map(|v| Obj::new(v, self.at(key)))
            .transpose()
    }

    /// Member `key`, a string that must be one of `choices`; `None` when
    /// absent.
    pub(crate) fn choice(
        &self,
        key: &str,
        choices: &[&str],
    ) -> Result<Option<&'a str>, FormatFileError> {
        match self.str(key)? {
            None => Ok(None),
            Some(s) if choices.contains(&s) => Ok(Some(s)),
            Some(s) => Err(self.err(
                key,
                format!(
                    "unknown value {s:?}; expected one of {}",
                    choices.join(", ")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let v = json!({"a": 1, "b": "", "c": [""], "d": "x", "e": [], "f": "zz"});
        let o = Obj::new(&v, "/top".into()).unwrap();
        assert_eq!(
            o.str("a").unwrap_err().to_string(),
            "/top/a: must be a string, not a number"
        );
        assert_eq!(o.lit("b").unwrap_err().pointer(), "/top/b");
        assert_eq!(o.lits("c").unwrap_err().pointer(), "/top/c/0");
        assert_eq!(o.lits("d").unwrap(), Some(vec!["x".to_string()]));
        assert!(o.lits("e").is_err());
        assert_eq!(o.lits("zz").unwrap(), None);
        assert_eq!(o.need_lit("nope").unwrap_err().pointer(), "/top/nope");
        assert_eq!(
            o.choice("f", &["x", "y"]).unwrap_err().to_string(),
            "/top/f: unknown value \"zz\"; expected one of x, y"
        );
        assert_eq!(
            o.only(&["a", "b", "c", "d", "e"]).unwrap_err().pointer(),
            "/top/f"
        );
        assert_eq!(o.flag("a").unwrap_err().pointer(), "/top/a");
        assert!(!o.flag("absent").unwrap());
        assert!(Obj::new(&json!([]), String::new()).is_err());
    }
}
