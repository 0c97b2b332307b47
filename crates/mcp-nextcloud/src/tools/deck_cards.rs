//! `deck_cards`: the user's Deck boards with their stacks and cards,
//! filtered by board, stack, text, assignee, label and due date. The board,
//! stack and card ids it returns are what `deck_create_card` and
//! `deck_move_card` take.
//!
//! Deck has no search endpoint in its REST API, so the filters run here over
//! each board's stacks (one request per board, two with archived cards).

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::deck::{self, BoardSummary, Card, LabelRef, StackWithCards};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "deck_cards";
/// The most cards one call returns.
pub const LIMIT_MAX: u32 = 200;
const LIMIT_DEFAULT: u32 = 50;
/// The most boards one call reads stacks for.
pub const BOARD_COUNT_MAX: usize = 20;
/// How many names a "not found" lists to choose from.
const CHOICES_SHOWN_MAX: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(description = "Only this board: its board_id, or (part of) its title.")]
    board: Option<IdOrTitle>,
    #[serde(default)]
    #[schemars(
        description = "Only this stack: its stack_id, or (part of) its title, e.g. \"Done\"."
    )]
    stack: Option<IdOrTitle>,
    #[serde(default)]
    #[schemars(
        description = "Only cards whose title or description contains this, ignoring case."
    )]
    text: Option<String>,
    #[serde(default)]
    #[schemars(description = "Only cards assigned to this user id or display name.")]
    assigned_to: Option<String>,
    #[serde(default)]
    #[schemars(description = "Only cards carrying the label with this title.")]
    label: Option<String>,
    #[serde(default)]
    #[schemars(
        extend("format" = "date-time"),
        description = "Only cards due before this time (RFC 3339)."
    )]
    due_before: Option<String>,
    #[serde(default)]
    #[schemars(
        extend("format" = "date-time"),
        description = "Only cards due at or after this time (RFC 3339)."
    )]
    due_after: Option<String>,
    #[serde(default)]
    #[schemars(extend("default" = false))]
    include_archived: Option<bool>,
    #[serde(default)]
    #[schemars(
        range(min = 1, max = LIMIT_MAX),
        extend("default" = LIMIT_DEFAULT),
        description = "The most cards returned."
    )]
    limit: Option<u32>,
}

/// A board or stack named by id or by title.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum IdOrTitle {
    Id(u64),
    Title(String),
}

/// One type with two forms, as the model reads it: derived, an untagged
/// enum would be an `anyOf` of two schemas with Rust's integer bounds.
impl JsonSchema for IdOrTitle {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IdOrTitle".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["integer", "string"] })
    }
}

impl IdOrTitle {
    /// By id, or by title ignoring case (whole title first, then a part).
    fn pick<'a, T>(&self, items: &'a [T], id: fn(&T) -> u64, title: fn(&T) -> &str) -> Vec<&'a T> {
        match self {
            IdOrTitle::Id(wanted) => items.iter().filter(|item| id(item) == *wanted).collect(),
            IdOrTitle::Title(wanted) => {
                let wanted = wanted.trim().to_lowercase();
                let exact: Vec<&T> =
                    items.iter().filter(|item| title(item).to_lowercase() == wanted).collect();
                if !exact.is_empty() {
                    return exact;
                }
                items.iter().filter(|item| title(item).to_lowercase().contains(&wanted)).collect()
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            IdOrTitle::Id(id) => format!("id {id}"),
            IdOrTitle::Title(title) => format!("\"{title}\""),
        }
    }
}

/// A board as this tool reports it.
#[derive(Debug, Serialize)]
struct Board {
    id: u64,
    title: String,
    archived: bool,
    /// Whether the user may create and move cards on it.
    can_edit: bool,
    labels: Vec<LabelRef>,
    stacks: Vec<Stack>,
}

#[derive(Debug, Serialize)]
struct Stack {
    id: u64,
    title: String,
    order: i64,
    cards: Vec<Card>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "List Deck cards",
            description: "List the user's Deck boards with their stacks (columns) and cards, optionally filtered by board, stack, text, assignee, label or due date. \
Returns board, stack and card ids: use them with deck_create_card and deck_move_card. Archived boards and cards are left out unless include_archived is true.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "boards": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "title": {"type": "string"},
                            "archived": {"type": "boolean"},
                            "can_edit": {"type": "boolean", "description": "Whether the user may create and move cards here."},
                            "labels": {"type": "array", "items": label_schema()},
                            "stacks": {"type": "array", "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "integer"},
                                    "title": {"type": "string"},
                                    "order": {"type": "integer"},
                                    "cards": {"type": "array", "items": card_schema()}
                                },
                                "required": ["id", "title", "order", "cards"]
                            }}
                        },
                        "required": ["id", "title", "archived", "can_edit", "labels", "stacks"]
                    }},
                    "truncated": {"type": "boolean", "description": "More cards or boards match than were returned."}
                },
                "required": ["boards", "truncated"]
            }),
            meta: None,
        },
        run,
    );
}

fn label_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
        "required": ["id", "title"]
    })
}

/// The JSON Schema of a [`Card`], shared by the Deck tools.
pub fn card_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "description": "The card_id."},
            "board_id": {"type": "integer"},
            "stack_id": {"type": "integer"},
            "title": {"type": "string"},
            "description": {"type": "string", "description": "At most 500 characters."},
            "description_truncated": {"type": "boolean"},
            "duedate": {"type": ["string", "null"], "format": "date-time"},
            "labels": {"type": "array", "items": label_schema()},
            "assigned_users": {"type": "array", "items": {
                "type": "object",
                "properties": {"uid": {"type": "string"}, "display_name": {"type": "string"}},
                "required": ["uid", "display_name"]
            }},
            "order": {"type": "integer", "description": "Position in its stack, 0 first."},
            "archived": {"type": "boolean"}
        },
        "required": ["id", "board_id", "stack_id", "title", "description", "description_truncated", "duedate", "labels", "assigned_users", "order", "archived"]
    })
}

/// The card filters, checked once.
struct CardFilter {
    text: Option<String>,
    assigned_to: Option<String>,
    label: Option<String>,
    due_after: Option<i64>,
    due_before: Option<i64>,
}

impl CardFilter {
    fn matches(&self, card: &Card) -> bool {
        if let Some(text) = &self.text {
            let in_title = card.title.to_lowercase().contains(text);
            let in_description = card.description_whole.to_lowercase().contains(text);
            if !in_title && !in_description {
                return false;
            }
        }
        if let Some(assignee) = &self.assigned_to {
            let assigned = card.assigned_users.iter().any(|user| {
                user.uid.to_lowercase() == *assignee
                    || user.display_name.to_lowercase() == *assignee
            });
            if !assigned {
                return false;
            }
        }
        if let Some(label) = &self.label
            && !card.labels.iter().any(|card_label| card_label.title.to_lowercase() == *label)
        {
            return false;
        }
        if self.due_after.is_some() || self.due_before.is_some() {
            let Some(due) = card.duedate_unix else {
                return false;
            };
            if self.due_after.is_some_and(|after| due < after) {
                return false;
            }
            if self.due_before.is_some_and(|before| due >= before) {
                return false;
            }
        }
        true
    }
}

fn lowercase_filter(text: &Option<String>) -> Option<String> {
    text.as_deref().map(str::trim).filter(|text| !text.is_empty()).map(str::to_lowercase)
}

fn time_filter(text: &Option<String>) -> Result<Option<i64>, ToolFailure> {
    text.as_deref()
        .map(|time| {
            chrono::DateTime::parse_from_rfc3339(time).map(|time| time.timestamp()).map_err(|_| {
                ToolFailure::invalid_arguments(format!(
                    "\"{time}\" is not an RFC 3339 date-time such as 2026-03-27T17:00:00Z."
                ))
            })
        })
        .transpose()
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let limit = mcp_kit::arguments::count("limit", input.limit, LIMIT_DEFAULT, LIMIT_MAX)?;
    let filter = CardFilter {
        text: lowercase_filter(&input.text),
        assigned_to: lowercase_filter(&input.assigned_to),
        label: lowercase_filter(&input.label),
        due_after: time_filter(&input.due_after)?,
        due_before: time_filter(&input.due_before)?,
    };
    let include_archived = input.include_archived.unwrap_or(false);
    let all_boards = deck::boards(&call.nextcloud).await?;
    let visible: Vec<BoardSummary> =
        all_boards.iter().filter(|board| include_archived || !board.archived).cloned().collect();
    let chosen: Vec<&BoardSummary> = match &input.board {
        None => visible.iter().collect(),
        Some(wanted) => {
            let chosen = wanted.pick(&visible, |board| board.id, |board| &board.title);
            if chosen.is_empty() {
                return Err(board_not_found(wanted, &visible, &all_boards));
            }
            chosen
        }
    };
    let mut truncated = chosen.len() > BOARD_COUNT_MAX;
    let mut boards = Vec::new();
    let mut card_count = 0usize;
    let mut stack_matched = input.stack.is_none();
    let mut stack_titles = Vec::new();
    for summary in chosen.into_iter().take(BOARD_COUNT_MAX) {
        let mut stacks = deck::stacks(&call.nextcloud, summary.id, false).await?;
        if include_archived {
            merge_archived(&mut stacks, deck::stacks(&call.nextcloud, summary.id, true).await?);
        }
        stack_titles.extend(stacks.iter().map(|stack| (stack.id, stack.title.clone())));
        let stacks: Vec<StackWithCards> = match &input.stack {
            None => stacks,
            Some(wanted) => wanted
                .pick(&stacks, |stack| stack.id, |stack| &stack.title)
                .into_iter()
                .cloned()
                .collect(),
        };
        stack_matched |= !stacks.is_empty();
        let mut board = Board {
            id: summary.id,
            title: summary.title.clone(),
            archived: summary.archived,
            can_edit: summary.can_edit,
            labels: summary.labels.clone(),
            stacks: Vec::new(),
        };
        for stack in stacks {
            let mut cards = Vec::new();
            for card in stack.cards.into_iter().filter(|card| filter.matches(card)) {
                if card_count == limit as usize {
                    truncated = true;
                    break;
                }
                card_count += 1;
                cards.push(card);
            }
            board.stacks.push(Stack {
                id: stack.id,
                title: stack.title,
                order: stack.order,
                cards,
            });
        }
        // With a stack filter, a board without that stack says nothing.
        if input.stack.is_none() || !board.stacks.is_empty() {
            boards.push(board);
        }
    }
    if let Some(wanted) = &input.stack
        && !stack_matched
    {
        return Err(stack_not_found(wanted, &stack_titles));
    }
    let all_archived = boards.is_empty() && !all_boards.is_empty();
    let text = if all_archived {
        "All of the user's Deck boards are archived. Call deck_cards again with include_archived=true to see them.".to_string()
    } else {
        describe(&boards, card_count, truncated, limit)
    };
    Ok(ToolOutput { text, structured: json!({ "boards": boards, "truncated": truncated }) })
}

/// Adds the archived cards (listed by Deck per stack) to their stacks.
fn merge_archived(stacks: &mut [StackWithCards], archived: Vec<StackWithCards>) {
    for archived_stack in archived {
        if let Some(stack) = stacks.iter_mut().find(|stack| stack.id == archived_stack.id) {
            stack.cards.extend(archived_stack.cards);
            stack.cards.sort_by_key(|card| (card.archived, card.order, card.id));
        }
    }
}

fn board_not_found(
    wanted: &IdOrTitle,
    visible: &[BoardSummary],
    all_boards: &[BoardSummary],
) -> ToolFailure {
    let archived_match =
        !wanted.pick(all_boards, |board| board.id, |board| &board.title).is_empty();
    let message = if archived_match {
        format!(
            "The board {} is archived. Call deck_cards again with include_archived=true to see it.",
            wanted.describe()
        )
    } else if visible.is_empty() {
        format!(
            "No board {} is visible to the user: they have no Deck boards, and none is shared with them. Tell the user.",
            wanted.describe()
        )
    } else {
        let choices: Vec<String> = visible
            .iter()
            .take(CHOICES_SHOWN_MAX)
            .map(|board| format!("\"{}\" (board_id {})", board.title, board.id))
            .collect();
        format!(
            "No board {} is visible to the user (it does not exist or is not shared with them). Their boards are: {}.",
            wanted.describe(),
            choices.join(", ")
        )
    };
    ToolFailure::new(FailureKind::NotFound, message)
}

fn stack_not_found(wanted: &IdOrTitle, stacks: &[(u64, String)]) -> ToolFailure {
    let choices: Vec<String> = stacks
        .iter()
        .take(CHOICES_SHOWN_MAX)
        .map(|(id, title)| format!("\"{title}\" (stack_id {id})"))
        .collect();
    let message = if choices.is_empty() {
        format!("No stack {} exists: the boards searched have no stacks.", wanted.describe())
    } else {
        format!(
            "No stack {} on the boards searched. The stacks there are: {}.",
            wanted.describe(),
            choices.join(", ")
        )
    };
    ToolFailure::new(FailureKind::NotFound, message)
}

fn describe(boards: &[Board], card_count: usize, truncated: bool, limit: u32) -> String {
    if boards.is_empty() {
        return "The user has no Deck boards, and none is shared with them.".to_string();
    }
    let mut lines = Vec::new();
    for board in boards {
        let access = if board.can_edit { "can edit" } else { "read-only" };
        let archived = if board.archived { ", archived" } else { "" };
        lines
            .push(format!("Board \"{}\" (board_id {}, {access}{archived})", board.title, board.id));
        for stack in &board.stacks {
            if stack.cards.is_empty() {
                lines
                    .push(format!("  Stack \"{}\" (stack_id {}): no cards", stack.title, stack.id));
                continue;
            }
            lines.push(format!("  Stack \"{}\" (stack_id {})", stack.title, stack.id));
            for card in &stack.cards {
                lines.push(format!("    - {}", card_line(card)));
            }
        }
    }
    if card_count == 0 {
        lines.push("No card matches the filters.".to_string());
    }
    if truncated {
        lines.push(format!(
            "More cards match than the {limit} shown; filter by board, stack or text, or raise limit."
        ));
    }
    lines.join("\n")
}

/// One card in a line: id, title, due date, labels, assignees.
pub fn card_line(card: &Card) -> String {
    let mut line = format!("card_id {}: \"{}\"", card.id, card.title);
    if let Some(due) = &card.duedate {
        line.push_str(&format!("; due {due}"));
    }
    if !card.labels.is_empty() {
        let labels: Vec<&str> = card.labels.iter().map(|label| label.title.as_str()).collect();
        line.push_str(&format!("; labels: {}", labels.join(", ")));
    }
    if !card.assigned_users.is_empty() {
        let users: Vec<&str> = card.assigned_users.iter().map(|user| user.uid.as_str()).collect();
        line.push_str(&format!("; assigned: {}", users.join(", ")));
    }
    if card.archived {
        line.push_str("; archived");
    }
    if !card.description.is_empty() {
        let (first_line, _) =
            deck::truncate_characters(card.description.lines().next().unwrap_or_default(), 120);
        line.push_str(&format!("\n      {first_line}"));
    }
    line
}
