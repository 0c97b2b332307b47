//! The few words of a passage a search result shows, matches marked.
//!
//! The index holds stems, not text, so FTS5's own `snippet()` has nothing
//! to cut from; this does what it did, on the passage's original text: a
//! window of [`SNIPPET_TOKENS`] tokens with the most distinct query words
//! (then the most matches, then the earliest), each match marked
//! `**like this**`, and `…` where the window cuts the passage.

use super::query::FtsQuery;
use super::words::Language;

/// Tokens a snippet shows.
pub const SNIPPET_TOKENS: usize = 24;

/// The snippet of `text` (a passage in `language`) for `query`.
pub fn snippet(text: &str, language: Language, query: &FtsQuery) -> String {
    let tokens: Vec<(usize, usize)> =
        super::words::tokens(text).map(|token| (token.start, token.end)).collect();
    if tokens.is_empty() {
        return String::new();
    }
    // For each token, the term it matches.
    let mut term_of: Vec<Option<usize>> = vec![None; tokens.len()];
    let matches = query.matches(text, language);
    let mut next = 0;
    for (token, term) in matches {
        while next < tokens.len() && tokens[next].0 < token.start {
            next += 1;
        }
        if next < tokens.len() && tokens[next].0 == token.start {
            term_of[next] = Some(term);
        }
    }
    let width = SNIPPET_TOKENS.min(tokens.len());
    let mut best = (0, 0, 0usize);
    for start in 0..=tokens.len() - width {
        let window = &term_of[start..start + width];
        let mut distinct: Vec<usize> = window.iter().flatten().copied().collect();
        let count = distinct.len();
        distinct.sort_unstable();
        distinct.dedup();
        let score = (distinct.len(), count);
        if score > (best.0, best.1) {
            best = (score.0, score.1, start);
        }
    }
    // Centre the chosen window's matches, as FTS5 does, so a match is not
    // left at the very edge when the passage goes on.
    let mut first = best.2;
    let matched: Vec<usize> =
        (first..first + width).filter(|index| term_of[*index].is_some()).collect();
    if let (Some(&earliest), Some(&latest)) = (matched.first(), matched.last()) {
        let spare = width - (latest - earliest + 1);
        first = earliest.saturating_sub(spare / 2).min(tokens.len() - width);
    }
    let last = first + width - 1;
    let mut out = String::new();
    let mut cursor = if first == 0 { 0 } else { tokens[first].0 };
    if first > 0 {
        out.push('…');
    }
    for index in first..=last {
        let (start, end) = tokens[index];
        out.push_str(&text[cursor..start]);
        if term_of[index].is_some() {
            out.push_str("**");
            out.push_str(&text[start..end]);
            out.push_str("**");
        } else {
            out.push_str(&text[start..end]);
        }
        cursor = end;
    }
    if last + 1 == tokens.len() {
        out.push_str(&text[cursor..]);
    } else {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{SNIPPET_TOKENS, snippet};
    use crate::index::query::FtsQuery;
    use crate::index::words::Language;

    #[test]
    fn a_short_passage_is_shown_whole_with_its_matches_marked() {
        let query = FtsQuery::parse("purge versions").unwrap();
        assert_eq!(
            snippet("Purging old versions frees space.", Language::English, &query),
            "**Purging** old **versions** frees space."
        );
    }

    #[test]
    fn a_long_passage_is_cut_around_the_most_distinct_words() {
        let filler = "word ".repeat(60);
        let text = format!("purge once. {filler}Here purge and versions meet. {filler}end");
        let query = FtsQuery::parse("purge versions").unwrap();
        let shown = snippet(&text, Language::English, &query);
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains("**purge** and **versions** meet"), "{shown}");
        let words = shown.trim_matches('…').split_whitespace().count();
        assert_eq!(words, SNIPPET_TOKENS);
    }

    #[test]
    fn an_accented_passage_matches_an_unaccented_word_through_its_stem() {
        let query = FtsQuery::parse("securite sauvegardes").unwrap();
        assert_eq!(
            snippet("La sécurité de la sauvegarde.", Language::French, &query),
            "La **sécurité** de la **sauvegarde**."
        );
    }
}
