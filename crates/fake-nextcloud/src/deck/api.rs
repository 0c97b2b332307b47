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
use super::{Board, Item, Label, Stack, Wanted};
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

mod boards;
mod cards;
mod labels;
mod stacks;

/// Every user of the world, by uid.
type Users = BTreeMap<String, crate::world::User>;

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

    /// The `color` a board or label must be given, without the `#` Deck
    /// stores it without.
    fn color(&self) -> Result<String, DeckError> {
        Ok(self.required_text("color")?.trim_start_matches('#').to_string())
    }

    /// An integer the operation cannot go without, refused in Deck's words
    /// when it is missing.
    fn required_integer(&self, name: &str) -> Result<i64, DeckError> {
        self.integer(name)?.ok_or_else(|| DeckError::BadRequest(format!("{name} must be provided")))
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

/// What an operation works on: the Deck, the users (for their JSON) and
/// the call.
struct Operation<'a, 'c> {
    deck: &'a mut Deck,
    users: &'a Users,
    call: &'a DeckCall<'c>,
}

/// The item the call's path names, if the caller may `check` it.
fn path_item<'d, T: Item>(
    deck: &'d Deck,
    call: &DeckCall<'_>,
    check: Wanted,
) -> Result<&'d T, DeckError> {
    deck.item_for(call.id(T::PATH_NAME, T::MISSING)?, &call.uid, check)
}

/// The id of the item the call's path names, if the caller may `check` it.
fn path_id<T: Item>(deck: &Deck, call: &DeckCall<'_>, check: Wanted) -> Result<u64, DeckError> {
    Ok(path_item::<T>(deck, call, check)?.id())
}

/// Runs one operation; each entity's operations live in a module of their
/// own, one small function an operation.
fn execute(world: &mut World, call: &DeckCall<'_>, op: Op) -> Result<Answer, DeckError> {
    let World { deck, users, .. } = world;
    let operation = Operation { deck, users, call };
    match op {
        Op::ListBoards => boards::list(operation),
        Op::CreateBoard => boards::create(operation),
        Op::GetBoard => boards::get(operation),
        Op::UpdateBoard => boards::update(operation),
        Op::DeleteBoard => boards::delete(operation),
        Op::ListStacks | Op::ListArchivedStacks => {
            stacks::list(operation, op == Op::ListArchivedStacks)
        }
        Op::CreateStack => stacks::create(operation),
        Op::GetStack => stacks::get(operation),
        Op::UpdateStack => stacks::update(operation),
        Op::DeleteStack => stacks::delete(operation),
        Op::GetCard => cards::get(operation),
        Op::CreateCard => cards::create(operation),
        Op::UpdateCard => cards::update(operation),
        Op::DeleteCard => cards::delete(operation),
        Op::ReorderCard => cards::reorder(operation),
        Op::AssignLabel | Op::RemoveLabel => cards::set_label(operation, op == Op::AssignLabel),
        Op::AssignUser => cards::assign_user(operation),
        Op::UnassignUser => cards::unassign_user(operation),
        Op::ArchiveCard | Op::UnarchiveCard => {
            cards::set_archived(operation, op == Op::ArchiveCard)
        }
        Op::GetLabel => labels::get(operation),
        Op::CreateLabel => labels::create(operation),
        Op::UpdateLabel => labels::update(operation),
        Op::DeleteLabel => labels::delete(operation),
    }
}

fn board_of_card(deck: &Deck, card: &Card) -> BoardId {
    deck.stacks.get(&card.stack_id).map(|stack| stack.board_id).expect("a live card's stack exists")
}
