//! Turning what the model typed into an FTS5 query that cannot fail.
//!
//! FTS5 has its own syntax (`AND`, `NEAR`, `column:`, `^`, parentheses); a
//! model's text is not written in it, and a stray quote would be a syntax
//! error instead of a search. So every word becomes a quoted string — FTS5
//! tokenizes inside it, so "two-factor" is the phrase `two factor` — and
//! only two things keep a meaning: text in double quotes is one phrase, and
//! a trailing `*` asks for a prefix. Words are ANDed; [`FtsQuery::any`] is
//! the OR of the same terms, the fallback when all of them never meet.

/// A query in FTS5 syntax, built from terms that are each safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsQuery {
    terms: Vec<String>,
}

impl FtsQuery {
    /// `None` when the text has nothing to search for (no letter or digit).
    pub fn parse(text: &str) -> Option<FtsQuery> {
        let mut terms = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(|character: char| !character.is_whitespace()) {
            rest = &rest[start..];
            let (word, after) = if let Some(quoted) = rest.strip_prefix('"') {
                match quoted.find('"') {
                    Some(end) => (&quoted[..end], &quoted[end + 1..]),
                    None => (quoted, ""),
                }
            } else {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            };
            rest = after;
            let prefix = word.ends_with('*');
            let word = word.trim_end_matches('*');
            if !word.chars().any(char::is_alphanumeric) {
                continue;
            }
            let quoted = format!("\"{}\"", word.replace('"', "\"\""));
            terms.push(if prefix { format!("{quoted}*") } else { quoted });
        }
        (!terms.is_empty()).then_some(FtsQuery { terms })
    }

    /// Every term must occur in the passage (or its heading).
    pub fn all(&self) -> String {
        self.terms.join(" ")
    }

    /// Any term may occur; bm25 still ranks passages with more terms first.
    pub fn any(&self) -> String {
        self.terms.join(" OR ")
    }

    pub fn term_count(&self) -> usize {
        self.terms.len()
    }
}

#[cfg(test)]
mod tests {
    use super::FtsQuery;
    use proptest::prelude::*;

    #[test]
    fn words_are_quoted_phrases_kept_and_prefixes_allowed() {
        let query =
            FtsQuery::parse(r#"budget "§3. Budget prévisionnel" two-factor auth* ( ) OR"#).unwrap();
        assert_eq!(query.all(), r#""budget" "§3. Budget prévisionnel" "two-factor" "auth"* "OR""#);
        assert_eq!(query.term_count(), 5);
        assert_eq!(FtsQuery::parse("  ... -- \"\" "), None);
        assert_eq!(FtsQuery::parse(r#"say "hi"#).unwrap().all(), r#""say" "hi""#);
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
                for fts in [query.all(), query.any()] {
                    let mut statement = connection.prepare("SELECT rowid FROM t WHERE t MATCH ?1").unwrap();
                    let result: Result<Vec<i64>, _> =
                        statement.query_map([&fts], |row| row.get(0)).unwrap().collect();
                    prop_assert!(result.is_ok(), "{fts}: {result:?}");
                }
            }
        }
    }
}
