//! The demo mode: a stand-in that lets the whole stack run without a real
//! model, doing the one thing the demo needs — search the user's documents
//! and quote what it finds, with citations.
//!
//! On a user's question it calls `files_grep` with the question's content
//! words; on a `files_grep` result it quotes the passages, each with its
//! section heading and path. It never pretends: every answer says it comes
//! from a scripted stand-in, and when there is nothing (no passage, an index
//! still being built, no search tool) it says exactly that. It is
//! deterministic, so a demo run can be replayed and tested.
//!
//! It reads `files_grep`'s text output (lines `- PATH — HEADING (fileid N,
//! offset O, L bytes)` each followed by an indented snippet), not its
//! structured content, because the text is what a model is shown.

use crate::answer::Reply;
use crate::request::ChatRequest;
use serde_json::json;

/// The tool the demo searches with.
pub const GREP_TOOL: &str = "files_grep";

/// At most this many words of the question go into the query (files_grep
/// wants all of them, so more makes matches rarer, not better).
pub const QUERY_WORDS_MAX: usize = 6;

/// At most this many passages are quoted.
pub const PASSAGES_QUOTED_MAX: usize = 5;

/// Words dropped from a question before searching: French.
const STOP_WORDS_FR: &[&str] = &[
    "le",
    "la",
    "les",
    "un",
    "une",
    "des",
    "du",
    "de",
    "au",
    "aux",
    "et",
    "ou",
    "où",
    "en",
    "dans",
    "sur",
    "sous",
    "pour",
    "par",
    "avec",
    "sans",
    "ce",
    "cet",
    "cette",
    "ces",
    "ça",
    "cela",
    "ceci",
    "qui",
    "que",
    "qu",
    "quoi",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "quand",
    "comment",
    "pourquoi",
    "combien",
    "est",
    "sont",
    "était",
    "ai",
    "as",
    "avons",
    "avez",
    "ont",
    "été",
    "être",
    "fait",
    "faire",
    "il",
    "elle",
    "ils",
    "elles",
    "je",
    "tu",
    "nous",
    "vous",
    "on",
    "me",
    "moi",
    "te",
    "toi",
    "se",
    "mon",
    "ma",
    "mes",
    "ton",
    "ta",
    "tes",
    "son",
    "sa",
    "ses",
    "notre",
    "nos",
    "votre",
    "vos",
    "leur",
    "leurs",
    "ne",
    "pas",
    "plus",
    "très",
    "tout",
    "tous",
    "toute",
    "toutes",
    "peux",
    "peut",
    "pouvez",
    "dis",
    "dit",
    "dire",
    "donne",
    "montre",
    "trouve",
    "cherche",
    "concernant",
    "sujet",
    "svp",
    "stp",
    "merci",
    "bonjour",
    "fichier",
    "fichiers",
    "document",
    "documents",
];

/// Words dropped from a question before searching: English.
const STOP_WORDS_EN: &[&str] = &[
    "the",
    "an",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "from",
    "by",
    "with",
    "about",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "do",
    "does",
    "did",
    "have",
    "has",
    "had",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "me",
    "my",
    "we",
    "our",
    "you",
    "your",
    "he",
    "she",
    "it",
    "its",
    "they",
    "them",
    "their",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "can",
    "could",
    "would",
    "should",
    "will",
    "may",
    "might",
    "please",
    "tell",
    "show",
    "find",
    "give",
    "say",
    "says",
    "said",
    "know",
    "let",
    "look",
    "search",
    "any",
    "some",
    "all",
    "not",
    "no",
    "so",
    "if",
    "just",
    "also",
    "hi",
    "hello",
    "thanks",
    "file",
    "files",
    "document",
    "documents",
];

/// The language the demo answers in: the question's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    French,
}

/// The demo's answer to a request.
pub fn answer(request: &ChatRequest) -> Reply {
    let last = request.last_message();
    let question = request.last_user().map(|message| message.question()).unwrap_or_default();
    let language = Language::detect(&question);
    let grep_tool = request.tool_names.iter().find(|name| is_grep_tool(name));
    match last.role.as_str() {
        "user" => {
            let Some(grep_tool) = grep_tool else {
                return Reply::text(language.no_search_tool());
            };
            let query = content_words(&question);
            if query.is_empty() {
                return Reply::text(language.no_words());
            }
            Reply::tool_call(grep_tool.clone(), &json!({ "query": query }))
        }
        "tool" => {
            let call = request.call_answered_by(last);
            match call {
                Some(call) if is_grep_tool(&call.function.name) => {
                    let query = call.function.arguments_value()["query"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let result = GrepResult::parse(&last.text());
                    Reply::text(language.grep_answer(&query, &result))
                }
                _ => Reply::text(language.not_a_grep_result(
                    call.map(|call| call.function.name.as_str()).unwrap_or("?"),
                )),
            }
        }
        _ => Reply::text(language.nothing_to_answer()),
    }
}

/// `files_grep`, or a name that ends with it after a separator (a client
/// that prefixes tools with their server's name).
pub fn is_grep_tool(name: &str) -> bool {
    name.strip_suffix(GREP_TOOL)
        .is_some_and(|prefix| prefix.is_empty() || prefix.ends_with(['_', '.', '/', '-', ':']))
}

/// The question's content words, lower-cased, in order, without repeats:
/// stop words and single letters dropped, at most [`QUERY_WORDS_MAX`].
pub fn content_words(question: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in words_of(question) {
        if words.len() == QUERY_WORDS_MAX {
            break;
        }
        let single_letter = word.chars().count() == 1 && !word.chars().all(char::is_numeric);
        if single_letter || is_stop_word(&word) || words.contains(&word) {
            continue;
        }
        words.push(word);
    }
    words.join(" ")
}

fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS_FR.contains(&word) || STOP_WORDS_EN.contains(&word)
}

/// What a `files_grep` text result says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrepResult {
    pub passages: Vec<Passage>,
    /// The index is still being built (the answer may be incomplete).
    pub building: bool,
    /// The tool said plainly that no passage matches.
    pub no_match: bool,
    /// The first line, kept to quote a result that is neither passages nor
    /// "no match" (a tool failure).
    pub first_line: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub path: String,
    pub heading: Option<String>,
    /// Without the `**` marks around matched words.
    pub snippet: String,
}

impl GrepResult {
    pub fn parse(text: &str) -> GrepResult {
        let lines: Vec<&str> = text.lines().collect();
        let mut passages = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("- ") else { continue };
            let Some(head_end) = rest.rfind(" (fileid ") else { continue };
            if !rest.ends_with(" bytes)") {
                continue;
            }
            let head = &rest[..head_end];
            let (path, heading) = match head.split_once(" — ") {
                Some((path, heading)) => (path, Some(heading.trim().to_string())),
                None => (head, None),
            };
            let snippet = lines
                .get(index + 1)
                .filter(|next| next.starts_with("  "))
                .map(|next| next.trim().replace("**", ""))
                .unwrap_or_default();
            passages.push(Passage { path: path.trim().to_string(), heading, snippet });
        }
        GrepResult {
            passages,
            building: text.contains("index is still being built"),
            no_match: text.contains("No passage matches"),
            first_line: lines.first().map(|line| line.trim().to_string()).unwrap_or_default(),
        }
    }
}

impl Passage {
    /// `«snippet» — heading, path`.
    fn citation(&self) -> String {
        let source = match &self.heading {
            Some(heading) => format!("{heading}, {}", self.path),
            None => self.path.clone(),
        };
        format!("- «{}» — {source}", self.snippet)
    }
}

impl Language {
    /// French when the question has more French stop words (and accents)
    /// than English ones; English otherwise.
    pub fn detect(question: &str) -> Language {
        let mut french = 0;
        let mut english = 0;
        for word in words_of(question) {
            french += usize::from(STOP_WORDS_FR.contains(&word.as_str()));
            english += usize::from(STOP_WORDS_EN.contains(&word.as_str()));
        }
        french += question.chars().filter(|c| "éèêàçùâôîû".contains(*c)).count().min(2);
        if french > english { Language::French } else { Language::English }
    }

    fn disclaimer(self) -> &'static str {
        match self {
            Language::English => {
                "(Demo mode: a scripted stand-in wrote this, not a language model.)"
            }
            Language::French => {
                "(Mode démo : ce texte vient d'un substitut scripté, pas d'un modèle de langage.)"
            }
        }
    }

    /// `english` or `french`, whichever this language is, then the disclaimer.
    fn disclaimed(self, english: &str, french: &str) -> String {
        let text = match self {
            Language::English => english,
            Language::French => french,
        };
        format!("{text} {}", self.disclaimer())
    }

    fn no_search_tool(self) -> String {
        self.disclaimed(
            "I cannot search your documents: the files_grep tool is not available here.",
            "Je ne peux pas chercher dans vos documents : l'outil files_grep n'est pas disponible ici.",
        )
    }

    fn no_words(self) -> String {
        self.disclaimed(
            "Ask me about something in your documents, with a few words to look for.",
            "Posez-moi une question sur vos documents, avec quelques mots à chercher.",
        )
    }

    fn nothing_to_answer(self) -> String {
        self.disclaimed(
            "The demo stand-in answers only a question or a files_grep result.",
            "Le substitut de démo ne répond qu'à une question ou à un résultat de files_grep.",
        )
    }

    fn not_a_grep_result(self, tool: &str) -> String {
        self.disclaimed(
            &format!(
                "The demo stand-in reads only files_grep results; it cannot use what {tool} returned."
            ),
            &format!(
                "Le substitut de démo ne lit que les résultats de files_grep ; il ne sait pas utiliser ce que {tool} a renvoyé."
            ),
        )
    }

    fn grep_answer(self, query: &str, result: &GrepResult) -> String {
        let mut paragraphs = Vec::new();
        if result.passages.is_empty() {
            let text = match (self, result.building, result.no_match) {
                (Language::English, true, _) => format!(
                    "I found no passage for “{query}” yet, but the search index is still being built: not every document has been read. Try again in a minute."
                ),
                (Language::French, true, _) => format!(
                    "Je n'ai trouvé aucun passage pour « {query} » pour l'instant, mais l'index de recherche est encore en construction : tous les documents n'ont pas été lus. Réessayez dans une minute."
                ),
                (Language::English, false, true) => {
                    format!("I found no passage for “{query}” in your documents.")
                }
                (Language::French, false, true) => {
                    format!("Je n'ai trouvé aucun passage pour « {query} » dans vos documents.")
                }
                (Language::English, false, false) => {
                    format!("The search returned no passage. It said: «{}»", result.first_line)
                }
                (Language::French, false, false) => format!(
                    "La recherche n'a renvoyé aucun passage. Elle a répondu : «{}»",
                    result.first_line
                ),
            };
            paragraphs.push(text);
        } else {
            paragraphs.push(match self {
                Language::English => {
                    format!("Here is what your documents say (search: “{query}”):")
                }
                Language::French => {
                    format!("Voici ce que disent vos documents (recherche : « {query} ») :")
                }
            });
            let citations: Vec<String> =
                result.passages.iter().take(PASSAGES_QUOTED_MAX).map(Passage::citation).collect();
            paragraphs.push(citations.join("\n"));
            if result.building {
                paragraphs.push(match self {
                    Language::English => "The search index is still being built, so there may be more.".to_string(),
                    Language::French => "L'index de recherche est encore en construction : il peut y avoir d'autres passages.".to_string(),
                });
            }
        }
        paragraphs.push(self.disclaimer().to_string());
        paragraphs.join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn request(messages: Value, tools: &[&str]) -> ChatRequest {
        let tools: Vec<Value> = tools
            .iter()
            .map(|name| json!({"type": "function", "function": {"name": name}}))
            .collect();
        let body = json!({"messages": messages, "tools": tools});
        ChatRequest::parse(body.to_string().as_bytes()).unwrap()
    }

    fn after_grep(question: &str, result: &str) -> ChatRequest {
        request(
            json!([
                {"role": "system", "content": "You are Tamebi."},
                {"role": "user", "content": question},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "files_grep", "arguments": "{\"query\":\"budget apollo\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": result},
            ]),
            &["files_read", "files_grep"],
        )
    }

    fn text(reply: Reply) -> String {
        assert!(reply.tool_calls.is_empty(), "{reply:?}");
        reply.text.unwrap()
    }

    /// What files_grep's `fn text` writes for two passages (copied from
    /// mcp-nextcloud's format, kept here as the contract).
    const TWO_PASSAGES: &str = "\
- Projects/Apollo/CR-reunion-mars.docx — §3. Budget prévisionnel (fileid 12, offset 812, 412 bytes)
  Le **budget** prévisionnel d'Apollo est de 120 k€ pour le T2.
- Projects/Apollo/budget.ods (fileid 14, offset 0, 96 bytes)
  Budget Apollo 2026 | Poste | Montant
To read a passage in context, call files_read with its path and offset; cite it by its section.";

    #[test]
    fn stop_words_are_dropped() {
        let check = |question: &str, expected: &str| assert_eq!(content_words(question), expected);
        check(
            "Quel est le budget prévisionnel du projet Apollo ?",
            "budget prévisionnel projet apollo",
        );
        check("What does the kickoff say about the Apollo budget?", "kickoff apollo budget");
        check("Qu'est-ce qu'on a décidé à la réunion de mars ?", "décidé réunion mars");
        check("budget Budget BUDGET", "budget");
        check("the of and", "");
        check("Section 3 of the plan", "section 3 plan");
        check("one two three four five six seven eight", "one two three four five six");
        check("Dans mes fichiers, trouve la facture d'EDF", "facture edf");
    }

    #[test]
    fn a_question_becomes_one_files_grep_call() {
        let reply = answer(&request(
            json!([{"role": "system", "content": "S"}, {"role": "user", "content": "Quel est le budget d'Apollo ?"}]),
            &["files_search", "files_grep"],
        ));
        assert_eq!(reply.text, None);
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].name, "files_grep");
        let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(arguments, json!({"query": "budget apollo"}));
    }

    #[test]
    fn a_prefixed_grep_tool_is_used_by_its_name() {
        assert!(is_grep_tool("files_grep"));
        assert!(is_grep_tool("nextcloud__files_grep"));
        assert!(is_grep_tool("nextcloud.files_grep"));
        assert!(!is_grep_tool("myfiles_grepper"));
        assert!(!is_grep_tool("xfiles_grep"));
        let reply = answer(&request(
            json!([{"role": "user", "content": "budget"}]),
            &["nextcloud__files_grep"],
        ));
        assert_eq!(reply.tool_calls[0].name, "nextcloud__files_grep");
    }

    #[test]
    fn without_files_grep_it_says_it_cannot_search() {
        let refusal = text(answer(&request(
            json!([{"role": "user", "content": "budget?"}]),
            &["files_read"],
        )));
        assert!(refusal.contains("cannot search"), "{refusal}");
        assert!(refusal.contains("not a language model"), "{refusal}");
    }

    #[test]
    fn passages_are_quoted_with_their_section_and_path() {
        let french = text(answer(&after_grep("Quel est le budget d'Apollo ?", TWO_PASSAGES)));
        assert_eq!(
            french,
            "Voici ce que disent vos documents (recherche : « budget apollo ») :\n\n\
             - «Le budget prévisionnel d'Apollo est de 120 k€ pour le T2.» — §3. Budget prévisionnel, Projects/Apollo/CR-reunion-mars.docx\n\
             - «Budget Apollo 2026 | Poste | Montant» — Projects/Apollo/budget.ods\n\n\
             (Mode démo : ce texte vient d'un substitut scripté, pas d'un modèle de langage.)"
        );
        let english = text(answer(&after_grep("What is the Apollo budget?", TWO_PASSAGES)));
        assert!(
            english.starts_with("Here is what your documents say (search: “budget apollo”):"),
            "{english}"
        );
        assert!(
            english.ends_with("(Demo mode: a scripted stand-in wrote this, not a language model.)")
        );
    }

    #[test]
    fn no_passage_is_said_honestly() {
        let none = "No passage matches. The documents may use other words: rephrase with synonyms.";
        let answer_text = text(answer(&after_grep("What is the Apollo budget?", none)));
        assert!(
            answer_text.starts_with("I found no passage for “budget apollo” in your documents.")
        );
        let building = "The index is still being built: 3 or more documents the user can open are still waiting to be read, so this is not a complete answer. No passage matches among the documents read so far.";
        let answer_text = text(answer(&after_grep("What is the Apollo budget?", building)));
        assert!(answer_text.contains("still being built"), "{answer_text}");
        assert!(answer_text.contains("Try again in a minute"), "{answer_text}");
        let with_passages = format!(
            "{TWO_PASSAGES}\nThe index is still being built: not every document the user can open has been read yet, so this is not a complete answer."
        );
        let answer_text = text(answer(&after_grep("What is the Apollo budget?", &with_passages)));
        assert!(answer_text.contains("CR-reunion-mars.docx"));
        assert!(answer_text.contains("there may be more"), "{answer_text}");
    }

    #[test]
    fn a_tool_failure_is_quoted_not_hidden() {
        let failure = "You cannot open Projects/Secret: ask its owner to share it.";
        let answer_text = text(answer(&after_grep("Apollo budget?", failure)));
        assert!(answer_text.contains(failure), "{answer_text}");
    }

    #[test]
    fn other_tools_results_are_not_read() {
        let reply = answer(&request(
            json!([
                {"role": "user", "content": "read it"},
                {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "files_read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "text"},
            ]),
            &["files_read", "files_grep"],
        ));
        assert!(text(reply).contains("cannot use what files_read returned"));
    }

    #[test]
    fn the_language_follows_the_question() {
        assert_eq!(Language::detect("Quel est le budget ?"), Language::French);
        assert_eq!(Language::detect("What is the budget?"), Language::English);
        assert_eq!(Language::detect("budget Apollo"), Language::English);
        assert_eq!(Language::detect("réunion Apollo"), Language::French);
    }

    #[test]
    fn the_demo_is_deterministic() {
        let request = after_grep("Quel est le budget ?", TWO_PASSAGES);
        assert_eq!(answer(&request), answer(&request));
    }
}
