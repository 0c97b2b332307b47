//! Deck's routes: the legacy app API under `/index.php/apps/deck/api/v1.x/`
//! (also `/apps/deck/api/...`, as with pretty URLs), whose answers are plain
//! JSON and whose errors are `{"status":…,"message":…}`, and the OCS API
//! under `/ocs/v{1,2}.php/apps/deck/api/v1.x/` for boards and stacks, whose
//! answers use the OCS envelope.
//!
//! Every route authenticates with the real request path, so a
//! `bearer_rejected_on` fault on `/index.php/apps/deck` bites here exactly as
//! the real bug does. `If-None-Match` with the current ETag answers 304;
//! `If-Modified-Since` limits the board and stack lists to entities changed
//! after it, as Deck documents (it never turns into a 304).

use super::{BOARD_TITLE_LENGTH_MAX, CardsShown, STACK_TITLE_LENGTH_MAX, parse_date, user_json};
use super::{BoardId, CARD_TITLE_LENGTH_MAX, Card, DEFAULT_LABELS, Deck, DeckError, Permissions};
use crate::ocs::{self, Ocs};
use crate::world::World;
use crate::{AppState, Shared};
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use http::{HeaderMap, StatusCode, header};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

/// Which operation a route performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    ListBoards,
    CreateBoard,
    GetBoard,
    UpdateBoard,
    DeleteBoard,
    ListStacks,
    ListArchivedStacks,
    CreateStack,
    GetStack,
    UpdateStack,
    DeleteStack,
    GetCard,
    CreateCard,
    UpdateCard,
    DeleteCard,
    ReorderCard,
    AssignLabel,
    RemoveLabel,
    AssignUser,
    UnassignUser,
    ArchiveCard,
    UnarchiveCard,
    GetLabel,
    CreateLabel,
    UpdateLabel,
    DeleteLabel,
}

macro_rules! handlers {
    ($($name:ident => $op:expr),* $(,)?) => {
        $(
            async fn $name(
                State(shared): State<AppState>,
                Path(path): Path<BTreeMap<String, String>>,
                request: Request,
            ) -> Response {
                run(&shared, path, request, $op).await
            }
        )*
    };
}

handlers! {
    list_boards => Op::ListBoards,
    create_board => Op::CreateBoard,
    get_board => Op::GetBoard,
    update_board => Op::UpdateBoard,
    delete_board => Op::DeleteBoard,
    list_stacks => Op::ListStacks,
    list_archived_stacks => Op::ListArchivedStacks,
    create_stack => Op::CreateStack,
    get_stack => Op::GetStack,
    update_stack => Op::UpdateStack,
    delete_stack => Op::DeleteStack,
    get_card => Op::GetCard,
    create_card => Op::CreateCard,
    update_card => Op::UpdateCard,
    delete_card => Op::DeleteCard,
    reorder_card => Op::ReorderCard,
    assign_label => Op::AssignLabel,
    remove_label => Op::RemoveLabel,
    assign_user => Op::AssignUser,
    unassign_user => Op::UnassignUser,
    archive_card => Op::ArchiveCard,
    unarchive_card => Op::UnarchiveCard,
    get_label => Op::GetLabel,
    create_label => Op::CreateLabel,
    update_label => Op::UpdateLabel,
    delete_label => Op::DeleteLabel,
}

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for prefix in ["/index.php/apps/deck/api/{api}", "/apps/deck/api/{api}"] {
        let card = format!("{prefix}/boards/{{board}}/stacks/{{stack}}/cards/{{card}}");
        router = router
            .route(&format!("{prefix}/boards"), get(list_boards).post(create_board))
            .route(
                &format!("{prefix}/boards/{{board}}"),
                get(get_board).put(update_board).delete(delete_board),
            )
            .route(
                &format!("{prefix}/boards/{{board}}/stacks"),
                get(list_stacks).post(create_stack),
            )
            .route(&format!("{prefix}/boards/{{board}}/stacks/archived"), get(list_archived_stacks))
            .route(
                &format!("{prefix}/boards/{{board}}/stacks/{{stack}}"),
                get(get_stack).put(update_stack).delete(delete_stack),
            )
            .route(
                &format!("{prefix}/boards/{{board}}/stacks/{{stack}}/cards"),
                axum::routing::post(create_card),
            )
            .route(&card, get(get_card).put(update_card).delete(delete_card))
            .route(&format!("{card}/reorder"), put(reorder_card))
            .route(&format!("{card}/assignLabel"), put(assign_label))
            .route(&format!("{card}/removeLabel"), put(remove_label))
            .route(&format!("{card}/assignUser"), put(assign_user))
            .route(&format!("{card}/unassignUser"), put(unassign_user))
            .route(&format!("{card}/archive"), put(archive_card))
            .route(&format!("{card}/unarchive"), put(unarchive_card))
            .route(&format!("{prefix}/boards/{{board}}/labels"), axum::routing::post(create_label))
            .route(
                &format!("{prefix}/boards/{{board}}/labels/{{label}}"),
                get(get_label).put(update_label).delete(delete_label),
            );
    }
    let ocs_prefix = "/ocs/{version}/apps/deck/api/{api}";
    router
        .route(&format!("{ocs_prefix}/boards"), get(list_boards).post(create_board))
        .route(&format!("{ocs_prefix}/boards/{{board}}"), get(get_board))
        .route(&format!("{ocs_prefix}/boards/{{board}}/stacks"), get(list_stacks))
        .route(&format!("{ocs_prefix}/boards/{{board}}/stacks/{{stack}}"), get(get_stack))
}

/// What an operation answers before it is rendered.
struct Answer {
    value: Value,
    etag: Option<String>,
}

impl Answer {
    fn plain(value: Value) -> Answer {
        Answer { value, etag: None }
    }

    fn tagged(value: Value) -> Answer {
        let etag = value.get("ETag").and_then(Value::as_str).map(str::to_string);
        Answer { value, etag }
    }

    /// A list's ETag: it changes when any member's does.
    fn list(values: Vec<Value>) -> Answer {
        let mut hasher = Sha256::new();
        for value in &values {
            hasher.update(value.get("ETag").and_then(Value::as_str).unwrap_or("").as_bytes());
        }
        let etag = hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect();
        Answer { value: Value::Array(values), etag: Some(etag) }
    }
}

/// The parsed request an operation works on.
struct DeckCall<'a> {
    uid: String,
    path: &'a BTreeMap<String, String>,
    params: Map<String, Value>,
    since: i64,
    now: i64,
}

impl DeckCall<'_> {
    fn id(&self, name: &str, missing: &'static str) -> Result<u64, DeckError> {
        self.path.get(name).and_then(|id| id.parse().ok()).ok_or(DeckError::NotFound(missing))
    }

    fn text(&self, name: &str) -> Option<String> {
        match self.params.get(name)? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            Value::Bool(flag) => Some(flag.to_string()),
            _ => None,
        }
    }

    fn required_text(&self, name: &str) -> Result<String, DeckError> {
        self.text(name)
            .filter(|text| !text.is_empty())
            .ok_or_else(|| DeckError::BadRequest(format!("{name} must be provided")))
    }

    fn title(&self, length_max: usize) -> Result<String, DeckError> {
        let title = self.required_text("title")?;
        if title.chars().count() > length_max {
            return Err(DeckError::BadRequest(format!(
                "The title cannot exceed {length_max} characters"
            )));
        }
        Ok(title)
    }

    fn integer(&self, name: &str) -> Result<Option<i64>, DeckError> {
        match self.params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number
                .as_i64()
                .map(Some)
                .ok_or_else(|| DeckError::BadRequest(format!("{name} must be a number"))),
            Some(Value::String(text)) => text
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| DeckError::BadRequest(format!("{name} must be a number"))),
            Some(_) => Err(DeckError::BadRequest(format!("{name} must be a number"))),
        }
    }

    fn flag(&self, name: &str) -> Option<bool> {
        match self.params.get(name)? {
            Value::Bool(flag) => Some(*flag),
            Value::String(text) => Some(matches!(text.as_str(), "true" | "1")),
            Value::Number(number) => Some(number.as_i64() != Some(0)),
            _ => None,
        }
    }

    /// A date parameter: absent → `None`, `null`/"" → `Some(None)`.
    fn date(&self, name: &str) -> Result<Option<Option<i64>>, DeckError> {
        match self.params.get(name) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(text)) if text.is_empty() => Ok(Some(None)),
            Some(Value::String(text)) => parse_date(text)
                .map(|time| Some(Some(time)))
                .ok_or_else(|| DeckError::BadRequest(format!("{name} must be a valid date"))),
            Some(_) => Err(DeckError::BadRequest(format!("{name} must be a valid date"))),
        }
    }
}

fn read(permissions: Permissions) -> bool {
    permissions.read
}
fn edit(permissions: Permissions) -> bool {
    permissions.edit
}
fn manage(permissions: Permissions) -> bool {
    permissions.manage
}

async fn run(
    shared: &Shared,
    path: BTreeMap<String, String>,
    request: Request,
    op: Op,
) -> Response {
    let (parts, body) = request.into_parts();
    let ocs = match path.get("version") {
        Some(version) => match Ocs::new(version, parts.uri.query(), &parts.headers) {
            Some(ocs) => Some(ocs),
            None => return (StatusCode::NOT_FOUND, "Not found\n").into_response(),
        },
        None => None,
    };
    if !matches!(path.get("api").map(String::as_str), Some("v1.0" | "v1.1")) {
        return (StatusCode::NOT_FOUND, "Not found\n").into_response();
    }
    let user = match crate::auth::authenticate(shared, &parts.headers, parts.uri.path()) {
        Ok(user) => user,
        Err(_) => {
            return match ocs {
                Some(ocs) => ocs.error(ocs::code::UNAUTHORISED, "Current user is not logged in"),
                None => error_json(401, "Current user is not logged in"),
            };
        }
    };
    if ocs.is_some() && !ocs::passes_csrf(shared, &parts.headers, &user) {
        return ocs::csrf_failed();
    }
    let Ok(body) = axum::body::to_bytes(body, ocs::BODY_LENGTH_MAX).await else {
        return render(
            ocs,
            Err(DeckError::BadRequest("The request body is too large".to_string())),
            &parts.headers,
        );
    };
    let params = match ocs::parameters(parts.uri.query(), &parts.headers, &body) {
        Ok(params) => params,
        Err(message) => return render(ocs, Err(DeckError::BadRequest(message)), &parts.headers),
    };
    let since = parts
        .headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| httpdate::parse_http_date(text).ok())
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|duration| duration.as_secs() as i64)
        .unwrap_or(0);
    let call = DeckCall { uid: user.uid, path: &path, params, since, now: shared.now() };
    let result = {
        let mut world = shared.world();
        execute(&mut world, &call, op)
    };
    render(ocs, result, &parts.headers)
}

fn error_json(status: u16, message: &str) -> Response {
    let status_code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status_code, axum::Json(json!({ "status": status, "message": message }))).into_response()
}

fn render(
    ocs: Option<Ocs>,
    result: Result<Answer, DeckError>,
    request_headers: &HeaderMap,
) -> Response {
    let answer = match result {
        Ok(answer) => answer,
        Err(error) => {
            return match ocs {
                Some(ocs) => ocs.error(error.status(), &error.to_string()),
                None => error_json(error.status(), &error.to_string()),
            };
        }
    };
    let mut headers = HeaderMap::new();
    if let Some(etag) = &answer.etag {
        let quoted = format!("\"{etag}\"");
        let if_none_match =
            request_headers.get(header::IF_NONE_MATCH).and_then(|value| value.to_str().ok());
        if if_none_match
            .is_some_and(|wanted| wanted.split(',').any(|one| one.trim().trim_matches('"') == etag))
        {
            return (StatusCode::NOT_MODIFIED, [(header::ETAG, quoted)]).into_response();
        }
        if let Ok(value) = quoted.parse() {
            headers.insert(header::ETAG, value);
        }
    }
    match ocs {
        Some(ocs) => ocs.respond(200, "", answer.value, headers),
        None => {
            let mut response = axum::Json(answer.value).into_response();
            response.headers_mut().extend(headers);
            response
        }
    }
}

fn execute(world: &mut World, call: &DeckCall<'_>, op: Op) -> Result<Answer, DeckError> {
    let uid = call.uid.as_str();
    let now = call.now;
    let World { deck, users, .. } = world;
    match op {
        Op::ListBoards => {
            let details = call.flag("details").unwrap_or(false);
            let boards = deck
                .boards_of(uid, call.since)
                .into_iter()
                .map(|board| deck.board_json(board, uid, users, details))
                .collect();
            Ok(Answer::list(boards))
        }
        Op::CreateBoard => {
            let title = call.title(BOARD_TITLE_LENGTH_MAX)?;
            let color = call.required_text("color")?;
            let board_id = deck.insert_board(uid, &title, color.trim_start_matches('#'), now);
            for (label_title, label_color) in DEFAULT_LABELS {
                deck.insert_label(board_id, label_title, label_color, now);
            }
            Ok(Answer::tagged(deck.board_json(&deck.boards[&board_id], uid, users, true)))
        }
        Op::GetBoard => {
            let board = deck.board_for(call.id("board", "Board not found")?, uid, read)?;
            Ok(Answer::tagged(deck.board_json(board, uid, users, true)))
        }
        Op::UpdateBoard => {
            let board_id = deck.board_for(call.id("board", "Board not found")?, uid, manage)?.id;
            let title = call.title(BOARD_TITLE_LENGTH_MAX)?;
            let color = call.required_text("color")?;
            let archived = call.flag("archived").unwrap_or(false);
            let board = deck.boards.get_mut(&board_id).expect("checked");
            board.title = title;
            board.color = color.trim_start_matches('#').to_string();
            board.archived = archived;
            deck.touch_board(board_id, now);
            Ok(Answer::tagged(deck.board_json(&deck.boards[&board_id], uid, users, true)))
        }
        Op::DeleteBoard => {
            let board_id = deck.board_for(call.id("board", "Board not found")?, uid, manage)?.id;
            deck.touch_board(board_id, now);
            let board = deck.boards.get_mut(&board_id).expect("checked");
            board.deleted_at = now;
            let json = deck.board_json(&deck.boards[&board_id], uid, users, false);
            Ok(Answer::plain(json))
        }
        Op::ListStacks | Op::ListArchivedStacks => {
            let board_id = deck.board_for(call.id("board", "Board not found")?, uid, read)?.id;
            let (cards, since) = match op {
                Op::ListStacks => (CardsShown::Active, call.since),
                // Deck's archived list ignores If-Modified-Since.
                _ => (CardsShown::Archived, 0),
            };
            let stacks = deck
                .stacks_of(board_id)
                .into_iter()
                .filter(|stack| stack.last_modified > since)
                .map(|stack| deck.stack_json(stack, users, cards, now))
                .collect();
            Ok(Answer::list(stacks))
        }
        Op::CreateStack => {
            let board_id = deck.board_for(call.id("board", "Board not found")?, uid, manage)?.id;
            let title = call.title(STACK_TITLE_LENGTH_MAX)?;
            let order = call
                .integer("order")?
                .ok_or_else(|| DeckError::BadRequest("order must be provided".into()))?;
            let stack_id = deck.insert_stack(board_id, &title, order, now);
            deck.touch_board(board_id, now);
            Ok(Answer::tagged(deck.stack_json(
                &deck.stacks[&stack_id],
                users,
                CardsShown::None,
                now,
            )))
        }
        Op::GetStack => {
            let board_id = call.id("board", "Board not found")?;
            let stack = deck.stack_for(call.id("stack", "Stack not found")?, uid, read)?;
            if stack.board_id != board_id {
                return Err(DeckError::NotFound("Stack not found"));
            }
            Ok(Answer::tagged(deck.stack_json(stack, users, CardsShown::Active, now)))
        }
        Op::UpdateStack => {
            let stack_id = deck.stack_for(call.id("stack", "Stack not found")?, uid, manage)?.id;
            let title = call.title(STACK_TITLE_LENGTH_MAX)?;
            let order = call
                .integer("order")?
                .ok_or_else(|| DeckError::BadRequest("order must be provided".into()))?;
            let stack = deck.stacks.get_mut(&stack_id).expect("checked");
            stack.title = title;
            stack.order = order;
            deck.touch_stack(stack_id, now);
            Ok(Answer::tagged(deck.stack_json(
                &deck.stacks[&stack_id],
                users,
                CardsShown::None,
                now,
            )))
        }
        Op::DeleteStack => {
            let stack_id = deck.stack_for(call.id("stack", "Stack not found")?, uid, manage)?.id;
            deck.touch_stack(stack_id, now);
            deck.stacks.get_mut(&stack_id).expect("checked").deleted_at = now;
            Ok(Answer::plain(deck.stack_json(
                &deck.stacks[&stack_id],
                users,
                CardsShown::None,
                now,
            )))
        }
        Op::GetCard => {
            let card = deck.card_for(call.id("card", "Card not found")?, uid, read)?;
            Ok(Answer::tagged(deck.card_json(card, users, true, now)))
        }
        Op::CreateCard => {
            let stack_id = deck.stack_for(call.id("stack", "Stack not found")?, uid, edit)?.id;
            let title = call.title(CARD_TITLE_LENGTH_MAX)?;
            let card_type =
                call.text("type").filter(|text| !text.is_empty()).unwrap_or("plain".to_string());
            let order = call.integer("order")?.unwrap_or(999);
            let description = call.text("description").unwrap_or_default();
            let duedate = call.date("duedate")?.flatten();
            let card_id = deck.insert_card(
                stack_id,
                &title,
                &card_type,
                order,
                &description,
                duedate,
                uid,
                now,
            );
            deck.touch_card(card_id, uid, now);
            deck.cards.get_mut(&card_id).expect("inserted").last_editor = None;
            Ok(Answer::tagged(deck.card_json(&deck.cards[&card_id], users, false, now)))
        }
        Op::UpdateCard => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
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
                        .filter(|stack| {
                            stack.deleted_at == 0 && Some(stack.board_id) == current_board
                        })
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
        Op::DeleteCard => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            deck.touch_card(card_id, uid, now);
            deck.cards.get_mut(&card_id).expect("checked").deleted_at = now;
            Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, false, now)))
        }
        Op::ReorderCard => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            let target = call
                .integer("stackId")?
                .ok_or_else(|| DeckError::BadRequest("stackId must be provided".into()))?;
            let order = call
                .integer("order")?
                .ok_or_else(|| DeckError::BadRequest("order must be provided".into()))?;
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
            let cards = ordered
                .iter()
                .map(|id| deck.card_json(&deck.cards[id], users, false, now))
                .collect();
            Ok(Answer::plain(Value::Array(cards)))
        }
        Op::AssignLabel | Op::RemoveLabel => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            let label_id = call
                .integer("labelId")?
                .ok_or_else(|| DeckError::BadRequest("labelId must be provided".into()))?;
            let board_id = board_of_card(deck, &deck.cards[&card_id]);
            let label_ok =
                deck.labels.get(&(label_id as u64)).is_some_and(|label| label.board_id == board_id);
            if !label_ok {
                return Err(DeckError::BadRequest(
                    "Operation not allowed. Label does not exist.".into(),
                ));
            }
            let card = deck.cards.get_mut(&card_id).expect("checked");
            let label_id = label_id as u64;
            if op == Op::AssignLabel {
                if !card.labels.contains(&label_id) {
                    card.labels.push(label_id);
                }
            } else {
                card.labels.retain(|id| *id != label_id);
            }
            deck.touch_card(card_id, uid, now);
            Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, true, now)))
        }
        Op::AssignUser => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            let assignee = call.required_text("userId")?;
            let board_id = board_of_card(deck, &deck.cards[&card_id]);
            let can_see = users.contains_key(&assignee)
                && deck.permissions(&deck.boards[&board_id], &assignee).read;
            if !can_see {
                return Err(DeckError::BadRequest("The user is not part of the board".into()));
            }
            if deck.cards[&card_id].assigned.iter().any(|(_, assigned)| assigned == &assignee) {
                return Err(DeckError::BadRequest(
                    "The user is already assigned to the card".into(),
                ));
            }
            let assignment_id = deck.next_id();
            deck.cards
                .get_mut(&card_id)
                .expect("checked")
                .assigned
                .push((assignment_id, assignee.clone()));
            deck.touch_card(card_id, uid, now);
            Ok(Answer::plain(json!({
                "id": assignment_id,
                "participant": user_json(&assignee, users),
                "cardId": card_id,
                "type": 0,
            })))
        }
        Op::UnassignUser => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            let assignee = call.required_text("userId")?;
            let card = deck.cards.get_mut(&card_id).expect("checked");
            let Some(position) =
                card.assigned.iter().position(|(_, assigned)| assigned == &assignee)
            else {
                return Err(DeckError::NotFound("No assignment for this user found."));
            };
            let (assignment_id, _) = card.assigned.remove(position);
            deck.touch_card(card_id, uid, now);
            Ok(Answer::plain(json!({
                "id": assignment_id,
                "participant": user_json(&assignee, users),
                "cardId": card_id,
                "type": 0,
            })))
        }
        Op::ArchiveCard | Op::UnarchiveCard => {
            let card_id = deck.card_for(call.id("card", "Card not found")?, uid, edit)?.id;
            deck.cards.get_mut(&card_id).expect("checked").archived = op == Op::ArchiveCard;
            deck.touch_card(card_id, uid, now);
            Ok(Answer::plain(deck.card_json(&deck.cards[&card_id], users, false, now)))
        }
        Op::GetLabel => {
            let label = deck.label_for(call.id("label", "Label not found")?, uid, read)?;
            Ok(Answer::plain(super::label_json(label, true)))
        }
        Op::CreateLabel => {
            let board_id = deck.board_for(call.id("board", "Board not found")?, uid, manage)?.id;
            let title = call.required_text("title")?;
            let color = call.required_text("color")?;
            let label_id = deck.insert_label(board_id, &title, color.trim_start_matches('#'), now);
            deck.touch_board(board_id, now);
            Ok(Answer::plain(super::label_json(&deck.labels[&label_id], false)))
        }
        Op::UpdateLabel => {
            let label_id = deck.label_for(call.id("label", "Label not found")?, uid, manage)?.id;
            let title = call.required_text("title")?;
            let color = call.required_text("color")?;
            let label = deck.labels.get_mut(&label_id).expect("checked");
            label.title = title;
            label.color = color.trim_start_matches('#').to_string();
            label.last_modified = now;
            let board_id = label.board_id;
            deck.touch_board(board_id, now);
            Ok(Answer::plain(super::label_json(&deck.labels[&label_id], false)))
        }
        Op::DeleteLabel => {
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
            Ok(Answer::plain(super::label_json(&label, false)))
        }
    }
}

fn board_of_card(deck: &Deck, card: &Card) -> BoardId {
    deck.stacks.get(&card.stack_id).map(|stack| stack.board_id).expect("a live card's stack exists")
}
