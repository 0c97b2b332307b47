//! webhook_listeners' event filters: a MongoDB-style query evaluated
//! against the payload the way `PHPMongoQuery` evaluates it.

use serde_json::{Map, Value};

/// Evaluates a webhook_listeners event filter (a MongoDB query) against a
/// payload. `Err` says why the filter itself is malformed.
pub fn filter_matches(filter: &Map<String, Value>, document: &Value) -> Result<bool, String> {
    if filter.is_empty() {
        return Ok(true);
    }
    query_object_at(filter, document, "$and", 0)
}

/// The deepest nesting of `$and`/`$or`/`$not` evaluated.
const FILTER_DEPTH_MAX: usize = 32;

/// Refuses a filter nested past [`FILTER_DEPTH_MAX`].
fn within_depth(depth: usize) -> Result<(), String> {
    if depth > FILTER_DEPTH_MAX {
        return Err("the filter is nested too deeply".to_string());
    }
    Ok(())
}

fn query_object_at(
    query: &Map<String, Value>,
    document: &Value,
    logical: &str,
    depth: usize,
) -> Result<bool, String> {
    within_depth(depth)?;
    let mut results = Vec::new();
    for (key, value) in query {
        let pass = if key == "$not" {
            !query_value(value, document, "$and", depth + 1)?
        } else if key.starts_with('$') {
            query_value(value, document, key, depth + 1)?
        } else if let Value::Object(operators) = value {
            query_on_element(operators, key, document, depth + 1)?
        } else {
            operator_on_element("$e", value, key, document, depth + 1)?
        };
        results.push(pass);
    }
    combine(logical, results)
}

/// A query that may be an object or (under `$or`/`$and`/`$nor`) a list of
/// query objects.
fn query_value(
    query: &Value,
    document: &Value,
    logical: &str,
    depth: usize,
) -> Result<bool, String> {
    match query {
        Value::Object(map) => query_object_at(map, document, logical, depth),
        Value::Array(items) => {
            if items.is_empty() {
                return Err(format!("{logical} requires nonempty array"));
            }
            let mut results = Vec::new();
            for item in items {
                let Value::Object(map) = item else {
                    return Err(format!("{logical} requires an array of query objects"));
                };
                results.push(query_object_at(map, document, "$and", depth + 1)?);
            }
            combine(logical, results)
        }
        _ => Err(format!("{logical} requires an array or an object")),
    }
}

fn combine(logical: &str, results: Vec<bool>) -> Result<bool, String> {
    match logical {
        "$and" => Ok(results.iter().all(|pass| *pass)),
        "$or" => Ok(results.iter().any(|pass| *pass)),
        "$nor" => Ok(!results.iter().any(|pass| *pass)),
        other => Err(format!("Operator {other} is unknown")),
    }
}

fn query_on_element(
    operators: &Map<String, Value>,
    element: &str,
    document: &Value,
    depth: usize,
) -> Result<bool, String> {
    for (operator, value) in operators {
        if !operator_on_element(operator, value, element, document, depth)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn operator_on_element(
    operator: &str,
    operand: &Value,
    element: &str,
    document: &Value,
    depth: usize,
) -> Result<bool, String> {
    within_depth(depth)?;
    if operator == "$not" {
        let Value::Object(operators) = operand else {
            return Err("$not requires an object".to_string());
        };
        return Ok(!query_on_element(operators, element, document, depth + 1)?);
    }
    let mut current = document;
    let segments: Vec<&str> = element.split('.').collect();
    let mut found = true;
    for (index, segment) in segments.iter().enumerate() {
        match current {
            Value::Array(items) if !items.is_empty() => {
                // Any element of a list may match the rest of the path.
                let rest = segments[index..].join(".");
                for item in items {
                    if operator_on_element(operator, operand, &rest, item, depth + 1)? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            Value::Object(map) => match map.get(*segment) {
                Some(Value::Null) | None => {
                    found = false;
                    break;
                }
                Some(next) => current = next,
            },
            _ => {
                found = false;
                break;
            }
        }
    }
    let value = current;
    match operator {
        "$e" => Ok(found && is_equal(value, operand)),
        "$ne" => Ok((!found && !operand.is_null()) || (found && !is_equal(value, operand))),
        "$in" | "$nin" => {
            let Value::Array(candidates) = operand else {
                return Err(format!("{operator} requires array"));
            };
            let contained = found
                && match value {
                    Value::Array(items) => items.iter().any(|item| candidates.contains(item)),
                    other => candidates.contains(other),
                };
            Ok(if operator == "$in" { contained } else { !contained })
        }
        "$exists" => {
            let wanted = operand.as_bool().unwrap_or(!operand.is_null());
            Ok(wanted == found)
        }
        "$lt" | "$lte" | "$gt" | "$gte" => {
            if !found {
                return Ok(false);
            }
            let ordering = match (value, operand) {
                (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
                (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                _ => None,
            };
            let Some(ordering) = ordering else {
                return Ok(false);
            };
            Ok(match operator {
                "$lt" => ordering.is_lt(),
                "$lte" => ordering.is_le(),
                "$gt" => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        "$all" => {
            let Value::Array(wanted) = operand else {
                return Err("$all requires array".to_string());
            };
            if !found || wanted.is_empty() {
                return Ok(false);
            }
            Ok(match value {
                Value::Array(items) => wanted.iter().all(|item| items.contains(item)),
                other => wanted.len() == 1 && &wanted[0] == other,
            })
        }
        other => Err(format!("Operator {other} is unknown")),
    }
}

/// `PHPMongoQuery::_isEqual`: list containment, `/regex/flags` strings,
/// otherwise strict equality.
fn is_equal(value: &Value, operand: &Value) -> bool {
    match (value, operand) {
        (Value::Array(_), Value::Array(_)) => value == operand,
        (Value::Array(items), _) => items.contains(operand),
        (_, Value::String(pattern)) if pattern.len() >= 2 && pattern.starts_with('/') => {
            match php_regex(pattern) {
                Some(regex) => {
                    let subject = match value {
                        Value::String(text) => text.clone(),
                        Value::Number(number) => number.to_string(),
                        Value::Bool(true) => "1".to_string(),
                        _ => String::new(),
                    };
                    regex.is_match(&subject)
                }
                None => value == operand,
            }
        }
        _ => value == operand,
    }
}

/// `/pattern/flags` → a regex, or `None` when the string is not one.
fn php_regex(text: &str) -> Option<regex::Regex> {
    let inner = text.strip_prefix('/')?;
    let slash = inner.rfind('/')?;
    let (pattern, flags) = (&inner[..slash], &inner[slash + 1..]);
    if !flags.chars().all(|flag| flag.is_ascii_alphabetic()) {
        return None;
    }
    let mut prefix = String::new();
    for flag in flags.chars() {
        match flag.to_ascii_lowercase() {
            'i' => prefix.push_str("(?i)"),
            'm' => prefix.push_str("(?m)"),
            's' => prefix.push_str("(?s)"),
            'x' => prefix.push_str("(?x)"),
            'u' => {}
            _ => return None,
        }
    }
    regex::RegexBuilder::new(&format!("{prefix}{pattern}")).size_limit(1 << 20).build().ok()
}
