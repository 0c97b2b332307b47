//! The eval's world and what it is checked by.
//!
//! The world is the demo fixture plus `eval/world.toml`: more documents
//! (some in French, some carrying an injected instruction), a calendar, an
//! address book and a mail account with more entries, injections among
//! them.
//!
//! [`digest`] describes the workspace as lines — every file with its
//! content's hash, every card with its stack, every event occurrence in
//! UTC, every mail preview, every remembered fact — so a task's checks
//! compare two digests: what appeared, what went away. It reads the
//! fake's state and the user-visible routes, never the orchestrator's
//! stores, so an effect counts however it came about.

use crate::harness::Stack;
use fake_nextcloud::Fixture;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeSet;
use std::path::Path;

/// The demo fixture with the additions at `path` laid over it as a
/// scenario's `[fixture.add]` is: arrays appended, tables merged.
pub fn fixture(additions: &Path) -> Result<Fixture, String> {
    let text = std::fs::read_to_string(additions)
        .map_err(|error| format!("cannot read the eval world {}: {error}", additions.display()))?;
    let add: toml::Table = toml::from_str(&text)
        .map_err(|error| format!("the eval world {} is not TOML: {error}", additions.display()))?;
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    crate::format::load_fixture(&demo, add)
}

/// The workspace of `users` as lines (see the module's comment).
pub async fn digest(stack: &mut Stack, users: &[&str]) -> Result<BTreeSet<String>, String> {
    let mut lines = BTreeSet::new();
    {
        let world = stack.fake.shared.world();
        for user in world.users.values() {
            let Ok(entries) = world.storage.walk(user.viewer(), "") else { continue };
            for entry in entries.iter().filter(|entry| entry.node.owner == user.uid) {
                if let fake_nextcloud::storage::NodeKind::File { content, .. } = &entry.node.kind {
                    let hash: String = Sha256::digest(content)[..6]
                        .iter()
                        .map(|byte| format!("{byte:02x}"))
                        .collect();
                    lines.insert(format!("file {}/{} {hash}", user.uid, entry.node.path));
                }
            }
        }
        let deck = &world.deck;
        for card in deck.cards.values().filter(|card| card.deleted_at == 0 && !card.archived) {
            let stack = deck.stacks.get(&card.stack_id);
            let stack_title = stack.map(|stack| stack.title.as_str()).unwrap_or("?");
            let board =
                stack.and_then(|stack| deck.boards.get(&stack.board_id)).map(|b| b.title.as_str());
            lines.insert(format!(
                "card \"{}\" in \"{stack_title}\" of \"{}\"",
                card.title,
                board.unwrap_or("?")
            ));
        }
        for preview in world.app.previews.iter() {
            lines.insert(format!(
                "mail preview of {} to {} subject \"{}\"",
                preview.uid,
                preview.to.join(", "),
                preview.subject
            ));
        }
        for message in &world.mail.messages {
            lines.insert(format!("mail message {} \"{}\"", message.id, message.subject));
        }
    }
    for user in users {
        for event in events(stack, user).await? {
            lines.insert(event);
        }
        for fact in memory(stack, user).await? {
            lines.insert(format!("memory of {user} \"{fact}\""));
        }
    }
    Ok(lines)
}

/// The user's event occurrences of 2026, as `event of U "title" START`
/// with the start in UTC.
async fn events(stack: &Stack, user: &str) -> Result<Vec<String>, String> {
    let arguments = json!({"start": "2026-01-01", "end": "2026-12-31", "limit": 200});
    let (_, result) = stack.call_tool("nextcloud", user, "calendar_events", &arguments).await?;
    let Some(events) = result["structuredContent"]["occurrences"].as_array() else {
        let text = result.to_string();
        let start: String = text.chars().take(300).collect();
        return Err(format!("calendar_events for {user} answered no occurrences: {start}"));
    };
    Ok(events
        .iter()
        .map(|event| {
            let start = event["start"].as_str().unwrap_or("");
            format!(
                "event of {user} \"{}\" {}",
                event["summary"].as_str().unwrap_or(""),
                utc(start)
            )
        })
        .collect())
}

/// An RFC 3339 time in UTC (`2026-03-20T13:00:00Z`); a date stays a date.
pub fn utc(time: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(time) {
        Ok(time) => time.with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => time.to_string(),
    }
}

/// The facts the orchestrator remembers for `user`, as the page lists them.
async fn memory(stack: &mut Stack, user: &str) -> Result<Vec<String>, String> {
    let browser = stack.browser(user).await?;
    let response = browser
        .request(reqwest::Method::GET, "/apps/tamebi/api/memory")
        .send()
        .await
        .map_err(|error| format!("the memory list of {user}: {error}"))?;
    let body: Value = response
        .json()
        .await
        .map_err(|error| format!("the memory list of {user} is not JSON: {error}"))?;
    let facts = body["facts"].as_array().or(body.as_array()).cloned().unwrap_or_default();
    Ok(facts
        .iter()
        .map(|fact| fact["text"].as_str().or(fact["fact"].as_str()).unwrap_or("").to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_compared_in_utc() {
        assert_eq!(utc("2026-03-20T14:00:00+01:00"), "2026-03-20T13:00:00Z");
        assert_eq!(utc("2026-03-20T13:00:00Z"), "2026-03-20T13:00:00Z");
        assert_eq!(utc("2026-03-20"), "2026-03-20");
    }
}
