//! A validator for the JSON-schema subset cairn's prompts use: `type` (one or a list),
//! `properties`, `required`, `additionalProperties: false`, `items`, `enum`, `maxLength`.

use serde_json::Value;

/// Why a value does not match its schema, with the JSON path.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{path}: {message}")]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

/// Checks `value` against `schema`.
pub fn validate(schema: &Value, value: &Value) -> Result<(), SchemaError> {
    check(schema, value, "$")
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn err(path: &str, message: String) -> SchemaError {
    SchemaError {
        path: path.to_owned(),
        message,
    }
}

fn check(schema: &Value, v: &Value, path: &str) -> Result<(), SchemaError> {
    match &schema["type"] {
        Value::String(t) if !type_ok(t, v) => {
            return Err(err(path, format!("expected {t}, found {}", kind(v))));
        }
        Value::Array(ts) if !ts.iter().filter_map(Value::as_str).any(|t| type_ok(t, v)) => {
            return Err(err(
                path,
                format!(
                    "expected one of {schema_type}, found {}",
                    kind(v),
                    schema_type = schema["type"]
                ),
            ));
        }
        _ => {}
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(v)
    {
        return Err(err(path, format!("{v} is not one of {}", schema["enum"])));
    }
    if let (Some(max), Some(s)) = (schema["maxLength"].as_u64(), v.as_str())
        && s.chars().count() as u64 > max
    {
        return Err(err(path, format!("longer than {max} characters")));
    }
    if let Some(obj) = v.as_object() {
        let props = schema["properties"].as_object();
        for r in schema["required"].as_array().into_iter().flatten() {
            if let Some(name) = r.as_str()
                && !obj.contains_key(name)
            {
                return Err(err(path, format!("missing required field `{name}`")));
            }
        }
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(s, val, &format!("{path}.{k}"))?,
                None if schema["additionalProperties"] == Value::Bool(false) => {
                    return Err(err(path, format!("unexpected field `{k}`")));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            check(items, item, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_the_subset() {
        let s = json!({"type":"object","additionalProperties":false,"required":["a","b"],
            "properties":{"a":{"type":"string"},"b":{"type":["string","null"]},
            "c":{"type":"array","items":{"type":"object","required":["t"],"properties":{"t":{"enum":["user","project"]}}}}}});
        assert!(validate(&s, &json!({"a":"x","b":null})).is_ok());
        assert!(validate(&s, &json!({"a":"x","b":"y","c":[{"t":"user"}]})).is_ok());
        assert_eq!(
            validate(&s, &json!({"a":"x"})).unwrap_err().message,
            "missing required field `b`"
        );
        assert!(validate(&s, &json!({"a":1,"b":null})).is_err());
        assert!(validate(&s, &json!({"a":"x","b":null,"z":1})).is_err());
        let e = validate(&s, &json!({"a":"x","b":null,"c":[{"t":"other"}]})).unwrap_err();
        assert_eq!(e.path, "$.c[0].t");
    }
}
