//! The request's `tools` array (OpenAI style): each tool's name,
//! description and JSON Schema parameters — read once, and used by the
//! parser (to type parameter values) and the renderer alike.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use crate::error::Error;

/// One tool definition of an OpenAI `tools` array.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// What it does (empty when the definition has none).
    pub description: String,
    /// The JSON Schema of its parameters (`Null` when the definition has
    /// none).
    pub parameters: Value,
}

/// The tools a request offered, by name, with their parameter schemas.
///
/// A call is matched to its tool by [`Tools::resolve`]: by the exact name,
/// else by the name without its namespace prefix (`exec` for
/// `functions.exec`, and the reverse), when exactly one tool has that
/// bare name.
///
/// ```
/// use toolscan_core::Tools;
/// let tools = Tools::from_json(&serde_json::json!([
///     {"type": "function", "function": {"name": "get_weather",
///      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
/// ])).unwrap();
/// assert!(tools.contains("get_weather"));
/// assert!(!tools.contains("search"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tools {
    by_name: Arc<BTreeMap<String, Tool>>,
    /// The names in the array's order.
    order: Arc<Vec<String>>,
    /// Each declared name's bare form ([`bare`]) → the declared name, or
    /// `None` when two declared names have that bare form (a call naming
    /// it matches neither). Built once, so resolving a call's name is two
    /// hash lookups at most.
    by_bare: Arc<HashMap<String, Option<String>>>,
}

/// A name without its namespace prefix: what follows the last `.` when
/// everything before it is words of letters, digits, `_` or `-`, each
/// followed by a `.` (`functions.exec`, `default_api.exec`,
/// `tools.functions.exec` → `exec`); otherwise the name itself.
pub(crate) fn bare(name: &str) -> &str {
    let Some((prefix, rest)) = name.rsplit_once('.') else {
        return name;
    };
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    if rest.is_empty() || !prefix.split('.').all(word) {
        return name;
    }
    rest
}

impl Tools {
    /// Reads an OpenAI `tools` array: each element is
    /// `{"type": "function", "function": {"name", "parameters"}}`; the bare
    /// `{"name", "parameters"}` form is accepted too.
    pub fn from_json(tools: &Value) -> Result<Tools, Error> {
        let Some(items) = tools.as_array() else {
            return Err(Error::Tools("expected a JSON array of tools".into()));
        };
        let mut by_name = BTreeMap::new();
        let mut order = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let f = item.get("function").unwrap_or(item);
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                return Err(Error::Tools(format!("tool #{i} has no string \"name\"")));
            };
            let tool = Tool {
                name: name.to_owned(),
                description: f
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
            };
            if by_name.insert(name.to_owned(), tool).is_none() {
                order.push(name.to_owned());
            }
        }
        let mut by_bare: HashMap<String, Option<String>> = HashMap::new();
        for name in &order {
            by_bare
                .entry(bare(name).to_owned())
                .and_modify(|d| *d = None)
                .or_insert_with(|| Some(name.clone()));
        }
        Ok(Tools {
            by_name: Arc::new(by_name),
            order: Arc::new(order),
            by_bare: Arc::new(by_bare),
        })
    }

    /// Reads a `tools` array from JSON text.
    pub fn from_json_str(text: &str) -> Result<Tools, Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::Tools(e.to_string()))?;
        Self::from_json(&v)
    }

    /// Whether a tool of exactly that name was offered (a call's name is
    /// matched by [`Tools::resolve`]).
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The JSON Schema of the parameters of the tool of exactly that name,
    /// if it was offered.
    pub fn schema(&self, name: &str) -> Option<&Value> {
        self.by_name.get(name).map(|t| &t.parameters)
    }

    /// The definition of the tool of exactly that name, if it was offered.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name)
    }

    /// The tool a call naming `name` calls: the tool of that exact name;
    /// else, when exactly one tool's name without its namespace prefix
    /// (`functions.`, `default_api.`, `tools.`…: words each followed by a
    /// `.`) is `name` without its own, that tool. Models write a tool
    /// declared `functions.exec` as `exec`, and the reverse; two tools that
    /// differ only in their namespace (`a.exec`, `b.exec`) match neither
    /// a bare `exec` nor a third namespace's.
    ///
    /// ```
    /// use toolscan_core::Tools;
    /// let tools = Tools::from_json_str(
    ///     r#"[{"name": "functions.exec"}, {"name": "read"}, {"name": "a.ls"}, {"name": "b.ls"}]"#,
    /// ).unwrap();
    /// let declared = |call: &str| tools.resolve(call).map(|t| t.name.as_str());
    /// assert_eq!(declared("functions.exec"), Some("functions.exec"));
    /// assert_eq!(declared("exec"), Some("functions.exec"));
    /// assert_eq!(declared("default_api.read"), Some("read"));
    /// assert_eq!(declared("a.ls"), Some("a.ls"));
    /// assert_eq!(declared("ls"), None); // two tools match
    /// assert_eq!(declared("write"), None);
    /// ```
    pub fn resolve(&self, name: &str) -> Option<&Tool> {
        if let Some(t) = self.by_name.get(name) {
            return Some(t);
        }
        let declared = self.by_bare.get(bare(name))?.as_deref()?;
        self.by_name.get(declared)
    }

    /// The definitions, in the order of the array (a name given twice:
    /// its last definition, at its first place).
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.order.iter().filter_map(|n| self.by_name.get(n))
    }

    /// The JSON Schema of one parameter of the tool a call naming `tool`
    /// calls ([`Tools::resolve`]): the member `param` of
    /// the `properties` object of its parameters schema. `None` when the
    /// tool was not offered, its schema has no `properties` object, or that
    /// object has no such member.
    pub(crate) fn param_schema(&self, tool: &str, param: &str) -> Option<&Value> {
        self.properties(tool)?.get(param)
    }

    /// Whether the tool a call naming `tool` calls declares a parameter of
    /// that name: `None` when the
    /// tool was not offered or its parameters schema has no `properties`
    /// object (so there is nothing to check the name against).
    pub(crate) fn has_param(&self, tool: &str, param: &str) -> Option<bool> {
        Some(self.properties(tool)?.contains_key(param))
    }

    /// The one property of the parameters schema of the tool a call
    /// naming `tool` calls whose type is
    /// `string`, if there is exactly one.
    pub(crate) fn sole_string_param(&self, tool: &str) -> Option<&str> {
        let mut strings = self
            .properties(tool)?
            .iter()
            .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("string"));
        let (key, _) = strings.next()?;
        strings.next().is_none().then_some(key.as_str())
    }

    /// The `properties` object of the parameters schema of the tool a call
    /// naming `tool` calls, if it has one.
    fn properties(&self, tool: &str) -> Option<&serde_json::Map<String, Value>> {
        self.resolve(tool)?
            .parameters
            .get("properties")?
            .as_object()
    }

    /// Tool names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_keep_description_and_order() {
        let t = Tools::from_json_str(
            r#"[{"type": "function", "function": {"name": "b", "description": "Bee."}},
                {"name": "a", "parameters": {"type": "object"}}]"#,
        )
        .unwrap();
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(t.get("b").unwrap().description, "Bee.");
        assert_eq!(t.get("a").unwrap().parameters["type"], "object");
        assert_eq!(t.get("b").unwrap().parameters, Value::Null);
    }

    #[test]
    fn bare_form_and_errors() {
        let t = Tools::from_json_str(r#"[{"name": "a"}]"#).unwrap();
        assert!(t.contains("a"));
        assert!(Tools::from_json_str(r#"{"name": "a"}"#).is_err());
        assert!(Tools::from_json_str(r#"[{"nom": "a"}]"#).is_err());
        assert!(Tools::from_json_str("[").is_err());
    }

    #[test]
    fn a_namespace_prefix_is_words_each_followed_by_a_dot() {
        for (name, want) in [
            ("functions.exec", "exec"),
            ("default_api.exec", "exec"),
            ("tools.functions.exec", "exec"),
            ("my-ns.get_weather", "get_weather"),
            ("exec", "exec"),
            // not a namespace: an empty word, a name that ends in a dot,
            // a prefix that is not words
            (".exec", ".exec"),
            ("a..exec", "a..exec"),
            ("functions.", "functions."),
            ("a b.exec", "a b.exec"),
            ("é.exec", "é.exec"),
        ] {
            assert_eq!(bare(name), want, "{name}");
        }
    }

    #[test]
    fn resolving_strips_prefixes_on_both_sides_and_refuses_ambiguity() {
        let t = Tools::from_json_str(
            r#"[{"name": "functions.exec"}, {"name": "exec"}, {"name": "a.ls"},
                {"name": "b.ls"}, {"name": "read"}]"#,
        )
        .unwrap();
        let declared = |call: &str| t.resolve(call).map(|t| t.name.as_str());
        // exact names first, even where a bare form is shared
        assert_eq!(declared("exec"), Some("exec"));
        assert_eq!(declared("functions.exec"), Some("functions.exec"));
        // `exec` is the bare form of two tools: a third namespace matches neither
        assert_eq!(declared("tools.exec"), None);
        assert_eq!(declared("ls"), None);
        assert_eq!(declared("c.ls"), None);
        assert_eq!(declared("functions.read"), Some("read"));
        assert_eq!(declared("x.y.read"), Some("read"));
        // the schema lookups resolve too; `get` and `contains` are exact
        assert!(t.has_param("functions.read", "p").is_none());
        assert!(!t.contains("functions.read") && t.get("functions.read").is_none());
    }

    #[test]
    fn parameters() {
        let t = Tools::from_json(&serde_json::json!([
            {"type": "function", "function": {"name": "get_weather",
             "parameters": {"type": "object", "properties": {
                 "city": {"type": "string"}, "days": {"type": "integer"}}}}},
            {"name": "no_params"},
            {"name": "no_properties", "parameters": {"type": "object"}},
            {"name": "bad_properties", "parameters": {"properties": ["city"]}},
            {"name": "empty", "parameters": {"type": "object", "properties": {}}}
        ]))
        .unwrap();
        assert_eq!(
            t.param_schema("get_weather", "city"),
            Some(&serde_json::json!({"type": "string"}))
        );
        assert_eq!(
            t.param_schema("get_weather", "days"),
            Some(&serde_json::json!({"type": "integer"}))
        );
        assert_eq!(t.param_schema("get_weather", "country"), None);
        assert_eq!(t.param_schema("search", "city"), None);
        assert_eq!(t.param_schema("no_params", "city"), None);
        assert_eq!(t.param_schema("no_properties", "city"), None);
        assert_eq!(t.param_schema("bad_properties", "city"), None);

        assert_eq!(t.has_param("get_weather", "city"), Some(true));
        assert_eq!(t.has_param("get_weather", "country"), Some(false));
        assert_eq!(t.has_param("empty", "city"), Some(false));
        assert_eq!(t.has_param("search", "city"), None);
        assert_eq!(t.has_param("no_params", "city"), None);
        assert_eq!(t.has_param("no_properties", "city"), None);
        assert_eq!(t.has_param("bad_properties", "city"), None);
    }
}
