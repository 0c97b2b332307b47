//! The prompt: the seeds' five sections, each its own file under `prompts/`
//! so editing prose never touches code — `identity`, `instructions`,
//! `data_handling`, `examples` in the system prompt, and `environment`. What
//! is deliberately not in it: the tool list, argument schemas and per-tool
//! rules; those arrive through the protocol or live in a tool's description
//! and error messages, paid for only when they matter.
//!
//! Order is for the provider's prefix cache: what never changes comes
//! first, what changes every turn last. The system prompt is the same for
//! every turn and every user, and chat templates render the tools right
//! after it (Qwen, Hermes) or near the end (Mistral); the environment —
//! the time, the facts, what is reachable — opens the latest question
//! instead ([`with_environment`]), so a turn re-reads only what follows the
//! last question rather than the whole prompt and every tool schema. (In
//! the system prompt it sat about 100 tokens in, before ~4.5k tokens of
//! tool schemas: 30 s of prompt reading per turn on two CPU cores.)
//!
//! The environment block is the one section built per turn, and it keeps
//! two facts apart that were once conflated, with the worst failure this
//! design has seen: the agent answered confidently while every tool call
//! failed, because it read "you have tools" as "you can reach the
//! workspace". Here each capability says both whether its tools were
//! listed and whether the workspace answered this turn.

const IDENTITY: &str = include_str!("../prompts/identity.md");
const INSTRUCTIONS: &str = include_str!("../prompts/instructions.md");
const DATA_HANDLING: &str = include_str!("../prompts/data_handling.md");
const EXAMPLES: &str = include_str!("../prompts/examples.md");

/// Memory facts shown per turn.
pub const MEMORY_FACTS_SHOWN_MAX: usize = 5;

/// What one MCP server (or local capability) offers this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// What it covers, in the user's terms: "files, calendar, contacts and Deck".
    pub covers: String,
    pub tools: usize,
    pub reach: Reach,
}

/// Whether the workspace behind a capability answered this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Its tools were listed with the user's credential.
    Reachable,
    /// The server did not answer: no tools from it this turn.
    ServerUnreachable,
    /// The server answered but refused the user's sign-in (expired or
    /// missing token): its tools would all fail.
    SignInRefused,
    /// The server answered and listed no tools for this user (mcp-mail
    /// does so while Nextcloud Mail is disabled or moved): nothing there
    /// can be looked up, the same as a server that did not answer.
    NothingListed,
    /// Its tools were listed, but the calls made this turn show the
    /// workspace behind them is not answering (or not accepting the
    /// user): the environment is re-rendered every step, so the model
    /// learns it before it answers.
    FailingThisTurn,
}

/// The per-turn facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    pub uid: String,
    pub display_name: String,
    /// Local date and time, e.g. "Thursday 2026-03-12 14:05".
    pub local_time: String,
    pub time_zone: String,
    /// The user's language tag from their Nextcloud settings (`fr`,
    /// `de-DE`); `None` when the app sent none.
    pub language: Option<String>,
    pub capabilities: Vec<Capability>,
    /// (fact, source) newest first; at most [`MEMORY_FACTS_SHOWN_MAX`] shown.
    pub memory: Vec<(String, String)>,
}

/// The system prompt: the same for every turn and every user.
pub fn system_prompt() -> String {
    [
        section("identity", IDENTITY),
        section("instructions", INSTRUCTIONS),
        section("data_handling", DATA_HANDLING),
        section("examples", EXAMPLES),
    ]
    .join("\n\n")
}

/// The latest question as the model reads it: the environment block, then
/// the question. A question that already opens with one (the loop carries
/// its messages from step to step) has it replaced, not repeated.
pub fn with_environment(environment: &Environment, question: &str) -> String {
    let block = section("environment", &render_environment(environment));
    format!("{block}\n\n{}", without_environment(question))
}

/// The question without the environment block [`with_environment`] put
/// before it.
pub fn without_environment(text: &str) -> &str {
    text.strip_prefix("<environment>\n")
        .and_then(|rest| rest.split_once("\n</environment>\n\n"))
        .map_or(text, |(_, question)| question)
}

fn section(name: &str, body: &str) -> String {
    format!("<{name}>\n{}\n</{name}>", body.trim())
}

/// The environment block.
pub fn render_environment(environment: &Environment) -> String {
    let mut lines = vec![
        format!("User: {} (uid {})", environment.display_name, environment.uid),
        format!("Now: {} ({})", environment.local_time, environment.time_zone),
    ];
    if let Some(language) = &environment.language {
        lines.insert(
            1,
            format!(
                "Language: {language} (the user's Nextcloud setting; answer in the language the user writes in)"
            ),
        );
    }
    let reachable: Vec<&Capability> =
        environment.capabilities.iter().filter(|c| c.reach == Reach::Reachable).collect();
    lines.push(if environment.capabilities.is_empty() {
        "Workspace: NO tools this turn. You cannot look anything up or change anything; say so if the user asks about their workspace.".to_string()
    } else if reachable.is_empty() {
        "Workspace: NOT REACHABLE this turn. Do not answer questions about the user's files, calendar, contacts, Deck or mail as if you had looked: tell the user the workspace cannot be reached right now and to try again shortly.".to_string()
    } else {
        "Workspace: reachable for what is marked reachable below; anything else cannot be looked up this turn.".to_string()
    });
    for capability in &environment.capabilities {
        let state = match capability.reach {
            Reach::Reachable => format!("reachable, {} tools", capability.tools),
            Reach::ServerUnreachable => "NOT reachable (the service did not answer)".to_string(),
            Reach::SignInRefused => {
                "NOT reachable (the user's sign-in was refused; reloading the page signs in again)"
                    .to_string()
            }
            Reach::NothingListed => {
                "NOT reachable (the service offers no tools for this user right now)".to_string()
            }
            Reach::FailingThisTurn => {
                "NOT reachable (its tools are listed, but every call this turn failed; nothing was looked up)"
                    .to_string()
            }
        };
        lines.push(format!("- {}: {state}", capability.covers));
    }
    if !environment.memory.is_empty() {
        lines.push("Remembered (from earlier conversations; the source says who said it):".into());
        for (fact, source) in environment.memory.iter().take(MEMORY_FACTS_SHOWN_MAX) {
            lines.push(format!("- {fact} (source: {source})"));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(reach: Reach) -> Environment {
        Environment {
            uid: "alice".into(),
            display_name: "Alice Martin".into(),
            local_time: "Thursday 2026-03-12 14:05".into(),
            time_zone: "Europe/Paris".into(),
            language: Some("fr".into()),
            capabilities: vec![Capability {
                covers: "files, calendar, contacts and Deck".into(),
                tools: 11,
                reach,
            }],
            memory: (0..7).map(|n| (format!("fact {n}"), "user".to_string())).collect(),
        }
    }

    #[test]
    fn four_stable_sections_in_order_and_no_tool_schemas() {
        let prompt = system_prompt();
        let order: Vec<usize> = ["<identity>", "<instructions>", "<data_handling>", "<examples>"]
            .iter()
            .map(|tag| prompt.find(tag).unwrap_or_else(|| panic!("{tag} missing")))
            .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(!prompt.contains("\"parameters\"") && !prompt.contains("inputSchema"));
        assert!(!prompt.contains("</environment>"), "nothing per turn in the cached prefix");
    }

    #[test]
    fn the_environment_opens_the_question_once_however_often_it_is_rendered() {
        let question = "Où est le rapport ?";
        let once = with_environment(&environment(Reach::Reachable), question);
        assert!(once.starts_with("<environment>\nUser: Alice Martin (uid alice)"), "{once}");
        assert!(once.ends_with("</environment>\n\nOù est le rapport ?"), "{once}");
        assert!(once.contains("- files, calendar, contacts and Deck: reachable, 11 tools"));
        assert_eq!(once.matches("(source: user)").count(), MEMORY_FACTS_SHOWN_MAX);
        let again = with_environment(&environment(Reach::FailingThisTurn), &once);
        assert_eq!(again.matches("<environment>").count(), 1, "{again}");
        assert!(again.contains("every call this turn failed") && again.ends_with(question));
        assert_eq!(without_environment(&again), question);
        assert_eq!(without_environment(question), question);
    }

    /// The seeds' environment: uid, name, language, date, time zone,
    /// capabilities, facts — the language was missing (issue 14).
    #[test]
    fn the_environment_names_uid_name_language_date_time_zone_capabilities_and_facts() {
        let shown = render_environment(&environment(Reach::Reachable));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "User: Alice Martin (uid alice)");
        assert!(lines[1].starts_with("Language: fr (the user's Nextcloud setting"), "{shown}");
        assert_eq!(lines[2], "Now: Thursday 2026-03-12 14:05 (Europe/Paris)");
        assert!(shown.contains("- files, calendar, contacts and Deck: reachable, 11 tools"));
        assert!(shown.contains("- fact 0 (source: user)"));
        let without =
            render_environment(&Environment { language: None, ..environment(Reach::Reachable) });
        assert!(!without.contains("Language:"), "no line without a language: {without}");
    }

    #[test]
    fn having_tools_is_not_reaching_the_workspace() {
        let down = render_environment(&environment(Reach::ServerUnreachable));
        assert!(down.contains("Workspace: NOT REACHABLE this turn"), "{down}");
        let refused = render_environment(&environment(Reach::SignInRefused));
        assert!(refused.contains("NOT REACHABLE") && refused.contains("sign-in was refused"));
        let up = render_environment(&environment(Reach::Reachable));
        assert!(!up.contains("NOT REACHABLE"), "{up}");
        let none = render_environment(&Environment {
            capabilities: vec![],
            ..environment(Reach::Reachable)
        });
        assert!(none.contains("NO tools this turn"));
    }
}
