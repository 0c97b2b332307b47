//! `deck_move_card`: moves a card to a position in a stack, on its board or
//! another one, with Deck's reorder endpoint. An action: the orchestrator
//! asks the user before it runs.
//!
//! Without an order the card goes to the top of the stack (order 0): it is
//! one request, the same arguments always give the same board (so the tool
//! is idempotent), and the moved card is the first thing the user sees in
//! that column. "The end" would need the stack's current length, which can
//! change between the read and the move.

use super::deck_cards::{card_line, card_schema};
use super::deck_create_card::{find_stack, visible_board};
use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::deck;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::ToolFailure;

pub const NAME: &str = "deck_move_card";
/// The largest position accepted; Deck clamps anything past the end.
pub const ORDER_MAX: i64 = 10_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[schemars(range(min = 1), description = "The card's id from deck_cards.")]
    card_id: u64,
    #[schemars(range(min = 1), description = "The board of the target stack.")]
    board_id: u64,
    #[schemars(range(min = 1), description = "The target stack's id from deck_cards.")]
    stack_id: u64,
    #[serde(default)]
    #[schemars(
        range(min = 0, max = ORDER_MAX),
        extend("default" = 0),
        description = "Position in the target stack: 0 is the top (default); a number past the end puts it last."
    )]
    order: Option<i64>,
}

pub fn register(registry: &mut Registry) {
    let mut output_schema = card_schema();
    output_schema["properties"]["previous_stack_id"] =
        json!({"type": "integer", "description": "The stack the card was in before."});
    if let Some(required) = output_schema["required"].as_array_mut() {
        required.push(json!("previous_stack_id"));
    }
    registry.add(
        Definition {
            name: NAME,
            title: "Move a Deck card",
            description: "Move a card to another stack (column), e.g. from \"To do\" to \"Done\", or to another position in its stack. \
Take card_id, board_id and stack_id (the target) from deck_cards. The card goes to the top of the stack unless order says otherwise. \
Returns the card in its new place.",
            kind: ToolKind::Action { destructive: false, idempotent: true, open_world: false },
            output_schema,
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let order = input.order.unwrap_or(0);
    if !(0..=ORDER_MAX).contains(&order) {
        return Err(ToolFailure::invalid_arguments(format!(
            "order must be between 0 (top) and {ORDER_MAX}."
        )));
    }
    let board = visible_board(&call, input.board_id).await?;
    let stacks = deck::stacks(&call.nextcloud, input.board_id, false).await?;
    let stack = find_stack(&stacks, input.stack_id, input.board_id, &board.title)?;
    let card = deck::card(&call.nextcloud, input.board_id, input.stack_id, input.card_id).await?;
    if card.archived || board.archived {
        return Err(deck::archived_failure());
    }
    let previous_stack_id = card.stack_id;
    let reported_order =
        deck::reorder_card(&call.nextcloud, input.board_id, input.stack_id, input.card_id, order)
            .await?;
    // The card as read before the move, in its new place.
    let card = deck::Card {
        board_id: input.board_id,
        stack_id: input.stack_id,
        order: reported_order.unwrap_or(order),
        ..card
    };
    let position = if card.order == 0 {
        "at the top".to_string()
    } else {
        format!("at position {}", card.order)
    };
    let text = format!(
        "Moved {} to stack \"{}\" (stack_id {}) on board \"{}\" (board_id {}), {position}. It was in stack_id {previous_stack_id}.",
        card_line(&card),
        stack.title,
        stack.id,
        board.title,
        board.id
    );
    let mut structured = json!(card);
    structured["previous_stack_id"] = json!(previous_stack_id);
    Ok(ToolOutput { text, structured })
}
