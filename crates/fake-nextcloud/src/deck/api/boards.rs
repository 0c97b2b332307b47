//! Deck board operations: list, create, read, update, delete (soft).

use super::*;

pub(super) fn list(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let details = call.flag("details").unwrap_or(false);
    let boards = deck
        .boards_of(uid, call.since)
        .into_iter()
        .map(|board| deck.board_json(board, uid, users, details))
        .collect();
    Ok(Answer::list(boards))
}

pub(super) fn create(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let title = call.title(BOARD_TITLE_LENGTH_MAX)?;
    let color = call.color()?;
    let board_id = deck.insert_board(uid, &title, &color, now);
    for (label_title, label_color) in DEFAULT_LABELS {
        deck.insert_label(board_id, label_title, label_color, now);
    }
    Ok(Answer::tagged(deck.board_json(&deck.boards[&board_id], uid, users, true)))
}

pub(super) fn get(Operation { deck, users, call }: Operation<'_, '_>) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let board = path_item::<Board>(deck, call, read)?;
    Ok(Answer::tagged(deck.board_json(board, uid, users, true)))
}

pub(super) fn update(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let board_id = path_id::<Board>(deck, call, manage)?;
    let title = call.title(BOARD_TITLE_LENGTH_MAX)?;
    let color = call.color()?;
    let archived = call.flag("archived").unwrap_or(false);
    let board = deck.boards.get_mut(&board_id).expect("checked");
    board.title = title;
    board.color = color;
    board.archived = archived;
    deck.touch_board(board_id, now);
    Ok(Answer::tagged(deck.board_json(&deck.boards[&board_id], uid, users, true)))
}

pub(super) fn delete(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let board_id = path_id::<Board>(deck, call, manage)?;
    deck.touch_board(board_id, now);
    let board = deck.boards.get_mut(&board_id).expect("checked");
    board.deleted_at = now;
    let json = deck.board_json(&deck.boards[&board_id], uid, users, false);
    Ok(Answer::plain(json))
}
