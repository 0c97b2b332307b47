//! Rung 1: clear stale data-tool results, every step.
//!
//! A 4 kB file read is essential on the turn it arrives and dead weight
//! three turns later (the seeds' words): the model already took what it
//! wanted, and it can call the tool again. So the result of a *data* tool
//! is replaced by a short note once [`RESULT_LIFETIME_TURNS`] user
//! messages have followed its call. Counting user turns, not model steps,
//! matters: a turn that reads five documents and then compares them takes
//! six steps, and clearing by steps took the first reads away inside the
//! very turn that still needed them, forcing re-reads (or an answer from
//! what was no longer shown). Results of *actions* are kept whole: they
//! are the record that something happened. A tool the caller cannot
//! classify counts as an action — keeping too much costs tokens, clearing
//! a record costs the truth.
//!
//! Pruning is idempotent — the pruned list is carried forward and pruned
//! again every step — because a cleared result is recognised by its prefix
//! and left as it is (a property test checks `prune(prune(x)) == prune(x)`).

use crate::model::Message;
use std::collections::HashMap;

/// User messages after its call that a data-tool result stays whole
/// through: it is cleared when the third one arrives.
pub const RESULT_LIFETIME_TURNS: usize = 3;
/// How a cleared result begins.
pub const CLEARED_PREFIX: &str = "[Result cleared to save context:";

/// The messages with stale data-tool results cleared. `is_action` says
/// whether a tool (by name) acts; `None` means unknown (kept).
pub fn prune(messages: &[Message], is_action: impl Fn(&str) -> Option<bool>) -> Vec<Message> {
    // For each tool call id: the tool, its arguments, and the index of the
    // assistant message that made it.
    let mut calls: HashMap<&str, (&str, &str, usize)> = HashMap::new();
    let mut user_positions = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    calls.insert(&call.id, (&call.name, &call.arguments, index));
                }
            }
            Message::User(_) => user_positions.push(index),
            _ => {}
        }
    }
    let user_turns_after = |position: usize| {
        user_positions.len() - user_positions.partition_point(|&at| at <= position)
    };
    messages
        .iter()
        .map(|message| match message {
            Message::Tool { tool_call_id, content } if !content.starts_with(CLEARED_PREFIX) => {
                let Some((tool, arguments, position)) = calls.get(tool_call_id.as_str()) else {
                    return message.clone();
                };
                let is_data = is_action(tool) == Some(false);
                if is_data && user_turns_after(*position) >= RESULT_LIFETIME_TURNS {
                    Message::Tool {
                        tool_call_id: tool_call_id.clone(),
                        content: cleared_note(tool, arguments, content.len()),
                    }
                } else {
                    message.clone()
                }
            }
            _ => message.clone(),
        })
        .collect()
}

fn cleared_note(tool: &str, arguments: &str, length: usize) -> String {
    const ARGUMENTS_SHOWN_MAX: usize = 200;
    let mut end = arguments.len().min(ARGUMENTS_SHOWN_MAX);
    while !arguments.is_char_boundary(end) {
        end -= 1;
    }
    let ellipsis = if end < arguments.len() { "…" } else { "" };
    format!(
        "{CLEARED_PREFIX} {tool}({}{ellipsis}) returned {length} bytes a few turns ago. Call it again if you need it.]",
        &arguments[..end]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use proptest::prelude::*;

    fn kind(tool: &str) -> Option<bool> {
        match tool {
            "files_read" | "files_grep" => Some(false),
            "files_write" | "memory_write" => Some(true),
            _ => None,
        }
    }

    fn call(id: &str, name: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: r#"{"path":"a.md"}"#.into(),
            }],
        }
    }

    fn result(id: &str, content: &str) -> Message {
        Message::Tool { tool_call_id: id.into(), content: content.into() }
    }

    fn answer(text: &str) -> Message {
        Message::Assistant { text: text.into(), tool_calls: vec![] }
    }

    fn is_cleared(message: &Message) -> bool {
        matches!(message, Message::Tool { content, .. } if content.starts_with(CLEARED_PREFIX))
    }

    #[test]
    fn a_read_is_cleared_after_three_user_turns_and_a_write_never() {
        let mut messages = vec![
            Message::System("system".into()),
            Message::User("summarise a.md and fix it".into()),
            call("1", "files_read"),
            result("1", &"x".repeat(4096)),
            call("2", "files_write"),
            result("2", "Wrote a.md (fileid 7)."),
            call("3", "mystery_tool"),
            result("3", "something"),
            answer("Done."),
        ];
        for turn in ["thanks", "and b.md?"] {
            messages.extend([Message::User(turn.into()), answer("Sure.")]);
            assert_eq!(prune(&messages, kind), messages, "fewer than three turns later, all kept");
        }
        messages.push(Message::User("one more thing".into()));
        let pruned = prune(&messages, kind);
        let Message::Tool { content, .. } = &pruned[3] else { panic!() };
        assert!(content.starts_with(CLEARED_PREFIX), "{content}");
        assert!(content.contains(r#"files_read({"path":"a.md"}) returned 4096 bytes"#));
        assert_eq!(pruned[5], messages[5], "an action's result is the record");
        assert_eq!(pruned[7], messages[7], "an unknown tool counts as an action");
        assert_eq!(prune(&pruned, kind), pruned);
    }

    /// The regression: a turn that reads five documents, one step each,
    /// then compares them. Cleared by model steps, the first reads were
    /// gone before the answer that needed them.
    #[test]
    fn every_read_of_one_turn_stays_whole_however_many_steps_it_takes() {
        let mut messages =
            vec![Message::System("system".into()), Message::User("compare the reports".into())];
        for n in 0..9 {
            let id = format!("r{n}");
            messages.extend([call(&id, "files_read"), result(&id, &format!("report {n} text"))]);
            assert!(
                !prune(&messages, kind).iter().any(is_cleared),
                "step {n}: nothing of the current turn is cleared"
            );
        }
        messages.push(answer("Report 0 and report 8 agree."));
        assert_eq!(prune(&messages, kind), messages);
        // The next two questions still see the reads; the third does not.
        messages.extend([Message::User("why?".into()), answer("Because.")]);
        messages.extend([Message::User("sure?".into()), answer("Yes.")]);
        assert!(!prune(&messages, kind).iter().any(is_cleared));
        messages.push(Message::User("thanks".into()));
        assert_eq!(prune(&messages, kind).iter().filter(|m| is_cleared(m)).count(), 9);
    }

    #[test]
    fn a_read_made_after_a_question_counts_only_the_questions_after_it() {
        let messages = vec![
            Message::User("first".into()),
            call("old", "files_grep"),
            result("old", "old hit"),
            answer("a"),
            Message::User("second".into()),
            answer("b"),
            Message::User("third".into()),
            call("new", "files_grep"),
            result("new", "new hit"),
            answer("c"),
            Message::User("fourth".into()),
        ];
        let pruned = prune(&messages, kind);
        assert!(is_cleared(&pruned[2]), "three questions followed the old search");
        assert_eq!(pruned[8], messages[8], "one question followed the new one");
    }

    fn message() -> impl Strategy<Value = Message> {
        let id = prop::sample::select(vec!["1", "2", "3", "4", "5"]);
        let tool = prop::sample::select(vec!["files_read", "files_grep", "files_write", "other"]);
        prop_oneof![
            1 => "[a-z ]{0,12}".prop_map(Message::User),
            2 => (prop::collection::vec((id.clone(), tool), 0..3), "[a-z]{0,5}").prop_map(
                |(calls, text)| Message::Assistant {
                    text,
                    tool_calls: calls
                        .into_iter()
                        .map(|(id, name)| ToolCall {
                            id: id.into(),
                            name: name.into(),
                            arguments: "{\"q\":\"é\"}".into(),
                        })
                        .collect(),
                }
            ),
            3 => (id, "\\PC{0,40}").prop_map(|(id, content)| Message::Tool {
                tool_call_id: id.into(),
                content,
            }),
        ]
    }

    proptest! {
        #[test]
        fn pruning_a_pruned_list_changes_nothing(
            messages in prop::collection::vec(message(), 0..30)
        ) {
            let once = prune(&messages, kind);
            prop_assert_eq!(&prune(&once, kind), &once);
            prop_assert_eq!(once.len(), messages.len());
            for (before, after) in messages.iter().zip(&once) {
                match (before, after) {
                    (Message::Tool { content: old, .. }, Message::Tool { content: new, .. }) => {
                        prop_assert!(old == new || new.starts_with(CLEARED_PREFIX));
                    }
                    _ => prop_assert_eq!(before, after),
                }
            }
        }

        /// Whatever the steps, a result is cleared only once three user
        /// messages follow the call that asked for it.
        #[test]
        fn nothing_is_cleared_before_three_user_turns_follow_its_call(
            messages in prop::collection::vec(message(), 0..30)
        ) {
            let pruned = prune(&messages, kind);
            for (before, after) in messages.iter().zip(&pruned) {
                let (Message::Tool { tool_call_id, .. }, true) = (before, is_cleared(after) && !is_cleared(before)) else {
                    continue;
                };
                // A repeated call id names its latest call, as in `prune`.
                let position = messages
                    .iter()
                    .rposition(|m| matches!(
                        m,
                        Message::Assistant { tool_calls, .. }
                            if tool_calls.iter().any(|c| &c.id == tool_call_id)
                    ))
                    .expect("a cleared result has a call");
                let users_after = messages[position..].iter().filter(|m| matches!(m, Message::User(_))).count();
                prop_assert!(users_after >= RESULT_LIFETIME_TURNS, "cleared after {users_after} user turns");
            }
        }
    }
}
