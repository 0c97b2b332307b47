//! Failure kinds, shared by the MCP servers that write them
//! and the orchestrator that reads it: why a tool call failed, as a
//! machine-readable kind in `_meta["tamebi/failureKind"]`, beside the text
//! the model reads (what happened, what to do next, no hostnames, stack
//! traces or upstream bodies).
//!
//! The kinds let the audit tell "Nextcloud refused" (a permission boundary
//! working) from "not there for this user", "the model could not use the
//! tool" (tool design wrong), "the document has no text" and "unreachable".
//! One enum on both sides means a kind added here is a compile error in
//! every `match` that must decide what it means, rather than a string the
//! orchestrator files under the wrong heading. A kind this build does not
//! know (a newer server, a third-party one) is parsed as [`Received::Unknown`],
//! kept, bounded and cleaned, never guessed at.

/// The `_meta` key of a failed `CallToolResult` carrying its [`FailureKind`].
pub const FAILURE_KIND_META_KEY: &str = crate::meta::FAILURE_KIND;

/// Why a tool call failed, as the servers say it on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// Nextcloud (or the Tamebi app for it) said no, 401/403: a permission
    /// boundary working.
    RefusedByNextcloud,
    /// The thing does not exist, or not for this user (Nextcloud answers 404
    /// for a path that exists only for someone else).
    NotFound,
    /// The model's arguments were wrong.
    InvalidArguments,
    /// Nextcloud did not answer, answered 5xx, or answered nonsense.
    NextcloudUnreachable,
    /// The target changed or already exists.
    Conflict,
    /// The document exists and is readable, but its text cannot be had: a
    /// scan without a text layer, a malformed or unsupported format.
    Unreadable,
}

impl FailureKind {
    /// Every kind, for exhaustive tests and documentation.
    pub const ALL: [FailureKind; 6] = [
        FailureKind::RefusedByNextcloud,
        FailureKind::NotFound,
        FailureKind::InvalidArguments,
        FailureKind::NextcloudUnreachable,
        FailureKind::Conflict,
        FailureKind::Unreadable,
    ];

    /// The kind's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RefusedByNextcloud => "refused_by_nextcloud",
            FailureKind::NotFound => "not_found",
            FailureKind::InvalidArguments => "invalid_arguments",
            FailureKind::NextcloudUnreachable => "nextcloud_unreachable",
            FailureKind::Conflict => "conflict",
            FailureKind::Unreadable => "unreadable",
        }
    }

    /// The kind a wire name stands for, if this build knows it (exact
    /// match: the servers write these names and nothing else).
    pub fn from_wire(name: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The longest unknown kind kept, in characters: enough for any honest
/// name, too short to smuggle a payload into the audit.
pub const UNKNOWN_KIND_MAX: usize = 64;

/// What a failed result said about itself, as the orchestrator reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Received {
    /// A kind this build knows.
    Known(FailureKind),
    /// A kind this build does not know, cleaned (see [`Received::parse`]);
    /// empty when the value was not a string or had nothing printable.
    Unknown(String),
    /// The result failed and said nothing about why.
    Unspecified,
}

impl Received {
    /// Reads the `_meta` value under [`FAILURE_KIND_META_KEY`], if any. An
    /// unknown name keeps only ASCII letters, digits, `_`, `-` and `.`
    /// (anything else becomes `_`), at most [`UNKNOWN_KIND_MAX`] characters,
    /// so it can be written to the audit and logged without escaping.
    pub fn parse(value: Option<&str>) -> Received {
        let Some(name) = value else {
            return Received::Unspecified;
        };
        if let Some(kind) = FailureKind::from_wire(name) {
            return Received::Known(kind);
        }
        let cleaned: String = name
            .chars()
            .take(UNKNOWN_KIND_MAX)
            .map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' })
            .collect();
        Received::Unknown(cleaned)
    }
}

/// A failed tool call, as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub kind: FailureKind,
    /// What happened and what to do next, in a sentence or two.
    pub message: String,
}

impl ToolFailure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> ToolFailure {
        ToolFailure { kind, message: message.into() }
    }

    pub fn invalid_arguments(message: impl Into<String>) -> ToolFailure {
        ToolFailure::new(FailureKind::InvalidArguments, message)
    }

    /// The arguments do not fit the tool's input schema; `detail` is the
    /// parser's reason. What it quotes of the model's own input (a value in
    /// `"…"`, a field name in `` `…` ``) is cut to [`QUOTE_CHARS_MAX`] and
    /// the whole reason to [`DETAIL_CHARS_MAX`]: a megabyte argument is
    /// not sent back whole into the context it just overflowed.
    pub fn schema_mismatch(detail: &str) -> ToolFailure {
        ToolFailure::invalid_arguments(format!(
            "The arguments do not match this tool's input schema ({}). Fix them and call again.",
            bounded_detail(detail)
        ))
    }
}

/// The most characters of one quoted excerpt of the model's input.
pub const QUOTE_CHARS_MAX: usize = 60;
/// The most characters of a parser's reason quoted in a failure.
pub const DETAIL_CHARS_MAX: usize = 300;

fn bounded_detail(detail: &str) -> String {
    let mut bounded = String::new();
    let mut quote: Option<(char, usize)> = None; // the closing mark, characters kept
    for character in detail.chars() {
        match quote {
            Some((mark, _)) if character == mark => {
                bounded.push(character);
                quote = None;
            }
            Some((mark, kept)) => {
                if kept < QUOTE_CHARS_MAX {
                    bounded.push(character);
                } else if kept == QUOTE_CHARS_MAX {
                    bounded.push('…');
                }
                quote = Some((mark, kept + 1));
            }
            None => {
                bounded.push(character);
                if character == '"' || character == '`' {
                    quote = Some((character, 0));
                }
            }
        }
    }
    if bounded.chars().count() > DETAIL_CHARS_MAX {
        bounded = bounded.chars().take(DETAIL_CHARS_MAX).collect();
        bounded.push('…');
    }
    bounded
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14: a tool error echoed a whole oversized argument back.
    #[test]
    fn a_schema_mismatch_quotes_little_of_the_input() {
        let huge = "x".repeat(1 << 20);
        let detail = format!("invalid type: string \"{huge}\", expected u64");
        let failure = ToolFailure::schema_mismatch(&detail);
        assert_eq!(failure.kind, FailureKind::InvalidArguments);
        assert!(failure.message.len() < 500, "{} bytes", failure.message.len());
        assert!(failure.message.contains("invalid type: string \"xxxx"), "{}", failure.message);
        assert!(failure.message.contains("…\", expected u64"), "{}", failure.message);
        let field = format!("unknown field `{huge}`, expected one of `query`, `limit`");
        let failure = ToolFailure::schema_mismatch(&field);
        assert!(
            failure.message.contains("…`, expected one of `query`, `limit`"),
            "{}",
            failure.message
        );
        // A short reason is kept whole.
        let short = ToolFailure::schema_mismatch("missing field `path`");
        assert_eq!(
            short.message,
            "The arguments do not match this tool's input schema (missing field `path`). Fix them and call again."
        );
        let long_reason = "word ".repeat(200);
        assert!(ToolFailure::schema_mismatch(&long_reason).message.len() < DETAIL_CHARS_MAX + 120);
    }

    #[test]
    fn every_kind_round_trips_through_its_wire_name() {
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::from_wire(kind.as_str()), Some(kind));
            assert_eq!(Received::parse(Some(kind.as_str())), Received::Known(kind));
        }
        let names: std::collections::HashSet<_> =
            FailureKind::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(names.len(), FailureKind::ALL.len(), "wire names are distinct");
    }

    #[test]
    fn the_wire_names_are_the_ones_servers_already_send() {
        // Renaming one breaks every orchestrator older than the server.
        let names: Vec<_> = FailureKind::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(
            names,
            [
                "refused_by_nextcloud",
                "not_found",
                "invalid_arguments",
                "nextcloud_unreachable",
                "conflict",
                "unreadable"
            ]
        );
    }

    #[test]
    fn an_unknown_kind_is_its_own_value_kept_bounded_and_clean() {
        assert_eq!(
            Received::parse(Some("quota_exceeded")),
            Received::Unknown("quota_exceeded".into())
        );
        // Close is not the same: no case folding, no trimming.
        assert_eq!(Received::parse(Some("Not_Found")), Received::Unknown("Not_Found".into()));
        assert_eq!(Received::parse(Some(" not_found")), Received::Unknown("_not_found".into()));
        let hostile = format!("x\n\u{1b}[31m'; DROP TABLE tool_calls;--{}", "y".repeat(500));
        let Received::Unknown(kept) = Received::parse(Some(&hostile)) else {
            panic!("a hostile kind is unknown");
        };
        assert_eq!(kept.chars().count(), UNKNOWN_KIND_MAX);
        assert!(kept.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)), "{kept}");
        assert_eq!(Received::parse(None), Received::Unspecified);
    }
}
