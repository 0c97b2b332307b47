//! Tags of a prompt's structure that a model echoes into its prose:
//! `</calendar_example>`, or HTML-escaped as `&lt;/calendar_example &gt;`
//! (seen from SmolLM2). A prompt-structure tag is one whose name joins
//! lowercase words with `_`; a person's answer never contains one outside
//! code, so such a tag is dropped from what is shown (the text around it
//! stays). What is dropped: every escaped one, and raw closing ones. A raw
//! opening tag is kept: `<your_name>` is how answers write a placeholder.
//! Inside a code span or fence nothing is touched.

/// Longer names are not tags: the scan gives up rather than hold prose.
const MAX_NAME: usize = 48;

#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// A prompt-structure tag of this many bytes.
    Tag(usize),
    /// The text ends inside what may still become one.
    Maybe,
    No,
}

/// Drops the prompt-structure tags from `text`; returns what may be shown
/// and how much of `text` it stands for. Unless `complete`, a possible
/// tag cut by the end of `text` is not consumed: the caller keeps it and
/// scans it again with what follows. `in_code` carries the code-span state
/// from one call to the next.
pub(crate) fn strip(text: &str, in_code: &mut bool, complete: bool) -> (String, usize) {
    let mut shown = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(ch) = text[at..].chars().next() {
        if ch == '`' {
            *in_code = !*in_code;
        } else if (ch == '<' || ch == '&') && !*in_code {
            match tag_at(&text[at..]) {
                Found::Tag(len) => {
                    at += len;
                    continue;
                }
                Found::Maybe if !complete => return (shown, at),
                Found::Maybe | Found::No => {}
            }
        }
        shown.push(ch);
        at += ch.len_utf8();
    }
    (shown, at)
}

fn tag_at(text: &str) -> Found {
    let (escaped, body) = if let Some(body) = text.strip_prefix("&lt;") {
        (true, body)
    } else if let Some(body) = text.strip_prefix('<') {
        (false, body)
    } else if "&lt;".starts_with(text) {
        return Found::Maybe;
    } else {
        return Found::No;
    };
    let (closing, body) = match body.strip_prefix('/') {
        Some(body) => (true, body),
        None => (false, body),
    };
    let name_len = body
        .find(|ch: char| !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'))
        .unwrap_or(body.len());
    if name_len > MAX_NAME || body[..name_len].starts_with(|ch: char| !ch.is_ascii_lowercase()) {
        return Found::No;
    }
    let after = &body[name_len..];
    if after.is_empty() {
        return Found::Maybe;
    }
    if !is_structure_name(&body[..name_len]) || !(escaped || closing) {
        return Found::No;
    }
    let after = after.trim_start_matches(' ');
    let after = after.strip_prefix('/').unwrap_or(after);
    let close = if escaped { "&gt;" } else { ">" };
    if after.starts_with(close) {
        Found::Tag(text.len() - after.len() + close.len())
    } else if close.starts_with(after) {
        Found::Maybe
    } else {
        Found::No
    }
}

/// `calendar_example`, `search_results`: words joined by single `_`.
fn is_structure_name(name: &str) -> bool {
    name.contains('_') && name.split('_').all(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        strip(text, &mut false, true).0
    }

    #[test]
    fn echoed_structure_tags_are_dropped_and_the_prose_kept() {
        assert_eq!(
            shown("The review is on Tuesday.&lt;/calendar_example &gt;"),
            "The review is on Tuesday."
        );
        assert_eq!(shown("&lt;search_results&gt;Two files.&lt;/search_results&gt;"), "Two files.");
        assert_eq!(shown("Done.</tool_output> Anything else?"), "Done. Anything else?");
        assert_eq!(shown("A line.&lt;page_break/&gt;"), "A line.");
    }

    #[test]
    fn what_is_not_a_structure_tag_is_shown() {
        for text in [
            "Write <your_name> at the top.",
            "Use the <table> tag, or &lt;b&gt; escaped.",
            "a < b and b > c; Tom & Jerry; &amp; &lt; &gt;",
            "</Calendar_Example>",
            "&lt;/_private&gt; &lt;/a__b&gt; &lt;/a_b c&gt;",
            "In code: `</tool_output>` and\n```\n&lt;/a_b&gt;\n```",
        ] {
            assert_eq!(shown(text), text);
        }
    }

    #[test]
    fn a_tag_cut_by_the_end_of_a_piece_waits_for_the_rest() {
        let mut in_code = false;
        let (now, used) = strip("Tuesday.&lt;/calendar_ex", &mut in_code, false);
        assert_eq!((now.as_str(), used), ("Tuesday.", 8));
        for cut in ["&", "&l", "&lt", "&lt;", "&lt;/", "&lt;/a_b ", "&lt;/a_b &g", "</a_b"] {
            assert_eq!(strip(cut, &mut false, false), (String::new(), 0), "{cut}");
            assert_eq!(strip(cut, &mut false, true).0, cut, "{cut} at the end is prose");
        }
    }

    #[test]
    fn the_code_state_carries_from_piece_to_piece() {
        let mut in_code = false;
        assert_eq!(strip("See `", &mut in_code, false).0, "See `");
        assert_eq!(strip("</a_b>` then </a_b>.", &mut in_code, false).0, "</a_b>` then .");
        assert!(!in_code);
    }
}
