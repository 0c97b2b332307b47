//! Words as the index compares them: tokens, their language, their stems.
//!
//! A passage is found by what its words mean, not by their exact form:
//! "purges" must meet "purge" and "mises à jour" must meet "mise à jour".
//! So the index holds each passage's *stems* (Snowball, by the document's
//! language) and a query is stemmed the same way, while the text shown —
//! snippets, offsets, what `files_read` serves — is always the original.
//!
//! Tokens are what SQLite's `unicode61` tokenizer calls tokens: maximal runs
//! of letters and digits, everything else separates. They are lowercased and
//! their accents folded *before* stemming: the French stemmer reads "é"
//! better than "e", but people and models type "securite" for "sécurité",
//! and only folding first gives both the same stem.
//!
//! A document's language is the one whose stop words it uses most (NLTK's
//! lists, the Snowball project's own); five languages have stemmers here,
//! anything else reads as English. A query is too short for that to be
//! reliable, so a query word is looked up under every language's stemmer
//! and matches any of its stems; only the choice of which of its words are
//! stop words uses the query's own (stop-word) language.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashSet;
use std::sync::LazyLock;

/// A language the index stems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Language {
    #[default]
    English,
    French,
    German,
    Spanish,
    Italian,
}

impl Language {
    pub const ALL: [Language; 5] = [
        Language::English,
        Language::French,
        Language::German,
        Language::Spanish,
        Language::Italian,
    ];

    /// The ISO 639-1 code, as stored in the index.
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::French => "fr",
            Language::German => "de",
            Language::Spanish => "es",
            Language::Italian => "it",
        }
    }

    /// The language of `code`; English for a code the index does not know
    /// (rows written before languages were stored hold none).
    pub fn from_code(code: &str) -> Language {
        Language::ALL.into_iter().find(|language| language.code() == code).unwrap_or_default()
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Language::English => Algorithm::English,
            Language::French => Algorithm::French,
            Language::German => Algorithm::German,
            Language::Spanish => Algorithm::Spanish,
            Language::Italian => Algorithm::Italian,
        }
    }

    fn index(self) -> usize {
        Language::ALL.iter().position(|language| *language == self).unwrap_or(0)
    }

    /// The stem of one lowercase token, accents folded first (see the
    /// module docs: both sides of a comparison fold before stemming).
    pub fn stem(self, token: &str) -> String {
        STEMMERS[self.index()].stem(&fold(token)).into_owned()
    }

    pub fn is_stop_word(self, lowercase: &str) -> bool {
        STOP_WORDS[self.index()].contains(fold(lowercase).as_str())
    }
}

static STEMMERS: LazyLock<Vec<Stemmer>> = LazyLock::new(|| {
    Language::ALL.iter().map(|language| Stemmer::create(language.algorithm())).collect()
});

/// Each language's stop words, accents folded.
static STOP_WORDS: LazyLock<Vec<HashSet<String>>> = LazyLock::new(|| {
    Language::ALL
        .iter()
        .map(|language| {
            stop_words::lookup(language.code())
                .unwrap_or_default()
                .iter()
                .map(|word| fold(word))
                .collect()
        })
        .collect()
});

/// A token of a text: its byte range and its lowercase form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub end: usize,
    pub lowercase: String,
}

/// The tokens of `text`, in order.
pub fn tokens(text: &str) -> impl Iterator<Item = Token> + '_ {
    let mut characters = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = characters.find(|(_, character)| character.is_alphanumeric())?;
        let mut end = text.len();
        while let Some(&(index, character)) = characters.peek() {
            if !character.is_alphanumeric() {
                end = index;
                break;
            }
            characters.next();
        }
        Some(Token { start, end, lowercase: text[start..end].to_lowercase() })
    })
}

/// How many of a document's first tokens decide its language.
const DETECT_TOKENS_MAX: usize = 20_000;

/// The language whose stop words `text` uses most; English when it uses
/// none of any (or ties with English).
pub fn detect(text: &str) -> Language {
    detect_in([text])
}

/// [`detect`] over a document given in pieces (its passages).
pub fn detect_in<'a>(pieces: impl IntoIterator<Item = &'a str>) -> Language {
    let mut counts = [0usize; Language::ALL.len()];
    let all = pieces.into_iter().flat_map(tokens);
    for token in all.take(DETECT_TOKENS_MAX) {
        for language in Language::ALL {
            if language.is_stop_word(&token.lowercase) {
                counts[language.index()] += 1;
            }
        }
    }
    let mut best = Language::English;
    for language in Language::ALL {
        if counts[language.index()] > counts[best.index()] {
            best = language;
        }
    }
    best
}

/// `text` without its accents, as FTS5's `remove_diacritics` compares
/// tokens ("sécurité" and "securite" are one word to the index).
pub fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    use unicode_normalization::char::is_combining_mark;
    text.nfd().filter(|character| !is_combining_mark(*character)).collect()
}

/// `text` as the index stores it for matching: its tokens' stems in order,
/// separated by spaces (so phrases still match as phrases).
pub fn stems(text: &str, language: Language) -> String {
    let mut stems = String::with_capacity(text.len());
    for token in tokens(text) {
        if !stems.is_empty() {
            stems.push(' ');
        }
        stems.push_str(&language.stem(&token.lowercase));
    }
    stems
}

#[cfg(test)]
mod tests {
    use super::{Language, detect, fold, stems, tokens};
    use proptest::prelude::*;

    #[test]
    fn inflections_share_a_stem_in_each_language() {
        let english = Language::English;
        assert_eq!(stems("purges", english), stems("purge", english));
        assert_eq!(stems("Updated", english), stems("update", english));
        assert_eq!(stems("connections", english), stems("connecting", english));
        let french = Language::French;
        assert_eq!(stems("mises à jour", french), stems("mise à jour", french));
        assert_eq!(stems("sauvegardes", french), stems("sauvegarder", french));
        assert_eq!(stems("Dateien", Language::German), stems("Datei", Language::German));
    }

    #[test]
    fn folding_drops_accents_only() {
        assert_eq!(fold("Sécurité élevée, Übersicht"), "Securite elevee, Ubersicht");
    }

    #[test]
    fn tokens_are_letter_and_digit_runs_with_their_byte_ranges() {
        let text = "Two-factor §3.4 Zugriffsrechte, élevés";
        let found: Vec<(usize, usize, String)> =
            tokens(text).map(|token| (token.start, token.end, token.lowercase)).collect();
        let words: Vec<&str> = found.iter().map(|(start, end, _)| &text[*start..*end]).collect();
        assert_eq!(words, ["Two", "factor", "3", "4", "Zugriffsrechte", "élevés"]);
        assert_eq!(found[5].2, "élevés");
    }

    #[test]
    fn a_document_is_in_the_language_of_its_stop_words() {
        assert_eq!(
            detect("The backup runs every night and keeps the last copies."),
            Language::English
        );
        assert_eq!(
            detect("La sauvegarde est lancée chaque nuit et garde les dernières copies."),
            Language::French
        );
        assert_eq!(
            detect("Die Sicherung läuft jede Nacht und behält die letzten Kopien."),
            Language::German
        );
        assert_eq!(
            detect("Il backup viene eseguito ogni notte e conserva le copie."),
            Language::Italian
        );
        assert_eq!(
            detect("La copia de seguridad se ejecuta cada noche y conserva las copias."),
            Language::Spanish
        );
        assert_eq!(detect("1234 5678"), Language::English);
    }

    proptest! {
        /// Any text tokenizes into in-bounds ranges on character boundaries,
        /// and stemming never panics.
        #[test]
        fn any_text_tokenizes_within_bounds(text in "\\PC{0,80}") {
            for token in tokens(&text) {
                prop_assert!(token.start < token.end && token.end <= text.len());
                prop_assert!(text.is_char_boundary(token.start) && text.is_char_boundary(token.end));
            }
            for language in Language::ALL {
                let _ = stems(&text, language);
            }
        }
    }
}
