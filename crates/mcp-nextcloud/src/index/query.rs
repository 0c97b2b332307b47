//! Turning what the model typed into an FTS5 query that cannot fail.
//!
//! FTS5 has its own syntax (`AND`, `NEAR`, `column:`, `^`, parentheses); a
//! model's text is not written in it, and a stray quote would be a syntax
//! error instead of a search. So every word becomes quoted strings — one per
//! distinct stem the languages give it ([`super::words`]), ORed, since the
//! index holds stems — and only two things keep a meaning: text in double
//! quotes is one phrase, and a trailing `*` asks for a prefix (of the word
//! as typed, lowercased, not of its stem).
//!
//! Stop words never drive a match: words that are stop words in the
//! query's language ("how", "can", "the", "le") are left out of both
//! queries unless the query has nothing else. The content words are ANDed
//! ([`FtsQuery::all`]); [`FtsQuery::any`] is their OR, the fallback when
//! they never meet, which the search ranks by how many distinct content
//! words a passage has ([`FtsQuery::terms`] gives them one by one).

use super::words::{self, Language};
use std::collections::HashSet;

/// A query in FTS5 syntax, built from terms that are each safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsQuery {
    /// The words that decide a match (every word when all are stop words).
    terms: Vec<Term>,
}

/// One word or phrase of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The FTS5 expression: one quoted string, or several ORed in
    /// parentheses.
    fts: String,
    /// Per language (in [`Language::ALL`] order), the stems of the term's
    /// tokens; a prefix term's last token is in `prefix` instead.
    stems: Vec<Vec<String>>,
    prefix: Option<String>,
}

impl FtsQuery {
    /// `None` when the text has nothing to search for (no letter or digit).
    pub fn parse(text: &str) -> Option<FtsQuery> {
        let language = words::detect(text);
        let mut content = Vec::new();
        let mut stop = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(|character: char| !character.is_whitespace()) {
            rest = &rest[start..];
            let (word, after, quoted) = if let Some(quoted) = rest.strip_prefix('"') {
                match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..], true),
                    None => (quoted, "", true),
                }
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                (&rest[..end], &rest[end..], false)
            };
            rest = after;
            let prefix = word.ends_with('*');
            let tokens: Vec<String> =
                words::tokens(word.trim_end_matches('*')).map(|token| token.lowercase).collect();
            if tokens.is_empty() {
                continue;
            }
            let is_stop =
                !quoted && !prefix && tokens.iter().all(|token| language.is_stop_word(token));
            let term = Term::new(&tokens, prefix);
            if is_stop { stop.push(term) } else { content.push(term) }
        }
        let terms = if content.is_empty() { stop } else { content };
        (!terms.is_empty()).then_some(FtsQuery { terms })
    }

    /// Every term must occur in the passage (or its heading). The `AND` is
    /// spelled out: FTS5 calls an implicit AND of a parenthesised group and
    /// an empty phrase (a word of letters its older Unicode tables do not
    /// know) a syntax error.
    pub fn all(&self) -> String {
        self.terms.iter().map(|term| term.fts.as_str()).collect::<Vec<_>>().join(" AND ")
    }

    /// Any term may occur; the search ranks passages with more distinct
    /// terms first.
    pub fn any(&self) -> String {
        self.terms.iter().map(|term| term.fts.as_str()).collect::<Vec<_>>().join(" OR ")
    }

    /// The terms' FTS5 expressions, one by one.
    pub fn terms(&self) -> Vec<String> {
        self.terms.iter().map(|term| term.fts.clone()).collect()
    }

    /// For each term, per language (in [`Language::ALL`] order), the stems
    /// of its whole tokens: the term's FTS5 expression matches any one
    /// language's phrase of them. Public so the grep benchmark's brute force
    /// matches what FTS5 is asked to.
    pub fn term_stems(&self) -> Vec<&[Vec<String>]> {
        self.terms.iter().map(|term| term.stems.as_slice()).collect()
    }

    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Which of `text`'s tokens (a passage in `language`) are the query's
    /// words: for each token, the index of the term it belongs to.
    pub fn matches(&self, text: &str, language: Language) -> Vec<(words::Token, usize)> {
        let position = Language::ALL.iter().position(|each| *each == language).unwrap_or(0);
        let stems: Vec<HashSet<&str>> = self
            .terms
            .iter()
            .map(|term| term.stems[position].iter().map(String::as_str).collect())
            .collect();
        let prefixes: Vec<Option<String>> =
            self.terms.iter().map(|term| term.prefix.as_deref().map(words::fold)).collect();
        let mut found = Vec::new();
        for token in words::tokens(text) {
            let stem = language.stem(&token.lowercase);
            let folded = words::fold(&token.lowercase);
            let term = (0..self.terms.len()).find(|index| {
                stems[*index].contains(stem.as_str())
                    || prefixes[*index].as_deref().is_some_and(|prefix| folded.starts_with(prefix))
            });
            if let Some(term) = term {
                found.push((token, term));
            }
        }
        found
    }
}

impl Term {
    fn new(tokens: &[String], prefix: bool) -> Term {
        let (whole, last) = match (prefix, tokens.split_last()) {
            (true, Some((last, whole))) => (whole, Some(words::fold(last))),
            _ => (tokens, None),
        };
        let stems: Vec<Vec<String>> = Language::ALL
            .iter()
            .map(|language| whole.iter().map(|token| language.stem(token)).collect())
            .collect();
        let mut variants: Vec<String> = Vec::new();
        for stems in &stems {
            let mut phrase = stems.join(" ");
            if let Some(last) = &last {
                if !phrase.is_empty() {
                    phrase.push(' ');
                }
                phrase.push_str(last);
            }
            // Tokens are letters and digits only: nothing to escape.
            let quoted =
                if last.is_some() { format!("\"{phrase}\"*") } else { format!("\"{phrase}\"") };
            if !variants.contains(&quoted) {
                variants.push(quoted);
            }
        }
        let fts = if variants.len() == 1 {
            variants.remove(0)
        } else {
            format!("({})", variants.join(" OR "))
        };
        Term { fts, stems, prefix: last }
    }
}

#[cfg(test)]
mod tests {
    use super::FtsQuery;
    use crate::index::words::{self, Language};
    use proptest::prelude::*;

    #[test]
    fn words_become_their_stems_phrases_kept_and_prefixes_allowed() {
        let query = FtsQuery::parse(r#"budgets "§3. Budget prévisionnel" two-factor auth* ( ) OR"#)
            .unwrap();
        // Some stemmers leave "budgets" whole: each distinct stem is asked
        // for. "OR" is an English stop word, and no FTS5 operator here.
        assert_eq!(
            query.all(),
            r#"("budget" OR "budgets") AND "3 budget previsionnel" AND "two factor" AND "auth"*"#
        );
        assert_eq!(query.term_count(), 4);
        assert_eq!(FtsQuery::parse("  ... -- \"\" "), None);
        assert_eq!(FtsQuery::parse(r#"say "hi"#).unwrap().all(), r#""say" AND "hi""#);
    }

    #[test]
    fn a_word_matches_its_stem_in_every_language() {
        let query = FtsQuery::parse("purges").unwrap();
        assert!(query.all().contains(r#""purg""#), "{}", query.all());
        let query = FtsQuery::parse("configurations").unwrap();
        assert!(query.all().starts_with('(') && query.all().contains(" OR "), "{}", query.all());
    }

    #[test]
    fn stop_words_never_drive_a_match() {
        let query = FtsQuery::parse("How can I purge the old versions?").unwrap();
        assert_eq!(query.term_count(), 3, "{}", query.all());
        assert!(!query.all().contains("\"how\""), "{}", query.all());
        // A French question drops French stop words.
        let query = FtsQuery::parse("Où sont les sauvegardes de la base ?").unwrap();
        assert_eq!(query.term_count(), 2, "{}", query.all());
        // Only stop words: they are the query.
        assert_eq!(FtsQuery::parse("the who").unwrap().term_count(), 2);
        // Quoted, a stop word is meant.
        assert_eq!(FtsQuery::parse(r#"purge "the""#).unwrap().term_count(), 2);
    }

    #[test]
    fn matches_find_inflected_forms_in_the_passage() {
        let query = FtsQuery::parse("purge updates").unwrap();
        let text = "Purging the cache updated nothing; purges run nightly.";
        let found: Vec<(&str, usize)> = query
            .matches(text, Language::English)
            .into_iter()
            .map(|(token, term)| (&text[token.start..token.end], term))
            .collect();
        assert_eq!(found, [("Purging", 0), ("updated", 1), ("purges", 0)]);
        let _ = words::detect(text);
    }

    proptest! {
        /// Whatever the model types, the query is valid FTS5 syntax.
        #[test]
        fn any_text_gives_a_query_fts5_accepts(text in "\\PC{0,40}") {
            let connection = rusqlite::Connection::open_in_memory().unwrap();
            connection
                .execute_batch("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')")
                .unwrap();
            if let Some(query) = FtsQuery::parse(&text) {
                let mut all = vec![query.all(), query.any()];
                all.extend(query.terms());
                for fts in all {
                    let mut statement = connection.prepare("SELECT rowid FROM t WHERE t MATCH ?1").unwrap();
                    let result: Result<Vec<i64>, _> =
                        statement.query_map([&fts], |row| row.get(0)).unwrap().collect();
                    prop_assert!(result.is_ok(), "{fts}: {result:?}");
                }
            }
        }
    }
}
