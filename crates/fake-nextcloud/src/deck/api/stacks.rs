//! Deck stack operations: list (active or archived cards), create, read,
//! update, delete (soft).

use super::*;

pub(super) fn list(
    Operation { deck, users, call }: Operation<'_, '_>,
    archived: bool,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let board_id = path_id::<Board>(deck, call, read)?;
    let (cards, since) = match archived {
        false => (CardsShown::Active, call.since),
        // Deck's archived list ignores If-Modified-Since.
        true => (CardsShown::Archived, 0),
    };
    let stacks = deck
        .stacks_of(board_id)
        .into_iter()
        .filter(|stack| stack.last_modified > since)
        .map(|stack| deck.stack_json(stack, users, cards, now))
        .collect();
    Ok(Answer::list(stacks))
}

pub(super) fn create(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let board_id = path_id::<Board>(deck, call, manage)?;
    let title = call.title(STACK_TITLE_LENGTH_MAX)?;
    let order = call.required_integer("order")?;
    let stack_id = deck.insert_stack(board_id, &title, order, now);
    deck.touch_board(board_id, now);
    Ok(Answer::tagged(deck.stack_json(&deck.stacks[&stack_id], users, CardsShown::None, now)))
}

pub(super) fn get(Operation { deck, users, call }: Operation<'_, '_>) -> Result<Answer, DeckError> {
    let now = call.now;
    let board_id = call.id("board", "Board not found")?;
    let stack = path_item::<Stack>(deck, call, read)?;
    if stack.board_id != board_id {
        return Err(DeckError::NotFound("Stack not found"));
    }
    Ok(Answer::tagged(deck.stack_json(stack, users, CardsShown::Active, now)))
}

pub(super) fn update(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let stack_id = path_id::<Stack>(deck, call, manage)?;
    let title = call.title(STACK_TITLE_LENGTH_MAX)?;
    let order = call.required_integer("order")?;
    let stack = deck.stacks.get_mut(&stack_id).expect("checked");
    stack.title = title;
    stack.order = order;
    deck.touch_stack(stack_id, now);
    Ok(Answer::tagged(deck.stack_json(&deck.stacks[&stack_id], users, CardsShown::None, now)))
}

pub(super) fn delete(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let stack_id = path_id::<Stack>(deck, call, manage)?;
    deck.touch_stack(stack_id, now);
    deck.stacks.get_mut(&stack_id).expect("checked").deleted_at = now;
    Ok(Answer::plain(deck.stack_json(&deck.stacks[&stack_id], users, CardsShown::None, now)))
}
