//! A tool's `inputSchema`, derived from the type its arguments are parsed
//! into (`#[derive(Deserialize, JsonSchema)]` with
//! `#[serde(deny_unknown_fields)]`), so the schema the model reads is the
//! parser's own contract rather than a second text beside it.
//!
//! Field doc comments are not used: what the model reads is written with
//! `#[schemars(description = "…")]`, bounds with `range`/`length`,
//! defaults with `extend("default" = …)` (a `#[serde(default)]` field
//! whose default the model need not read takes [`no_default`]). Three rules make the derived
//! schema say what a hand-written one said:
//!
//! - no `$schema` and no `title`: the tool carries its own title, and MCP
//!   fixes the dialect;
//! - an optional field's type is the value's type, and it has no `null`
//!   default: `Option<T>` lets serde read a `null` as "omitted", but the
//!   model is told to omit it, never to send `null`;
//! - no integer `format` (`uint32`, `int64`, …): those name Rust's types,
//!   not anything a caller can act on; `minimum`/`maximum` carry the
//!   bounds. String formats (`date-time`) stay.

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The input schema of `T`, inlined (no `$defs`), as a JSON object.
pub fn input_schema<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let Value::Object(mut schema) = generator.into_root_schema_for::<T>().to_value() else {
        panic!("the input schema of {} is not an object", std::any::type_name::<T>());
    };
    schema.remove("title");
    assert_eq!(
        schema.get("type"),
        Some(&Value::String("object".to_string())),
        "a tool's input must be a struct: {}",
        std::any::type_name::<T>()
    );
    let required: Vec<Value> = match schema.get("required") {
        Some(Value::Array(required)) => required.clone(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let optional = !required.contains(&Value::String(name.clone()));
            tidy(property, optional);
        }
    }
    schema
}

/// Applies the rules above to one property (and, for arrays, its items).
fn tidy(property: &mut Value, optional: bool) {
    let Value::Object(property) = property else { return };
    if optional && let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            property.insert("type".to_string(), single);
        }
    }
    if optional && property.get("default") == Some(&Value::Null) {
        property.remove("default");
    }
    let integer = property.get("type").and_then(Value::as_str) == Some("integer");
    if integer {
        property.remove("format");
    }
    if let Some(items) = property.get_mut("items") {
        tidy(items, false);
    }
}

/// For `#[schemars(transform = mcp_kit::schema::no_default)]`: a field
/// serde fills in when omitted (`#[serde(default)]`, an empty list) whose
/// schema says nothing about it.
pub fn no_default(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// For a container-level `#[schemars(transform = …)]`: lists `names` as
/// required (after the fields that already are) although serde fills them
/// in when omitted, so the model is asked to write them.
pub fn require(schema: &mut schemars::Schema, names: &[&str]) {
    let required =
        schema.ensure_object().entry("required").or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for name in names {
            if !required.iter().any(|present| present == name) {
                required.push(Value::String(name.to_string()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    const LIMIT_MAX: u32 = 50;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        #[schemars(length(min = 1), description = "What to find.")]
        query: String,
        #[serde(default)]
        #[schemars(range(min = 1, max = LIMIT_MAX), extend("default" = 20))]
        limit: Option<u32>,
        #[serde(default)]
        #[schemars(extend("format" = "date-time"))]
        after: Option<String>,
        #[serde(default)]
        #[schemars(length(max = 3), inner(length(max = 320)), transform = no_default)]
        to: Vec<String>,
    }

    #[test]
    fn the_derived_schema_says_what_a_hand_written_one_said() {
        assert_eq!(
            Value::Object(input_schema::<Input>()),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "What to find."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
                    "after": {"type": "string", "format": "date-time"},
                    "to": {"type": "array", "items": {"type": "string", "maxLength": 320}, "maxItems": 3}
                },
                "required": ["query"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    #[should_panic(expected = "must be a struct")]
    fn an_input_that_is_not_an_object_is_refused() {
        input_schema::<u32>();
    }
}
