//! Deck's REST API (`/index.php/apps/deck/api/v1.0/`), read leniently into
//! the shapes the Deck tools report, and Deck's refusals turned into
//! instructions.
//!
//! Deck answers 403 "Permission denied" both for an id that does not exist
//! and for one on a board the user cannot see (on purpose, so ids do not
//! leak), and some versions answer 404 instead. So a refusal is only read as
//! "cannot edit" after a read of the same board succeeded; a refused read is
//! "not visible to the user", which is what an unknown id is from where the
//! user stands.

use super::{Answer, Nextcloud, unreachable_failure};
use crate::bearer::UpstreamCredential;
use http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wire::{FailureKind, ToolFailure};

/// Where Deck's app API lives.
pub const API_PATH: &str = "/index.php/apps/deck/api/v1.0";
/// Deck refuses longer card titles (`BadRequestException`).
pub const CARD_TITLE_LENGTH_MAX: usize = 255;
/// How much of a card description a listing shows; the rest is cut with an
/// ellipsis (descriptions can be whole documents).
pub const DESCRIPTION_LENGTH_MAX: usize = 500;
/// The most entities read from one Deck answer: more is a runaway board.
pub const ENTITY_COUNT_MAX: usize = 10_000;

/// A board as Deck's `GET /boards` lists it.
#[derive(Debug, Clone)]
pub struct BoardSummary {
    pub id: u64,
    pub title: String,
    pub archived: bool,
    pub can_edit: bool,
    pub labels: Vec<LabelRef>,
}

/// A stack with its cards, as `GET /boards/{id}/stacks` lists it.
#[derive(Debug, Clone)]
pub struct StackWithCards {
    pub id: u64,
    pub title: String,
    pub order: i64,
    pub cards: Vec<Card>,
}

/// A card as the Deck tools report it; the ids are what the action tools take.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    pub id: u64,
    pub board_id: u64,
    pub stack_id: u64,
    pub title: String,
    /// At most [`DESCRIPTION_LENGTH_MAX`] characters.
    pub description: String,
    pub description_truncated: bool,
    /// The whole description, for filters: a match past the cut still counts.
    #[serde(skip)]
    pub description_whole: String,
    /// RFC 3339 in UTC, or null.
    pub duedate: Option<String>,
    #[serde(skip)]
    pub duedate_unix: Option<i64>,
    pub labels: Vec<LabelRef>,
    pub assigned_users: Vec<UserRef>,
    pub order: i64,
    pub archived: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelRef {
    pub id: u64,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserRef {
    pub uid: String,
    pub display_name: String,
}

/// What a Deck request was doing, so a refusal can be told in those terms.
#[derive(Debug, Clone, Copy)]
pub enum Situation<'a> {
    ListBoards,
    /// Reading a board's stacks: refused means the board is not visible.
    ReadBoard {
        board_id: u64,
    },
    /// Reading a card: refused means the card is not visible.
    ReadCard {
        card_id: u64,
    },
    /// Creating a card on a board the user could read.
    CreateCard {
        board_title: &'a str,
    },
    /// Moving a card the user could read into a board they could read.
    MoveCard,
}

// ---- requests ---------------------------------------------------------

/// The boards the user can read, archived ones included.
pub async fn boards(nextcloud: &Nextcloud) -> Result<Vec<BoardSummary>, ToolFailure> {
    let url = nextcloud.url(&format!("{API_PATH}/boards?details=true"));
    let value = request(nextcloud, Method::GET, &url, None, Situation::ListBoards).await?;
    Ok(list(value)
        .iter()
        .filter_map(live::<WireBoard>)
        .map(|board| BoardSummary {
            id: board.id,
            title: board.title,
            archived: board.archived,
            can_edit: board.permissions.edit,
            labels: board.labels.into_iter().map(WireLabel::into_ref).collect(),
        })
        .collect())
}

/// A board's stacks in Deck's order with their cards: the active cards, or
/// with `archived` the archived ones (Deck lists them separately).
pub async fn stacks(
    nextcloud: &Nextcloud,
    board_id: u64,
    archived: bool,
) -> Result<Vec<StackWithCards>, ToolFailure> {
    let suffix = if archived { "/archived" } else { "" };
    let url = nextcloud.url(&format!("{API_PATH}/boards/{board_id}/stacks{suffix}"));
    let value =
        request(nextcloud, Method::GET, &url, None, Situation::ReadBoard { board_id }).await?;
    let mut stacks: Vec<StackWithCards> = list(value)
        .iter()
        .filter_map(live::<WireStack>)
        .map(|stack| StackWithCards {
            id: stack.id,
            title: stack.title,
            order: stack.order,
            cards: stack
                .cards
                .unwrap_or_default()
                .iter()
                .filter_map(|card| card_from_value(card, board_id))
                .collect(),
        })
        .collect();
    stacks.sort_by_key(|stack| (stack.order, stack.id));
    for stack in &mut stacks {
        stack.cards.sort_by_key(|card| (card.order, card.id));
    }
    Ok(stacks)
}

/// One card, wherever it is; `board_id` and `stack_id` only shape the URL
/// (Deck finds the card by id).
pub async fn card(
    nextcloud: &Nextcloud,
    board_id: u64,
    stack_id: u64,
    card_id: u64,
) -> Result<Card, ToolFailure> {
    let url =
        nextcloud.url(&format!("{API_PATH}/boards/{board_id}/stacks/{stack_id}/cards/{card_id}"));
    let value =
        request(nextcloud, Method::GET, &url, None, Situation::ReadCard { card_id }).await?;
    card_from_value(&value, board_id).ok_or_else(unexpected_answer)
}

/// Creates a card at the end of a stack (Deck's default order, 999).
pub async fn create_card(
    nextcloud: &Nextcloud,
    board_id: u64,
    board_title: &str,
    stack_id: u64,
    fields: &NewCard<'_>,
) -> Result<Card, ToolFailure> {
    let url = nextcloud.url(&format!("{API_PATH}/boards/{board_id}/stacks/{stack_id}/cards"));
    let body = serde_json::json!({
        "title": fields.title,
        "type": "plain",
        "order": 999,
        "description": fields.description,
        "duedate": fields.duedate,
    });
    let value =
        request(nextcloud, Method::POST, &url, Some(body), Situation::CreateCard { board_title })
            .await?;
    card_from_value(&value, board_id).ok_or_else(unexpected_answer)
}

/// What a new card carries.
#[derive(Debug, Clone)]
pub struct NewCard<'a> {
    pub title: &'a str,
    pub description: &'a str,
    /// Deck's ISO 8601 form, e.g. `2026-03-27T17:00:00+00:00`.
    pub duedate: Option<String>,
}

/// Moves a card to `order` in a stack with Deck's reorder endpoint; returns
/// the card's order there as Deck reports it.
pub async fn reorder_card(
    nextcloud: &Nextcloud,
    board_id: u64,
    stack_id: u64,
    card_id: u64,
    order: i64,
) -> Result<Option<i64>, ToolFailure> {
    let url = nextcloud
        .url(&format!("{API_PATH}/boards/{board_id}/stacks/{stack_id}/cards/{card_id}/reorder"));
    let body = serde_json::json!({ "stackId": stack_id, "order": order });
    let value = request(nextcloud, Method::PUT, &url, Some(body), Situation::MoveCard).await?;
    // Deck answers with the target stack's cards (a list, or an object keyed
    // by order in older versions).
    Ok(list(value)
        .iter()
        .filter(|card| card.get("id").and_then(Value::as_u64) == Some(card_id))
        .find_map(|card| card.get("order").and_then(Value::as_i64)))
}

async fn request(
    nextcloud: &Nextcloud,
    method: Method,
    url: &str,
    body: Option<Value>,
    situation: Situation<'_>,
) -> Result<Value, ToolFailure> {
    let mut headers = vec![("accept", "application/json")];
    if body.is_some() {
        headers.push(("content-type", "application/json"));
    }
    let body = body.map(|body| body.to_string().into_bytes());
    let answer = nextcloud.send(method, url, &headers, body).await?;
    if !answer.status.is_success() {
        return Err(failure(&answer, &nextcloud.credential, situation));
    }
    serde_json::from_slice(&answer.body).map_err(|_| unexpected_answer())
}

/// The members of a JSON list, or of an object used as one (PHP's
/// `json_encode` of an array whose keys are not 0..n).
fn list(value: Value) -> Vec<Value> {
    let members: Vec<Value> = match value {
        Value::Array(members) => members,
        Value::Object(map) => map.into_iter().map(|(_, member)| member).collect(),
        _ => Vec::new(),
    };
    members.into_iter().take(ENTITY_COUNT_MAX).collect()
}

fn unexpected_answer() -> ToolFailure {
    ToolFailure::new(
        FailureKind::NextcloudUnreachable,
        "Deck gave an answer the assistant could not read. Tell the user the request could not be completed; do not retry it blindly.",
    )
}

// ---- failures ---------------------------------------------------------

/// Turns Deck's refusal into an instruction. Deck's own message is read
/// only to recognise the archived case, never passed on.
pub fn failure(
    answer: &Answer,
    credential: &UpstreamCredential,
    situation: Situation<'_>,
) -> ToolFailure {
    let deck_message = serde_json::from_slice::<Value>(&answer.body)
        .ok()
        .and_then(|body| body.get("message").and_then(Value::as_str).map(str::to_lowercase))
        .unwrap_or_default();
    match answer.status {
        StatusCode::UNAUTHORIZED => super::unauthorized_failure(
            credential,
            "Nextcloud's Deck app does not accept the assistant's token sign-in on this server (a known Nextcloud limitation on app routes), so Deck can't be reached with the current sign-in. Do not retry. Tell the user; an administrator can fix it by switching Tamebi's Nextcloud connection to app-password mode. Files, calendar and contacts may still work.",
            "Deck",
        ),
        status if status.is_server_error() && deck_message.contains("archived") => {
            archived_failure()
        }
        status if status.is_server_error() => unreachable_failure(),
        StatusCode::FORBIDDEN | StatusCode::NOT_FOUND => {
            refused_or_missing(answer.status, situation)
        }
        StatusCode::BAD_REQUEST => ToolFailure::invalid_arguments(
            "Deck refused these values (a title that is too long, or a date or id it could not read). Check the arguments against the tool's schema and call again.",
        ),
        _ => ToolFailure::new(
            FailureKind::NextcloudUnreachable,
            "Deck gave an unexpected answer. Tell the user the request could not be completed; do not retry it blindly.",
        ),
    }
}

pub fn archived_failure() -> ToolFailure {
    ToolFailure::new(
        FailureKind::Conflict,
        "Deck does not change archived cards or cards on archived boards. Tell the user; they can unarchive it in Deck first, then ask again.",
    )
}

fn refused_or_missing(status: StatusCode, situation: Situation<'_>) -> ToolFailure {
    match situation {
        Situation::ListBoards if status == StatusCode::NOT_FOUND => ToolFailure::new(
            FailureKind::NotFound,
            "The Deck app is not available on this Nextcloud (not installed, or not enabled for the user). Tell the user; do not retry.",
        ),
        Situation::ListBoards => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud does not let the user use the Deck app. Tell the user; do not retry.",
        ),
        Situation::ReadBoard { board_id } => ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "Board {board_id} is not visible to the user: it does not exist, or it is not shared with them. Call deck_cards to list the user's boards and use a board_id from there."
            ),
        ),
        Situation::ReadCard { card_id } => ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "Card {card_id} is not visible to the user: it does not exist, was deleted, or is on a board not shared with them. Call deck_cards to find the card and use its id."
            ),
        ),
        Situation::CreateCard { board_title } if status == StatusCode::FORBIDDEN => {
            ToolFailure::new(
                FailureKind::RefusedByNextcloud,
                format!(
                    "The user can't edit the board \"{board_title}\": it is shared with them read-only. Do not retry; tell the user, and suggest they ask the board's owner to share it with edit rights."
                ),
            )
        }
        Situation::MoveCard if status == StatusCode::FORBIDDEN => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "The user can't edit the board this card is on, or the target board: they have read-only access. Do not retry; tell the user, and suggest they ask the board's owner to share it with edit rights.",
        ),
        Situation::CreateCard { .. } | Situation::MoveCard => ToolFailure::new(
            FailureKind::NotFound,
            "The board, stack or card is gone (it was deleted or unshared meanwhile). Call deck_cards again and use the ids it returns now.",
        ),
    }
}

// ---- Deck's JSON --------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBoard {
    id: u64,
    title: String,
    #[serde(default)]
    archived: bool,
    #[serde(default)]
    permissions: WirePermissions,
    #[serde(default, deserialize_with = "null_as_default")]
    labels: Vec<WireLabel>,
    #[serde(default)]
    deleted_at: i64,
}

/// A board, stack or card as Deck lists it: Deck keeps deleted ones, with
/// the time of deletion in `deletedAt` (0 while alive).
trait Entity: serde::de::DeserializeOwned {
    fn deleted_at(&self) -> i64;
}

impl Entity for WireBoard {
    fn deleted_at(&self) -> i64 {
        self.deleted_at
    }
}

impl Entity for WireStack {
    fn deleted_at(&self) -> i64 {
        self.deleted_at
    }
}

impl Entity for WireCard {
    fn deleted_at(&self) -> i64 {
        self.deleted_at
    }
}

/// `value` as a `T`, unless it does not parse as one or Deck marks it
/// deleted: such entries are skipped, not failed on.
fn live<T: Entity>(value: &Value) -> Option<T> {
    serde_json::from_value::<T>(value.clone()).ok().filter(|entity| entity.deleted_at() == 0)
}

#[derive(Debug, Default, Deserialize)]
struct WirePermissions {
    #[serde(rename = "PERMISSION_EDIT", default)]
    edit: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireStack {
    id: u64,
    title: String,
    #[serde(default)]
    order: i64,
    #[serde(default)]
    cards: Option<Vec<Value>>,
    #[serde(default)]
    deleted_at: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCard {
    id: u64,
    title: String,
    #[serde(default, deserialize_with = "null_as_default")]
    description: String,
    stack_id: u64,
    #[serde(default)]
    order: i64,
    #[serde(default)]
    archived: bool,
    #[serde(default)]
    duedate: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    labels: Vec<WireLabel>,
    #[serde(default, deserialize_with = "null_as_default")]
    assigned_users: Vec<WireAssignment>,
    #[serde(default)]
    deleted_at: i64,
}

#[derive(Debug, Deserialize)]
struct WireLabel {
    id: u64,
    title: String,
}

impl WireLabel {
    fn into_ref(self) -> LabelRef {
        LabelRef { id: self.id, title: self.title }
    }
}

#[derive(Debug, Deserialize)]
struct WireAssignment {
    participant: WireParticipant,
}

#[derive(Debug, Deserialize)]
struct WireParticipant {
    uid: String,
    #[serde(default)]
    displayname: Option<String>,
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A card from Deck's JSON; `None` for a deleted card or one Deck described
/// in a shape we cannot read.
pub fn card_from_value(value: &Value, board_id: u64) -> Option<Card> {
    let card = live::<WireCard>(value)?;
    let (description, description_truncated) =
        truncate_characters(card.description.trim(), DESCRIPTION_LENGTH_MAX);
    let duedate = card.duedate.as_deref().and_then(parse_deck_date);
    Some(Card {
        id: card.id,
        board_id,
        stack_id: card.stack_id,
        title: card.title,
        description,
        description_truncated,
        description_whole: card.description,
        duedate: duedate.map(rfc3339_utc),
        duedate_unix: duedate,
        labels: card.labels.into_iter().map(WireLabel::into_ref).collect(),
        assigned_users: card
            .assigned_users
            .into_iter()
            .map(|assignment| UserRef {
                display_name: assignment
                    .participant
                    .displayname
                    .unwrap_or_else(|| assignment.participant.uid.clone()),
                uid: assignment.participant.uid,
            })
            .collect(),
        order: card.order,
        archived: card.archived,
    })
}

/// Deck's dates: `DateTime::ATOM` (`2026-03-27T17:00:00+00:00`), which is
/// RFC 3339; a few versions send a space instead of the `T`.
pub fn parse_deck_date(text: &str) -> Option<i64> {
    let text = text.trim();
    chrono::DateTime::parse_from_rfc3339(text)
        .or_else(|_| chrono::DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%:z"))
        .map(|time| time.timestamp())
        .ok()
}

pub fn rfc3339_utc(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The first `length_max` characters and whether anything was cut (then
/// the text ends with an ellipsis).
pub fn truncate_characters(text: &str, length_max: usize) -> (String, bool) {
    match text.char_indices().nth(length_max) {
        None => (text.to_string(), false),
        Some((cut, _)) => (format!("{}…", text[..cut].trim_end()), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(status: u16, body: Value) -> Answer {
        Answer {
            status: StatusCode::from_u16(status).unwrap(),
            headers: http::HeaderMap::new(),
            body: body.to_string().into(),
        }
    }

    #[test]
    fn a_card_is_read_leniently_and_dates_become_utc() {
        let card = card_from_value(
            &json!({
                "id": 7, "title": "Budget", "description": null, "stackId": 3,
                "order": 2, "archived": false, "duedate": "2026-03-27T19:00:00+02:00",
                "labels": null, "assignedUsers": [{"participant": {"uid": "bob", "displayname": "Bob Stone"}}],
                "owner": "alice", "deletedAt": 0
            }),
            1,
        )
        .unwrap();
        assert_eq!(card.duedate.as_deref(), Some("2026-03-27T17:00:00Z"));
        assert_eq!(card.description, "");
        assert!(card.labels.is_empty());
        assert_eq!(card.assigned_users[0].uid, "bob");
        assert_eq!((card.board_id, card.stack_id), (1, 3));
        assert!(
            card_from_value(&json!({"id": 7, "title": "x", "stackId": 3, "deletedAt": 5}), 1)
                .is_none()
        );
        assert!(card_from_value(&json!({"title": "no id"}), 1).is_none());
    }

    #[test]
    fn long_descriptions_are_cut_on_a_character_boundary() {
        let (text, cut) = truncate_characters(&"é".repeat(10), 4);
        assert_eq!((text.as_str(), cut), ("éééé…", true));
        assert_eq!(truncate_characters("short", 10), ("short".to_string(), false));
    }

    #[test]
    fn refusals_are_read_in_the_situation_they_happened() {
        let bearer = UpstreamCredential::Bearer("token".into());
        let basic = UpstreamCredential::Basic { uid: "alice".into(), password: "secret".into() };
        let unauthorised =
            answer(401, json!({"status": 401, "message": "Current user is not logged in"}));
        assert!(
            failure(&unauthorised, &bearer, Situation::ListBoards)
                .message
                .contains("app-password mode")
        );
        assert!(
            failure(&unauthorised, &basic, Situation::ListBoards).message.contains("app password")
        );
        let forbidden = answer(403, json!({"status": 403, "message": "Permission denied"}));
        let read = failure(&forbidden, &bearer, Situation::ReadBoard { board_id: 9 });
        assert_eq!(read.kind, FailureKind::NotFound);
        assert!(read.message.contains("deck_cards"));
        let write = failure(&forbidden, &bearer, Situation::CreateCard { board_title: "Apollo" });
        assert_eq!(write.kind, FailureKind::RefusedByNextcloud);
        assert!(write.message.contains("edit rights"));
        let archived = answer(
            500,
            json!({"status": 500, "message": "Operation not allowed. This card is archived."}),
        );
        assert_eq!(failure(&archived, &bearer, Situation::MoveCard).kind, FailureKind::Conflict);
        let broken =
            answer(500, json!({"status": 500, "message": "SQLSTATE[HY000] at db.internal"}));
        let unreachable = failure(&broken, &bearer, Situation::MoveCard);
        assert_eq!(unreachable.kind, FailureKind::NextcloudUnreachable);
        assert!(!unreachable.message.contains("db.internal"), "Deck's words never reach the model");
    }

    #[test]
    fn an_object_keyed_by_order_is_read_as_a_list() {
        let cards = list(json!({"1": {"id": 4}, "0": {"id": 5}}));
        assert_eq!(cards.len(), 2);
        assert_eq!(list(json!("nonsense")).len(), 0);
    }
}
