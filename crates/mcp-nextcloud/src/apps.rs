//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`, stable 2026-01-26):
//! HTML views a host renders in a sandboxed iframe for a tool's result.
//!
//! A tool names its view in `_meta.ui.resourceUri`; the view is a `ui://`
//! resource served here by `resources/list` and `resources/read` with
//! mimeType `text/html;profile=mcp-app`. Inside the iframe the view speaks
//! JSON-RPC over `postMessage` with the host: `ui/initialize`, then
//! `ui/notifications/initialized`, then it renders the `CallToolResult`
//! of `ui/notifications/tool-result` (the tool's `structuredContent`).
//!
//! The views load nothing: no external domain in `_meta.ui.csp`, and the
//! same default-deny policy as a `<meta>` in the document (inline script
//! and style only), because the Nextcloud app re-serves the HTML under a
//! policy built from the document itself. They build the page with
//! `textContent`, never `innerHTML`, since every string they show (an event
//! title, a file name) was written by someone other than the user.
//! The text content of the tools stays complete without a view.

use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

/// The MIME type of an MCP Apps HTML view.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The view of `calendar_events`: an agenda.
pub const CALENDAR_EVENTS_URI: &str = "ui://tamebi/calendar-events.html";
/// The view of `files_search`: a file list.
pub const FILES_SEARCH_URI: &str = "ui://tamebi/files-search.html";
/// The policy every view carries in its `<meta http-equiv>`: nothing may be
/// fetched, framed or submitted; only the document's own inline script and
/// style run.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; connect-src 'none'; media-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";

/// One view.
#[derive(Debug)]
pub struct App {
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The `id` of the `<main>` element the view renders into.
    root: &'static str,
    /// Lines of CSS custom properties the view adds to the page's `:root`.
    variables: &'static str,
    /// Lines of the view's own style rules.
    style: &'static str,
    /// Lines of the view's script, inside the page's strict-mode closure;
    /// `{{ELEMENT}}` stands where it wants the shared `element` helper.
    script: &'static str,
}

/// The document every view fills in: head, policy, theme, the `.note` and
/// `.error` styles, the `<main>` root and the script frames. Written once
/// so a fix to the policy `<meta>` or the theme reaches every view. Each
/// `{{SLOT}}` on a line of its own takes whole lines (or none).
const PAGE: &str = include_str!("apps/page.html");

/// The `element(tag, className, text)` helper every view's script uses to
/// build nodes with `textContent` only.
const ELEMENT: &str = include_str!("apps/element.js");

/// The host bridge every view shares: the `ui/initialize` handshake,
/// theming, size reports and dispatch of the host's notifications.
const BRIDGE: &str = include_str!("apps/bridge.js");

const APPS: &[App] = &[
    App {
        uri: CALENDAR_EVENTS_URI,
        name: "calendar-events",
        title: "Agenda",
        description: "Shows the occurrences returned by calendar_events as an agenda grouped by day.",
        root: "agenda",
        variables: "    --border-radius-md: 8px;\n",
        style: include_str!("apps/calendar-events.css"),
        script: include_str!("apps/calendar-events.js"),
    },
    App {
        uri: FILES_SEARCH_URI,
        name: "files-search",
        title: "Files",
        description: "Shows the files returned by files_search as a list.",
        root: "files",
        variables: "",
        style: include_str!("apps/files-search.css"),
        script: include_str!("apps/files-search.js"),
    },
];

/// Every view this server offers.
pub fn all() -> &'static [App] {
    APPS
}

/// The view at `uri`.
pub fn get(uri: &str) -> Option<&'static App> {
    APPS.iter().find(|app| app.uri == uri)
}

/// A tool's `_meta` pointing at its view.
pub fn tool_meta(uri: &str) -> Value {
    assert!(get(uri).is_some(), "no MCP App is registered at {uri}");
    json!({ (wire::meta::UI): { (wire::meta::UI_RESOURCE_URI): uri } })
}

impl App {
    /// The complete document: [`PAGE`] with this view's parts in its slots.
    pub fn html(&self) -> String {
        PAGE.replace("{{SCRIPT}}\n", self.script)
            .replace("{{ELEMENT}}\n", ELEMENT)
            .replace("{{VARIABLES}}\n", self.variables)
            .replace("{{STYLE}}\n", self.style)
            .replace("{{NAME}}", self.name)
            .replace("{{TITLE}}", self.title)
            .replace("{{ROOT}}", self.root)
            .replace("{{CSP}}", CONTENT_SECURITY_POLICY)
            .replace("{{BRIDGE}}", BRIDGE)
    }

    /// The `resources/list` entry.
    pub fn resource(&self) -> Resource {
        Resource::new(self.uri, self.name)
            .with_title(self.title)
            .with_description(self.description)
            .with_mime_type(MIME_TYPE)
            .with_meta(ui_meta())
    }

    /// The `resources/read` content.
    pub fn contents(&self) -> ResourceContents {
        ResourceContents::TextResourceContents {
            uri: self.uri.to_string(),
            mime_type: Some(MIME_TYPE.to_string()),
            text: self.html(),
            meta: Some(ui_meta()),
        }
    }
}

/// `_meta.ui` of a view: no external domain of any kind.
fn ui_meta() -> MetaObject {
    let Value::Object(meta) = json!({
        (wire::meta::UI): {
            "csp": {
                "connectDomains": [],
                "resourceDomains": [],
                "frameDomains": [],
                "baseUriDomains": []
            },
            "prefersBorder": true
        }
    }) else {
        unreachable!("a JSON object literal")
    };
    MetaObject(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_is_a_self_contained_document_under_a_default_deny_policy() {
        for app in all() {
            let html = app.html();
            assert!(app.uri.starts_with("ui://"), "{}", app.uri);
            assert!(html.starts_with("<!DOCTYPE html>"), "{}", app.uri);
            assert!(
                html.contains(&format!(
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">"
                )),
                "{}",
                app.uri
            );
            assert!(!html.contains("{{"), "{}: a placeholder is left", app.uri);
            for forbidden in
                ["http://", "https://", "innerHTML", "outerHTML", "eval(", "<script src"]
            {
                assert!(!html.contains(forbidden), "{} contains {forbidden}", app.uri);
            }
            assert!(
                html.contains("ui/initialize") && html.contains("ui/notifications/tool-result")
            );
        }
    }

    #[test]
    fn the_policy_denies_by_default_and_allows_no_origin() {
        assert!(CONTENT_SECURITY_POLICY.starts_with("default-src 'none';"));
        for directive in ["connect-src 'none'", "frame-src 'none'", "object-src 'none'"] {
            assert!(CONTENT_SECURITY_POLICY.contains(directive), "{directive}");
        }
        assert!(!CONTENT_SECURITY_POLICY.contains("'self'"));
        assert!(!CONTENT_SECURITY_POLICY.contains('*'));
    }

    #[test]
    #[should_panic(expected = "no MCP App is registered")]
    fn a_tool_cannot_point_at_a_missing_view() {
        tool_meta("ui://tamebi/missing.html");
    }
}
