//! What of a streamed answer may be shown as it comes. Two things are held
//! back: an answer's start while it may still be calls written as text
//! (see [`crate::text_calls`]), and, after some prose, whatever opens with
//! markup that can only be a call's or a chat template's — a model that
//! says "Let me look." and then writes `<tool_call>…`, echoes a
//! `<tool_response>` it was shown, or runs on into the next turn's
//! `<|im_start|>`. Prose streams at once, but for the few characters that
//! may be the start of such markup. Tags of a prompt's structure echoed in
//! the prose are dropped as it streams (see [`crate::prompt_tags`]).

use crate::{prompt_tags, text_calls};

/// Markup that can only be a call's, after prose: read as calls at the end.
const CALL_MARKERS: &[&str] = &["<tool_call>", "[TOOL_CALLS]", "\nfunctions."];
/// A chat template's own tokens and tags: never part of an answer, and
/// nothing after them is (an echoed tool result, the next turn).
const TEMPLATE_MARKERS: &[&str] = &[
    "<tool_response>",
    "</tool_response>",
    "</tool_call>",
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|endoftext|>",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The answer so far may still be wholly calls.
    Opening,
    Prose,
    /// Markup began after prose: nothing more is shown.
    Markup,
}

#[derive(Debug)]
pub(crate) struct Holdback {
    phase: Phase,
    held: String,
    /// Whether the prose shown so far ends inside a code span or fence.
    in_code: bool,
}

/// What was still held when the answer ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// The whole answer, which started like calls written as text.
    Opening(String),
    /// The end of the prose: it only looked like the start of markup.
    Prose(String),
    /// Markup that can only be calls, after prose.
    Calls(String),
    /// A template's tokens and what followed them: dropped.
    Template(String),
}

impl Holdback {
    pub(crate) fn new() -> Holdback {
        Holdback { phase: Phase::Opening, held: String::new(), in_code: false }
    }

    /// Takes the next piece of the answer; what may be shown now.
    pub(crate) fn push(&mut self, delta: &str) -> String {
        self.held.push_str(delta);
        match self.phase {
            Phase::Opening if text_calls::may_be_calls(&self.held) => String::new(),
            Phase::Opening | Phase::Prose => {
                self.phase = Phase::Prose;
                self.prose()
            }
            Phase::Markup => String::new(),
        }
    }

    fn prose(&mut self) -> String {
        let first = CALL_MARKERS
            .iter()
            .chain(TEMPLATE_MARKERS)
            .filter_map(|marker| self.held.find(marker))
            .min();
        let cut = match first {
            Some(at) => at,
            // Keep back the longest end that may begin a marker.
            None => self
                .held
                .char_indices()
                .map(|(at, _)| at)
                .find(|&at| {
                    let end = &self.held[at..];
                    CALL_MARKERS
                        .iter()
                        .chain(TEMPLATE_MARKERS)
                        .any(|marker| marker.starts_with(end))
                })
                .unwrap_or(self.held.len()),
        };
        // Before markup nothing more comes: a tag cut there is prose.
        let markup = first.is_some();
        if markup {
            self.phase = Phase::Markup;
        }
        let (shown, used) = prompt_tags::strip(&self.held[..cut], &mut self.in_code, markup);
        self.held.drain(..used);
        shown
    }

    /// The answer ended: what is still held, and what it is.
    pub(crate) fn finish(self) -> Held {
        match self.phase {
            Phase::Opening => Held::Opening(self.held),
            Phase::Prose => {
                let mut in_code = self.in_code;
                Held::Prose(prompt_tags::strip(&self.held, &mut in_code, true).0)
            }
            Phase::Markup if CALL_MARKERS.iter().any(|marker| self.held.starts_with(marker)) => {
                Held::Calls(self.held)
            }
            Phase::Markup => Held::Template(self.held),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams `pieces` and returns what was shown and what was held.
    fn stream(pieces: &[&str]) -> (String, Held) {
        let mut holdback = Holdback::new();
        let shown: String = pieces.iter().map(|piece| holdback.push(piece)).collect();
        (shown, holdback.finish())
    }

    #[test]
    fn prose_streams_as_it_comes() {
        let mut holdback = Holdback::new();
        assert_eq!(holdback.push("The budget"), "The budget");
        assert_eq!(holdback.push(" is 40 000 €."), " is 40 000 €.");
        assert_eq!(holdback.finish(), Held::Prose(String::new()));
    }

    #[test]
    fn a_call_after_prose_is_held_from_its_first_character() {
        let (shown, held) =
            stream(&["Let me look.\n", "<tool", "_call>{\"name\": \"a\"}", "</tool_call>"]);
        assert_eq!(shown, "Let me look.\n");
        assert_eq!(held, Held::Calls("<tool_call>{\"name\": \"a\"}</tool_call>".into()));
        let (shown, held) = stream(&["I will search.", "\nfunc", "tions.files_grep: {}"]);
        assert_eq!(shown, "I will search.");
        assert_eq!(held, Held::Calls("\nfunctions.files_grep: {}".into()));
    }

    #[test]
    fn template_tokens_and_what_follows_them_are_never_shown() {
        let (shown, held) = stream(&["Done.", "<|im_", "end|>\n<|im_start|>user\nthanks"]);
        assert_eq!(shown, "Done.");
        assert_eq!(held, Held::Template("<|im_end|>\n<|im_start|>user\nthanks".into()));
        let (shown, _) = stream(&["Found it. <tool_response>{\"files\": []}</tool_response>"]);
        assert_eq!(shown, "Found it. ");
    }

    #[test]
    fn what_only_looked_like_markup_is_shown_at_the_end() {
        let (shown, held) = stream(&["Compare a < b and <to"]);
        assert_eq!(shown, "Compare a < b and ");
        assert_eq!(held, Held::Prose("<to".into()));
        let (shown, held) = stream(&["Use the <table> tag."]);
        assert_eq!((shown.as_str(), held), ("Use the <table> tag.", Held::Prose(String::new())));
        let (shown, _) = stream(&["Two functions. Both work."]);
        assert_eq!(shown, "Two functions. Both work.");
    }

    #[test]
    fn an_echoed_structure_tag_is_dropped_even_when_it_comes_in_pieces() {
        let (shown, held) = stream(&[
            "The review is on Tuesday.",
            "&lt;/calendar",
            "_example &",
            "gt;",
            " See you.",
        ]);
        assert_eq!(
            (shown.as_str(), held),
            ("The review is on Tuesday. See you.", Held::Prose("".into()))
        );
        let (shown, held) = stream(&["Done.&lt;/a_b"]);
        assert_eq!(shown, "Done.");
        assert_eq!(held, Held::Prose("&lt;/a_b".into()), "cut by the end: it was prose");
        let (shown, held) = stream(&["Done &lt;/a_b", "<|im_end|>user"]);
        assert_eq!(shown, "Done &lt;/a_b");
        assert_eq!(held, Held::Template("<|im_end|>user".into()));
    }

    #[test]
    fn an_answer_that_may_be_calls_is_held_whole() {
        let (shown, held) = stream(&["{\"name\": \"a\", ", "\"arguments\": {}}"]);
        assert_eq!(shown, "");
        assert_eq!(held, Held::Opening("{\"name\": \"a\", \"arguments\": {}}".into()));
    }
}
