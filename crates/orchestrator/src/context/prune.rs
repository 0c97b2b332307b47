//! Rung 1: clear stale data-tool results, every step.
//!
//! A 4 kB file read is essential on the step it arrives and dead weight a
//! few steps later: the model already took what it wanted, and it can call
//! the tool again. So the result of a *data* tool is replaced by a short
//! note once [`RESULT_LIFETIME_STEPS`] model steps (assistant messages)
//! have followed its call. Results of *actions* are kept whole: they are
//! the record that something happened. A tool the caller cannot classify
//! counts as an action — keeping too much costs tokens, clearing a record
//! costs the truth.
//!
//! Pruning is idempotent — the pruned list is carried forward and pruned
//! again every step — because a cleared result is recognised by its prefix
//! and left as it is (a property test checks `prune(prune(x)) == prune(x)`).

use crate::model::Message;
use std::collections::HashMap;

/// Model steps a data-tool result stays whole after its call.
pub const RESULT_LIFETIME_STEPS: usize = 3;
/// How a cleared result begins.
pub const CLEARED_PREFIX: &str = "[Result cleared to save context:";

/// The messages with stale data-tool results cleared. `is_action` says
/// whether a tool (by name) acts; `None` means unknown (kept).
pub fn prune(messages: &[Message], is_action: impl Fn(&str) -> Option<bool>) -> Vec<Message> {
    // For each tool call id: the tool, its arguments, and the index of the
    // assistant message that made it.
    let mut calls: HashMap<&str, (&str, &str, usize)> = HashMap::new();
    let mut assistant_positions = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if let Message::Assistant { tool_calls, .. } = message {
            assistant_positions.push(index);
            for call in tool_calls {
                calls.insert(&call.id, (&call.name, &call.arguments, index));
            }
        }
    }
    let steps_after = |position: usize| {
        assistant_positions.len() - assistant_positions.partition_point(|&at| at <= position)
    };
    messages
        .iter()
        .map(|message| match message {
            Message::Tool { tool_call_id, content } if !content.starts_with(CLEARED_PREFIX) => {
                let Some((tool, arguments, position)) = calls.get(tool_call_id.as_str()) else {
                    return message.clone();
                };
                let is_data = is_action(tool) == Some(false);
                if is_data && steps_after(*position) >= RESULT_LIFETIME_STEPS {
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
        "{CLEARED_PREFIX} {tool}({}{ellipsis}) returned {length} bytes a few steps ago. Call it again if you need it.]",
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

    #[test]
    fn a_read_is_cleared_after_three_steps_and_a_write_never() {
        let mut messages = vec![
            Message::System("system".into()),
            Message::User("summarise a.md and fix it".into()),
            call("1", "files_read"),
            result("1", &"x".repeat(4096)),
            call("2", "files_write"),
            result("2", "Wrote a.md (fileid 7)."),
            call("3", "mystery_tool"),
            result("3", "something"),
        ];
        assert_eq!(prune(&messages, kind), messages, "two steps later, all kept");
        messages.push(Message::Assistant { text: "Done.".into(), tool_calls: vec![] });
        let pruned = prune(&messages, kind);
        let Message::Tool { content, .. } = &pruned[3] else { panic!() };
        assert!(content.starts_with(CLEARED_PREFIX), "{content}");
        assert!(content.contains(r#"files_read({"path":"a.md"}) returned 4096 bytes"#));
        assert_eq!(pruned[5], messages[5], "an action's result is the record");
        assert_eq!(pruned[7], messages[7], "an unknown tool counts as an action");
        assert_eq!(prune(&pruned, kind), pruned);
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
    }
}
