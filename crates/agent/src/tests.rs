//! The loop against a scripted stand-in model and tool set.

use super::*;
use crate::model::{FinishReason, ToolChoice};
use std::sync::Mutex;

/// Answers each request with the next scripted list of events, and keeps
/// the requests.
struct Scripted {
    answers: Mutex<Vec<Vec<Result<ModelEvent, ModelError>>>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    fn new(answers: Vec<Vec<Result<ModelEvent, ModelError>>>) -> Scripted {
        Scripted { answers: Mutex::new(answers), requests: Mutex::new(Vec::new()) }
    }

    fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Model for Scripted {
    fn answer(
        &self,
        request: ChatRequest,
    ) -> BoxFuture<'_, Result<BoxStream<'static, Result<ModelEvent, ModelError>>, ModelError>> {
        self.requests.lock().unwrap().push(request);
        let mut answers = self.answers.lock().unwrap();
        let answer = if answers.is_empty() { text("(script ended)") } else { answers.remove(0) };
        Box::pin(async move {
            Ok(Box::pin(futures_util::stream::iter(answer))
                as BoxStream<'static, Result<ModelEvent, ModelError>>)
        })
    }
}

fn text(words: &str) -> Vec<Result<ModelEvent, ModelError>> {
    deltas(&[words])
}

/// A step answered in `parts`, one text delta each, then a stop.
fn deltas(parts: &[&str]) -> Vec<Result<ModelEvent, ModelError>> {
    let mut events: Vec<_> =
        parts.iter().map(|part| Ok(ModelEvent::TextDelta(part.to_string()))).collect();
    events.push(Ok(ModelEvent::Finish { reason: FinishReason::Stop }));
    events
}

fn calls(calls: &[(&str, &str, &str)]) -> Vec<Result<ModelEvent, ModelError>> {
    let mut events: Vec<_> = calls
        .iter()
        .map(|(id, name, arguments)| {
            Ok(ModelEvent::ToolCall(ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: arguments.to_string(),
            }))
        })
        .collect();
    events.push(Ok(ModelEvent::Finish { reason: FinishReason::ToolCalls }));
    events
}

/// `read` is data, `write` is an action; every call is recorded.
struct Tools {
    specs: Vec<ToolSpec>,
    called: Mutex<Vec<ToolCall>>,
}

impl Tools {
    fn new() -> Tools {
        let spec = |name: &str, kind| ToolSpec {
            definition: ToolDefinition {
                name: name.into(),
                description: format!("{name} things"),
                parameters: serde_json::json!({"type": "object"}),
            },
            kind,
            dynamic: true,
        };
        Tools {
            specs: vec![spec("read", ToolKind::Data), spec("write", ToolKind::Action)],
            called: Mutex::new(Vec::new()),
        }
    }

    fn called(&self) -> Vec<ToolCall> {
        self.called.lock().unwrap().clone()
    }
}

impl ToolSet for Tools {
    fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    fn call<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        self.called.lock().unwrap().push(call.clone());
        let text = format!("{} did {}", call.name, call.arguments);
        // `broken` is not offered, so it fails as an unknown tool would.
        let is_error = call.name == "broken";
        Box::pin(async move {
            ToolResult { output: serde_json::Value::String(text.clone()), text, is_error }
        })
    }
}

struct Whole;

impl Context for Whole {
    fn for_step(&self, messages: &[Message]) -> Vec<Message> {
        messages.to_vec()
    }
}

async fn run(
    model: &Scripted,
    tools: &Tools,
    messages: Vec<Message>,
    resolutions: Vec<Resolution>,
) -> (Ending, Vec<AgentEvent>) {
    let (sender, mut receiver) = mpsc::channel(1024);
    let agent = Agent { model, tools, context: &Whole };
    let ending = agent.run(messages, resolutions, &sender).await;
    drop(sender);
    let mut events = Vec::new();
    while let Some(event) = receiver.recv().await {
        events.push(event);
    }
    (ending, events)
}

fn start() -> Vec<Message> {
    vec![Message::System("system".into()), Message::User("question".into())]
}

/// Runs a step answered by `written`, then "Read."; checks that exactly
/// `read {"path": "a"}` ran, and returns the events and the call's id.
async fn reads_a(written: Vec<Result<ModelEvent, ModelError>>) -> (Vec<AgentEvent>, String) {
    let model = Scripted::new(vec![written, text("Read.")]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    let called = tools.called();
    assert_eq!(called.len(), 1);
    assert_eq!(
        (called[0].name.as_str(), called[0].arguments.as_str()),
        ("read", r#"{"path":"a"}"#)
    );
    (events, called[0].id.clone())
}

/// Runs one step answered by `written` with no call in it; checks the turn
/// was answered and that no tool ran, and returns the events and the
/// answer the conversation keeps.
async fn answers_alone(written: Vec<Result<ModelEvent, ModelError>>) -> (Vec<AgentEvent>, String) {
    let model = Scripted::new(vec![written]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert!(tools.called().is_empty());
    let Message::Assistant { text, .. } = &kept(&events)[0] else { panic!() };
    let text = text.clone();
    (events, text)
}

/// The text the user was shown, every delta together.
fn shown(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(delta) => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn kept(events: &[AgentEvent]) -> Vec<Message> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Message(message) => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn data_calls_run_and_the_model_answers_from_their_results() {
    let model = Scripted::new(vec![
        calls(&[("c1", "read", r#"{"path":"a"}"#), ("c2", "read", r#"{"path":"b"}"#)]),
        text("Both read."),
    ]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert_eq!(tools.called().len(), 2);
    let second = &model.requests()[1];
    assert_eq!(second.messages.len(), 5, "system, user, assistant, two results");
    assert_eq!(
        second.messages[3],
        Message::Tool { tool_call_id: "c1".into(), content: r#"read did {"path":"a"}"#.into() }
    );
    assert_eq!(second.tools.len(), 2);
    assert_eq!(second.tool_choice, Some(ToolChoice::Auto), "said, not left to a default");
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            AgentEvent::StepStart => "start",
            AgentEvent::TextDelta(_) => "text",
            AgentEvent::ToolInput { .. } => "input",
            AgentEvent::ApprovalRequest { .. } => "approval",
            AgentEvent::ToolOutput { .. } => "output",
            AgentEvent::ToolDenied { .. } => "denied",
            AgentEvent::Message(_) => "message",
            AgentEvent::StepFinish => "finish",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start", "message", "input", "input", "message", "output", "message", "output",
            "finish", "start", "text", "message", "finish"
        ]
    );
}

#[tokio::test]
async fn an_action_waits_for_approval_and_nothing_runs() {
    let model = Scripted::new(vec![calls(&[
        ("c1", "read", r#"{"path":"a"}"#),
        ("c2", "write", r#"{"path":"a","content":"x"}"#),
        ("c3", "write", r#"{"path":"b","content":"y"}"#),
    ])]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::AwaitingApproval);
    assert_eq!(tools.called().iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["c1"]);
    let held: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ApprovalRequest { call } => Some(call.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(held, ["c2", "c3"], "both calls of a parallel batch wait");
    let kept = kept(&events);
    assert!(matches!(&kept[0], Message::Assistant { tool_calls, .. } if tool_calls.len() == 3));
    assert_eq!(kept.len(), 2, "the assistant step and the data result");
}

#[tokio::test]
async fn approved_calls_run_as_stored_and_denied_ones_are_reported_to_the_model() {
    let model = Scripted::new(vec![text("Wrote a; b was not written.")]);
    let tools = Tools::new();
    let call = |id: &str, path: &str| ToolCall {
        id: id.into(),
        name: "write".into(),
        arguments: format!(r#"{{"path":"{path}"}}"#),
    };
    let mut history = start();
    history.push(Message::Assistant {
        text: String::new(),
        tool_calls: vec![call("c2", "a"), call("c3", "b")],
    });
    let resolutions = vec![
        Resolution { call: call("c2", "a"), approved: true },
        Resolution { call: call("c3", "b"), approved: false },
    ];
    let (ending, events) = run(&model, &tools, history, resolutions).await;
    assert_eq!(ending, Ending::Answered);
    assert_eq!(tools.called(), vec![call("c2", "a")]);
    let request = &model.requests()[0];
    assert_eq!(
        request.messages[4],
        Message::Tool { tool_call_id: "c3".into(), content: DENIED_TEXT.into() }
    );
    assert!(events.iter().any(|event| matches!(
        event,
        AgentEvent::ToolDenied { call } if call.id == "c3"
    )));
}

#[tokio::test]
async fn an_action_with_arguments_that_are_not_an_object_is_not_held() {
    let model = Scripted::new(vec![calls(&[("c1", "write", "not json")]), text("Sorry.")]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::ApprovalRequest { .. })));
    assert!(events.iter().any(|event| matches!(
        event,
        AgentEvent::ToolInput { input: serde_json::Value::String(raw), .. } if raw == "not json"
    )));
}

#[tokio::test]
async fn the_last_step_is_asked_to_answer_without_tools() {
    // Each step asks something new (a repeat would be answered from before).
    let looping = (0..STEPS_MAX)
        .map(|n| calls(&[(&format!("c{n}"), "read", &format!(r#"{{"page":{n}}}"#))]))
        .collect();
    let model = Scripted::new(looping);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    let requests = model.requests();
    assert_eq!(requests.len(), STEPS_MAX);
    assert_eq!(requests[STEPS_MAX - 1].tool_choice, Some(ToolChoice::None));
    assert_eq!(tools.called().len(), STEPS_MAX - 1, "the last step's calls do not run");
    assert!(events.contains(&AgentEvent::TextDelta(step::STEP_LIMIT_TEXT.into())));
}

#[tokio::test]
async fn a_cut_answer_keeps_what_was_said_and_runs_nothing() {
    let cut = vec![
        Ok(ModelEvent::TextDelta("Half an ans".into())),
        Err(ModelError::StreamCut { detail: "eof".into() }),
    ];
    let model = Scripted::new(vec![cut]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert!(matches!(ending, Ending::ModelFailed(ModelError::StreamCut { .. })));
    assert_eq!(
        kept(&events),
        vec![Message::Assistant { text: "Half an ans".into(), tool_calls: vec![] }]
    );
    assert_eq!(events.last(), Some(&AgentEvent::StepFinish));
}

#[tokio::test]
async fn a_call_whose_arguments_do_not_parse_is_replayed_as_an_empty_object() {
    let cut = r#"{"path":"a","content":"x"#;
    let model = Scripted::new(vec![calls(&[("c1", "write", cut)]), text("Sorry.")]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    let called = tools.called();
    assert_eq!(called.len(), 1, "the tool set answers it (and records it) ...");
    assert_eq!(called[0].arguments, cut, "... as the model wrote it");
    let replayed = &model.requests()[1].messages[2];
    let Message::Assistant { tool_calls, .. } = replayed else { panic!("{replayed:?}") };
    assert_eq!(tool_calls[0].arguments, "{}", "what every later request carries");
    assert_eq!(kept(&events)[0], *replayed, "and what the conversation keeps");
}

#[tokio::test]
async fn an_answer_cut_at_the_length_limit_runs_none_of_its_calls_and_says_so() {
    let cut = vec![
        Ok(ModelEvent::TextDelta("Let me write it".into())),
        Ok(ModelEvent::ToolCall(ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: r#"{"path":"a"}"#.into(),
        })),
        Ok(ModelEvent::Finish { reason: FinishReason::Length }),
        Ok(ModelEvent::Usage { prompt_tokens: 10, completion_tokens: 256 }),
    ];
    let model = Scripted::new(vec![cut]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert!(tools.called().is_empty(), "a call from a cut answer never runs");
    let Message::Assistant { text, tool_calls } = &kept(&events)[0] else { panic!() };
    assert!(tool_calls.is_empty());
    assert!(text.starts_with("Let me write it"), "{text}");
    assert!(text.contains("cut off at 256 tokens"), "{text}");
    assert!(text.contains("were not run"), "{text}");
    assert_eq!(model.requests().len(), 1, "the turn ends there");
}

#[tokio::test]
async fn a_cut_answer_without_usage_names_the_limit_without_a_number() {
    let cut = vec![
        Ok(ModelEvent::TextDelta("A long".into())),
        Ok(ModelEvent::Finish { reason: FinishReason::Length }),
    ];
    let model = Scripted::new(vec![cut]);
    let (_, events) = run(&model, &Tools::new(), start(), vec![]).await;
    let Message::Assistant { text, .. } = &kept(&events)[0] else { panic!() };
    assert!(text.contains("cut off at the model's length limit"), "{text}");
    assert!(!text.contains("were not run"), "no call was cut: {text}");
}

#[tokio::test]
async fn the_same_call_repeated_in_the_next_step_is_answered_from_the_first() {
    let model = Scripted::new(vec![
        calls(&[("c1", "read", r#"{"path":"a"}"#)]),
        calls(&[("c2", "read", r#"{ "path": "a" }"#), ("c3", "read", r#"{"path":"b"}"#)]),
        text("Done."),
    ]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    let ran: Vec<String> = tools.called().into_iter().map(|call| call.id).collect();
    assert_eq!(ran, ["c1", "c3"]);
    let kept = kept(&events);
    assert!(kept.contains(&Message::Tool {
        tool_call_id: "c2".into(),
        content: step::ALREADY_HAVE_TEXT.into()
    }));
    assert!(kept.contains(&Message::Tool {
        tool_call_id: "c3".into(),
        content: r#"read did {"path":"b"}"#.into()
    }));
}

#[tokio::test]
async fn the_same_call_failing_twice_running_ends_the_turn_with_an_answer() {
    let model = Scripted::new(vec![
        calls(&[("c1", "broken", "{}")]),
        calls(&[("c2", "broken", "{}")]),
        calls(&[("c3", "broken", "{}")]),
        text("never asked"),
    ]);
    let tools = Tools::new();
    let (ending, events) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert_eq!(tools.called().len(), 2, "the third is not run");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].tool_choice, Some(ToolChoice::None), "asked to answer");
    assert!(events.contains(&AgentEvent::TextDelta(step::STUCK_TEXT.into())));
}

#[tokio::test]
async fn a_failure_followed_by_another_call_is_not_stuck() {
    let model = Scripted::new(vec![
        calls(&[("c1", "broken", "{}")]),
        calls(&[("c2", "broken", r#"{"other":1}"#)]),
        calls(&[("c3", "read", "{}")]),
        text("Done."),
    ]);
    let tools = Tools::new();
    let (ending, _) = run(&model, &tools, start(), vec![]).await;
    assert_eq!(ending, Ending::Answered);
    assert_eq!(tools.called().len(), 3);
    assert_eq!(model.requests()[2].tool_choice, Some(ToolChoice::Auto));
}

#[tokio::test]
async fn a_call_written_as_text_runs_as_a_call_and_its_markup_is_never_shown() {
    let written = deltas(&["functions.re", "ad:\n{\"path\": \"a\"}"]);
    let (events, id) = reads_a(written).await;
    assert!(id.starts_with("call_"), "{id}");
    let shown = shown(&events);
    assert_eq!(shown, "Read.", "no markup reached the user");
    let Message::Assistant { text, tool_calls } = &kept(&events)[0] else { panic!() };
    assert!(text.is_empty() && tool_calls.len() == 1, "kept as a call: {text:?}");
}

#[tokio::test]
async fn an_answer_that_starts_like_json_is_shown_once_it_is_not_a_call() {
    let answer = deltas(&["{\"name\": \"Alice\",", " \"email\": \"a@example.com\"}"]);
    let prose = deltas(&["Here", " it is."]);
    for (answer, expected) in
        [(answer, r#"{"name": "Alice", "email": "a@example.com"}"#), (prose, "Here it is.")]
    {
        let (_, text) = answers_alone(answer).await;
        assert_eq!(text, expected);
    }
}

#[tokio::test]
async fn an_empty_answer_is_never_shown_as_a_blank_reply() {
    for empty in ["", "  \n"] {
        let model = Scripted::new(vec![text(empty)]);
        let (ending, events) = run(&model, &Tools::new(), start(), vec![]).await;
        assert_eq!(ending, Ending::Answered);
        let Message::Assistant { text, .. } = &kept(&events)[0] else { panic!() };
        assert_eq!(text.trim(), step::EMPTY_ANSWER_TEXT, "{empty:?}");
    }
}

#[tokio::test]
async fn call_markup_that_cannot_be_read_is_not_shown_as_the_answer() {
    let written = deltas(&["<tool_call>\n{\"name\": \"read\", \"argu"]);
    let (_, text) = answers_alone(written).await;
    assert_eq!(text, step::UNREADABLE_CALL_TEXT);
}

#[tokio::test]
async fn a_call_written_after_prose_runs_and_only_the_prose_is_shown() {
    let written = deltas(&[
        "Let me read it.\n<tool",
        "_call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}",
        "</tool_call>",
    ]);
    let (events, _) = reads_a(written).await;
    let shown = shown(&events);
    assert_eq!(shown, "Let me read it.\nRead.", "no markup reached the user");
    let Message::Assistant { text, tool_calls } = &kept(&events)[0] else { panic!() };
    assert_eq!((text.as_str(), tool_calls.len()), ("Let me read it.\n", 1));
}

#[tokio::test]
async fn template_tokens_after_an_answer_are_dropped_with_what_follows() {
    let answer = deltas(&["The budget is 40 000 €.", "<|im_end|>\n<|im_start|>user\nThanks"]);
    let (_, text) = answers_alone(answer).await;
    assert_eq!(text, "The budget is 40 000 €.");
}

#[tokio::test]
async fn an_echoed_prompt_tag_is_neither_shown_nor_kept() {
    let answer = deltas(&["The review is on Tuesday at 10:00.&lt;/calen", "dar_example &gt;"]);
    let (events, text) = answers_alone(answer).await;
    assert_eq!(shown(&events), "The review is on Tuesday at 10:00.");
    assert_eq!(text, "The review is on Tuesday at 10:00.");
}
