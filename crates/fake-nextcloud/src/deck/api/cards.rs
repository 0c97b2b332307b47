//! Deck card operations: read, create, replace, delete (soft), reorder
//! across stacks, labels, assignments and archiving.

use super::*;

pub(super) fn get(Operation { deck, users, call }: Operation<'_, '_>) -> Result<Answer, DeckError> {
    let now = call.now;
    let card = path_item::<Card>(deck, call, read)?;
    Ok(Answer::tagged(deck.card_json(card, users, true, now)))
}

pub(super) fn create(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let stack_id = path_id::<Stack>(deck, call, edit)?;
    let title = call.title(CARD_TITLE_LENGTH_MAX)?;
    let card_type =
        call.text("type").filter(|text| !text.is_empty()).unwrap_or("plain".to_string());
    let order = call.integer("order")?.unwrap_or(999);
    let description = call.text("description").unwrap_or_default();
    let duedate = call.date("duedate")?.flatten();
    let card_id =
        deck.insert_card(stack_id, &title, &card_type, order, &description, duedate, uid, now);
    deck.touch_card(card_id, uid, now);
    deck.cards.get_mut(&card_id).expect("inserted").last_editor = None;
    Ok(Answer::tagged(deck.card_json(&deck.cards[&card_id], users, false, now)))
}

pub(super) fn update(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    // Deck's update replaces the card: omitted description, order and
    // duedate are reset, not kept. Clients must send the whole card.
    let title = call.title(CARD_TITLE_LENGTH_MAX)?;
    let card_type = call.required_text("type")?;
    let owner = call.required_text("owner")?;
    let description = call.text("description").unwrap_or_default();
    let order = call.integer("order")?.unwrap_or(0);
    let duedate = call.date("duedate")?.flatten();
    let archived = call.flag("archived");
    let done = call.date("done")?;
    let target_stack = match call.path.get("stack").and_then(|id| id.parse::<u64>().ok()) {
        Some(stack_id) => {
            let current_board =
                deck.stacks.get(&deck.cards[&card_id].stack_id).map(|stack| stack.board_id);
            deck.stacks
                .get(&stack_id)
                .filter(|stack| stack.deleted_at == 0 && Some(stack.board_id) == current_board)
                .map(|stack| stack.id)
        }
        None => None,
    };
    let card = deck.cards.get_mut(&card_id).expect("checked");
    card.title = title;
    card.card_type = card_type;
    card.owner = owner;
    card.description = description;
    card.order = order;
    card.duedate = duedate;
    if let Some(archived) = archived {
        card.archived = archived;
    }
    if let Some(done) = done {
        card.done = done;
    }
    if let Some(stack_id) = target_stack {
        card.stack_id = stack_id;
    }
    deck.touch_card(card_id, uid, now);
    Ok(Answer::tagged(deck.card_json(&deck.cards[&card_id], users, false, now)))
}

pub(super) fn delete(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    deck.touch_card(card_id, uid, now);
    deck.cards.get_mut(&card_id).expect("checked").deleted_at = now;
    Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, false, now)))
}

pub(super) fn reorder(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    let target = call.required_integer("stackId")?;
    let order = call.required_integer("order")?;
    // Deck's CardService::reorder checks edit on the card and on the
    // target stack, nothing else: a card may change boards this way.
    let target_id = deck.stack_for(target as u64, uid, edit)?.id;
    let source_stack = deck.cards[&card_id].stack_id;
    if deck.boards[&board_of_card(deck, &deck.cards[&card_id])].archived {
        return Err(DeckError::Status("Operation not allowed. This board is archived."));
    }
    if deck.cards[&card_id].archived {
        return Err(DeckError::Status("Operation not allowed. This card is archived."));
    }
    let mut ordered: Vec<u64> = deck
        .cards_of(target_id)
        .into_iter()
        .filter(|card| !card.archived)
        .map(|card| card.id)
        .filter(|id| *id != card_id)
        .collect();
    let position = (order.max(0) as usize).min(ordered.len());
    ordered.insert(position, card_id);
    deck.cards.get_mut(&card_id).expect("checked").stack_id = target_id;
    for (index, id) in ordered.iter().enumerate() {
        let card = deck.cards.get_mut(id).expect("listed");
        if card.order != index as i64 || *id == card_id {
            card.order = index as i64;
            deck.touch_card(*id, uid, now);
        }
    }
    deck.touch_stack(source_stack, now);
    let cards =
        ordered.iter().map(|id| deck.card_json(&deck.cards[id], users, false, now)).collect();
    Ok(Answer::plain(Value::Array(cards)))
}

pub(super) fn set_label(
    Operation { deck, users, call }: Operation<'_, '_>,
    assign: bool,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    let label_id = call.required_integer("labelId")?;
    let board_id = board_of_card(deck, &deck.cards[&card_id]);
    let label_ok =
        deck.labels.get(&(label_id as u64)).is_some_and(|label| label.board_id == board_id);
    if !label_ok {
        return Err(DeckError::BadRequest("Operation not allowed. Label does not exist.".into()));
    }
    let card = deck.cards.get_mut(&card_id).expect("checked");
    let label_id = label_id as u64;
    if assign {
        if !card.labels.contains(&label_id) {
            card.labels.push(label_id);
        }
    } else {
        card.labels.retain(|id| *id != label_id);
    }
    deck.touch_card(card_id, uid, now);
    Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, true, now)))
}

pub(super) fn assign_user(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    let assignee = call.required_text("userId")?;
    let board_id = board_of_card(deck, &deck.cards[&card_id]);
    let can_see =
        users.contains_key(&assignee) && deck.permissions(&deck.boards[&board_id], &assignee).read;
    if !can_see {
        return Err(DeckError::BadRequest("The user is not part of the board".into()));
    }
    if deck.cards[&card_id].assigned.iter().any(|(_, assigned)| assigned == &assignee) {
        return Err(DeckError::BadRequest("The user is already assigned to the card".into()));
    }
    let assignment_id = deck.next_id();
    deck.cards.get_mut(&card_id).expect("checked").assigned.push((assignment_id, assignee.clone()));
    deck.touch_card(card_id, uid, now);
    Ok(Answer::plain(assignment_json(assignment_id, &assignee, users, card_id)))
}

pub(super) fn unassign_user(
    Operation { deck, users, call }: Operation<'_, '_>,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    let assignee = call.required_text("userId")?;
    let card = deck.cards.get_mut(&card_id).expect("checked");
    let Some(position) = card.assigned.iter().position(|(_, assigned)| assigned == &assignee)
    else {
        return Err(DeckError::NotFound("No assignment for this user found."));
    };
    let (assignment_id, _) = card.assigned.remove(position);
    deck.touch_card(card_id, uid, now);
    Ok(Answer::plain(assignment_json(assignment_id, &assignee, users, card_id)))
}

pub(super) fn set_archived(
    Operation { deck, users, call }: Operation<'_, '_>,
    archived: bool,
) -> Result<Answer, DeckError> {
    let (uid, now) = (call.uid.as_str(), call.now);
    let card_id = path_id::<Card>(deck, call, edit)?;
    deck.cards.get_mut(&card_id).expect("checked").archived = archived;
    deck.touch_card(card_id, uid, now);
    Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, false, now)))
}

/// Deck's assignment entity: a user on a card.
fn assignment_json(assignment_id: u64, assignee: &str, users: &Users, card_id: u64) -> Value {
    json!({
        "id": assignment_id,
        "participant": user_json(assignee, users),
        "cardId": card_id,
        "type": 0,
    })
}
