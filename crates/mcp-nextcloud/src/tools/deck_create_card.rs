//! `deck_create_card`: a new card at the end of a Deck stack. An action:
//! the orchestrator asks the user before it runs.
//!
//! The board and its stacks are read first: Deck files a card under the
//! stack id alone, so without the check a stack of another board would
//! quietly receive it; and Deck refuses unknown and unshared ids alike, so
//! only a refusal to write after a good read can be told as "read-only"
//! (see `nextcloud::deck`).

use super::deck_cards::{card_line, card_schema};
use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::deck::{self, BoardSummary, CARD_TITLE_LENGTH_MAX, NewCard, StackWithCards};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "deck_create_card";
/// The longest description accepted (Deck stores more; a model has no
/// business writing more into a card).
pub const DESCRIPTION_LENGTH_MAX: usize = 20_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[schemars(range(min = 1), description = "The board's id from deck_cards.")]
    board_id: u64,
    #[schemars(range(min = 1), description = "The id of a stack of that board, from deck_cards.")]
    stack_id: u64,
    #[schemars(length(min = 1, max = CARD_TITLE_LENGTH_MAX))]
    title: String,
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_LENGTH_MAX), description = "Markdown.")]
    description: Option<String>,
    #[serde(default)]
    #[schemars(
        extend("format" = "date-time"),
        description = "When the card is due (RFC 3339), e.g. 2026-03-27T17:00:00+01:00."
    )]
    duedate: Option<String>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Create a Deck card",
            description: "Create a card at the end of a stack (column) of a Deck board, with an optional description and due date. \
Take board_id and stack_id from deck_cards. Returns the new card with its card_id.",
            kind: ToolKind::Action { destructive: false, idempotent: false, open_world: false },
            output_schema: card_schema(),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let title = input.title.trim();
    if title.is_empty() {
        return Err(ToolFailure::invalid_arguments("title must not be empty."));
    }
    if title.chars().count() > CARD_TITLE_LENGTH_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "title is longer than Deck's {CARD_TITLE_LENGTH_MAX} characters. Shorten it and put the rest in description."
        )));
    }
    let description = input.description.as_deref().unwrap_or("");
    if description.chars().count() > DESCRIPTION_LENGTH_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "description is longer than {DESCRIPTION_LENGTH_MAX} characters. Summarise it, or put the text in a file and mention the file."
        )));
    }
    let duedate = input.duedate.as_deref().map(deck_date).transpose()?;
    let board = visible_board(&call, input.board_id).await?;
    if board.archived {
        return Err(deck::archived_failure());
    }
    let stacks = deck::stacks(&call.nextcloud, input.board_id, false).await?;
    let stack = find_stack(&stacks, input.stack_id, input.board_id, &board.title)?;
    let card = deck::create_card(
        &call.nextcloud,
        input.board_id,
        &board.title,
        input.stack_id,
        &NewCard { title, description, duedate },
    )
    .await?;
    let text = format!(
        "Created {} in stack \"{}\" (stack_id {}) on board \"{}\" (board_id {}).",
        card_line(&card),
        stack.title,
        stack.id,
        board.title,
        input.board_id
    );
    Ok(ToolOutput { text, structured: json!(card) })
}

/// An RFC 3339 date-time in the ISO 8601 form Deck stores (UTC).
pub fn deck_date(text: &str) -> Result<String, ToolFailure> {
    chrono::DateTime::parse_from_rfc3339(text.trim())
        .map(|time| time.to_utc().format("%Y-%m-%dT%H:%M:%S+00:00").to_string())
        .map_err(|_| {
            ToolFailure::invalid_arguments(format!(
                "duedate \"{text}\" is not an RFC 3339 date-time such as 2026-03-27T17:00:00+01:00."
            ))
        })
}

/// The board as Deck lists it for the user, or "not visible".
pub async fn visible_board(call: &ToolCall, board_id: u64) -> Result<BoardSummary, ToolFailure> {
    let boards = deck::boards(&call.nextcloud).await?;
    boards.into_iter().find(|board| board.id == board_id).ok_or_else(|| {
        ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "Board {board_id} is not visible to the user: it does not exist, or it is not shared with them. Call deck_cards to list the user's boards and use a board_id from there."
            ),
        )
    })
}

/// The stack `stack_id` of the board, or a failure listing its stacks.
pub fn find_stack<'a>(
    stacks: &'a [StackWithCards],
    stack_id: u64,
    board_id: u64,
    board_title: &str,
) -> Result<&'a StackWithCards, ToolFailure> {
    stacks.iter().find(|stack| stack.id == stack_id).ok_or_else(|| {
        let choices: Vec<String> = stacks
            .iter()
            .map(|stack| format!("\"{}\" (stack_id {})", stack.title, stack.id))
            .collect();
        ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "Stack {stack_id} is not a stack of board \"{board_title}\" (board_id {board_id}). Its stacks are: {}.",
                if choices.is_empty() { "none".to_string() } else { choices.join(", ") }
            ),
        )
    })
}
