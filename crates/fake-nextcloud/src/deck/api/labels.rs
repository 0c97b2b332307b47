//! Deck label operations: read, create, update, delete (which also takes
//! the label off every card).

use super::*;

pub(super) fn get(
    Operation { deck, users: _, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let label = path_item::<Label>(deck, call, read)?;
    Ok(Answer::plain(crate::deck::label_json(label, true)))
}

pub(super) fn create(
    Operation { deck, users: _, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let board_id = path_id::<Board>(deck, call, manage)?;
    let title = call.required_text("title")?;
    let color = call.color()?;
    let label_id = deck.insert_label(board_id, &title, &color, now);
    deck.touch_board(board_id, now);
    Ok(Answer::plain(crate::deck::label_json(&deck.labels[&label_id], false)))
}

pub(super) fn update(
    Operation { deck, users: _, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let now = call.now;
    let label_id = path_id::<Label>(deck, call, manage)?;
    let title = call.required_text("title")?;
    let color = call.color()?;
    let label = deck.labels.get_mut(&label_id).expect("checked");
    label.title = title;
    label.color = color;
    label.last_modified = now;
    let board_id = label.board_id;
    deck.touch_board(board_id, now);
    Ok(Answer::plain(crate::deck::label_json(&deck.labels[&label_id], false)))
}

pub(super) fn delete(
    Operation { deck, users: _, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let label_id = path_id::<Label>(deck, call, manage)?;
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
