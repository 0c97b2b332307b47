//! MCP Apps view pins: which `ui://` views may reach the user's page.
//!
//! A view is HTML that runs in the chat page's sandboxed iframe, beside the
//! user's data, so the seeds treat views as code we write, review, version
//! and fingerprint. The orchestrator attaches a tool's view to its result
//! only when the view's fingerprint is in the reviewed pin list shipped
//! with the release ([`SHIPPED`], `view_pins.txt` beside this module). A
//! view that is unknown, or that changed since it was reviewed (a newer or
//! compromised MCP server), is not attached: the page shows the tool's
//! text instead, and the log names the view's URI and fingerprint, which is
//! the line a reviewer adds to the list once they have read the view.
//!
//! The fingerprint covers everything of the resource that reaches the
//! page: its URI, MIME type, text and `_meta` (whose `ui.csp` decides what
//! the re-served page may load), as SHA-256 over canonical JSON (object
//! keys sorted at every level), so it does not depend on how a server
//! orders its keys. `crates/system/tests/view_pins.rs` checks the list
//! against the views mcp-nextcloud ships and rewrites it with
//! `TAMEBI_UPDATE_DOCS=1`.

use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

/// The reviewed pin list shipped with this build.
pub const SHIPPED: &str = include_str!("view_pins.txt");

/// The comment that opens the pin file.
const HEADER: &str = "\
# MCP Apps views the orchestrator attaches to tool results: one line per
# reviewed view, `sha256:<hex> <ui:// uri>`. A view whose fingerprint is not
# here is not attached (the log names its uri and fingerprint). Review the
# view's HTML and _meta before adding or changing a line; regenerate from the
# views mcp-nextcloud ships with
#   TAMEBI_UPDATE_DOCS=1 cargo test -p system --test view_pins
";

/// The reviewed (URI, fingerprint) pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewPins {
    pins: BTreeSet<(String, String)>,
}

/// A pin file line that is not `sha256:<64 hex> ui://…`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("view pins line {line}: expected `sha256:<64 hex digits> ui://<path>`")]
pub struct PinFileError {
    pub line: usize,
}

static SHIPPED_PINS: LazyLock<Arc<ViewPins>> = LazyLock::new(|| {
    // The shipped file is checked by a test; a malformed one pins nothing.
    Arc::new(ViewPins::parse(SHIPPED).unwrap_or_else(|error| {
        tracing::error!(%error, "the shipped view pins do not parse; no view will be attached");
        ViewPins::default()
    }))
});

impl ViewPins {
    /// The list shipped with this build.
    pub fn shipped() -> Arc<ViewPins> {
        SHIPPED_PINS.clone()
    }

    /// Reads a pin file: `#` comments and blank lines aside, one
    /// `sha256:<hex> <uri>` per line.
    pub fn parse(text: &str) -> Result<ViewPins, PinFileError> {
        let mut pins = BTreeSet::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let error = PinFileError { line: index + 1 };
            let mut parts = line.split_whitespace();
            let (Some(hash), Some(uri), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(error);
            };
            let hex = hash.strip_prefix("sha256:").ok_or(error.clone())?;
            let hex_ok = hex.len() == 64
                && hex.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
            if !hex_ok || !uri.starts_with("ui://") {
                return Err(error);
            }
            pins.insert((uri.to_string(), hash.to_string()));
        }
        Ok(ViewPins { pins })
    }

    /// The pin file for these (URI, fingerprint) pairs, sorted by URI.
    pub fn render(pins: &[(String, String)]) -> String {
        let mut sorted: Vec<_> = pins.to_vec();
        sorted.sort();
        let mut text = HEADER.to_string();
        for (uri, hash) in sorted {
            text.push_str(&format!("{hash} {uri}\n"));
        }
        text
    }

    /// Whether this resource (the `resource` object of a read view: `uri`,
    /// `mimeType`, `text`, `_meta`) may be attached for `uri`; its
    /// fingerprint when it may not.
    pub fn admit(&self, uri: &str, resource: &Value) -> Result<(), String> {
        let hash = fingerprint(resource);
        let named = resource.get("uri").and_then(Value::as_str) == Some(uri);
        if named && self.pins.contains(&(uri.to_string(), hash.clone())) {
            Ok(())
        } else {
            Err(hash)
        }
    }
}

/// `sha256:<hex>` of the resource's canonical JSON.
pub fn fingerprint(resource: &Value) -> String {
    use sha2::Digest as _;
    let mut canonical = String::new();
    write_canonical(resource, &mut canonical);
    let digest = sha2::Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// JSON with object keys sorted at every level and no whitespace.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(text: &str) -> Value {
        json!({
            "uri": "ui://tamebi/files-search.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": text,
            "_meta": {"ui": {"csp": {"connectDomains": []}, "prefersBorder": true}},
        })
    }

    fn pins_for(resource: &Value) -> ViewPins {
        let uri = resource["uri"].as_str().unwrap().to_string();
        ViewPins::parse(&ViewPins::render(&[(uri, fingerprint(resource))])).unwrap()
    }

    #[test]
    fn the_shipped_list_parses_and_pins_something() {
        let pins = ViewPins::parse(SHIPPED).unwrap();
        assert!(!pins.pins.is_empty());
        assert_eq!(*ViewPins::shipped(), pins);
    }

    #[test]
    fn a_pinned_view_is_admitted_and_a_changed_one_is_not() {
        let reviewed = view("<html>reviewed</html>");
        let pins = pins_for(&reviewed);
        assert_eq!(pins.admit("ui://tamebi/files-search.html", &reviewed), Ok(()));
        // One byte of HTML, a widened CSP, another URI: each is a different view.
        let changed = view("<html>reviewed!</html>");
        let hash = pins.admit("ui://tamebi/files-search.html", &changed).unwrap_err();
        assert_eq!(hash, fingerprint(&changed));
        let mut widened = reviewed.clone();
        widened["_meta"]["ui"]["csp"]["connectDomains"] = json!(["https://evil.example"]);
        assert!(pins.admit("ui://tamebi/files-search.html", &widened).is_err());
        let mut moved = reviewed.clone();
        moved["uri"] = json!("ui://tamebi/other.html");
        assert!(pins.admit("ui://tamebi/other.html", &moved).is_err());
        // A pinned view served under another tool's URI is not that view.
        assert!(pins.admit("ui://tamebi/other.html", &reviewed).is_err());
    }

    #[test]
    fn the_fingerprint_ignores_key_order_only() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":"é"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"é","y":[1,2]},"b":1}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"a":{"x":"é","y":[2,1]},"b":1}"#).unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&c));
        assert!(fingerprint(&a).starts_with("sha256:") && fingerprint(&a).len() == 71);
    }

    #[test]
    fn a_malformed_pin_line_is_refused_with_its_number() {
        let good = format!("sha256:{} ui://tamebi/a.html", "a".repeat(64));
        assert!(ViewPins::parse(&format!("# c\n\n{good}\n")).is_ok());
        for bad in [
            format!("sha256:{} ui://tamebi/a.html", "A".repeat(64)),
            format!("sha256:{} ui://tamebi/a.html", "a".repeat(63)),
            format!("md5:{} ui://tamebi/a.html", "a".repeat(64)),
            format!("sha256:{} https://tamebi/a.html", "a".repeat(64)),
            format!("{good} extra"),
            "sha256:".to_string(),
        ] {
            assert_eq!(ViewPins::parse(&format!("# c\n{bad}\n")), Err(PinFileError { line: 2 }));
        }
    }
}
