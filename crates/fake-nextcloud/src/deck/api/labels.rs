//! Deck label operations: read, create, update, delete (which also takes
//! the label off every card).

use super::*;

pub(super) fn get(
    deck: &mut Deck,
    _users: &Users,
    call: &DeckCall<'_>,
) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let label = deck.label_for(call.id("label", "Label not found")?, uid, read)?;
    Ok(Answer::plain(crate::deck::label_json(label, true)))
}

pub(super) fn create(
    deck: &mut Deck,
    _users: &Users,
    call: &DeckCall<'_>,
) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let now = call.now;
    let board_id = deck.board_for(call.id("board", "Board not found")?, uid, manage)?.id;
    let title = call.required_text("title")?;
    let color = call.required_text("color")?;
    let label_id = deck.insert_label(board_id, &title, color.trim_start_matches('#'), now);
    deck.touch_board(board_id, now);
    Ok(Answer::plain(crate::deck::label_json(&deck.labels[&label_id], false)))
}

pub(super) fn update(
    deck: &mut Deck,
    _users: &Users,
    call: &DeckCall<'_>,
) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let now = call.now;
    let label_id = deck.label_for(call.id("label", "Label not found")?, uid, manage)?.id;
    let title = call.required_text("title")?;
    let color = call.required_text("color")?;
    let label = deck.labels.get_mut(&label_id).expect("checked");
    label.title = title;
    label.color = color.trim_start_matches('#').to_string();
    label.last_modified = now;
    let board_id = label.board_id;
    deck.touch_board(board_id, now);
    Ok(Answer::plain(crate::deck::label_json(&deck.labels[&label_id], false)))
}

pub(super) fn delete(
    deck: &mut Deck,
    _users: &Users,
    call: &DeckCall<'_>,
) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let now = call.now;
    let label_id = deck.label_for(call.id("label", "Label not found")?, uid, manage)?.id;
    let label = deck.labels.remove(&label_id).expect("checked");
    let touched: Vec<u64> = deck
        .cards
        .values()
        .filter(|card| card.labels.contains(&label_id))
        .map(|card| card.id)
        .collect();
    for card_id in touched {
        deck.cards.get_mut(&card_id).expect("listed").labels.retain(|id| *id != label_id);
        deck.touch_card(card_id, uid, now);
    }
    deck.touch_board(label.board_id, now);
    Ok(Answer::plain(crate::deck::label_json(&label, false)))
}
