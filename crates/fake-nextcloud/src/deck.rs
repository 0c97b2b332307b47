//! Deck's REST API at `/index.php/apps/deck/api/v1.0/` and the OCS variant.
//!
//! This module holds Deck's state (boards, stacks, cards, labels) and renders
//! it the way Deck's entities serialise; [`api`] holds the routes. Access is
//! Deck's: the owner has every permission, users in the fixture's
//! `shared_with` may read and edit (not manage or share), users in
//! `shared_read_only` may only read, everyone else gets 403 "Permission
//! denied"; an id that does not exist is 404 (real Deck answers 403 there
//! too, so as not to leak which ids exist). Changes bump
//! `lastModified` and the ETag of the entity and of its parents, as Deck's
//! `ChangeHelper` does, so an ETag tells a client whether to sync again.
//!
//! Deleting is soft, as in Deck: the entity keeps its id and gets a
//! `deletedAt`, and disappears from listings.

mod api;

pub use api::routes;

use crate::fixture::Fixture;
use crate::world::User;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

pub type BoardId = u64;
pub type StackId = u64;
pub type CardId = u64;
pub type LabelId = u64;

/// Deck's title limits (`BadRequestException` past them).
pub const BOARD_TITLE_LENGTH_MAX: usize = 100;
pub const STACK_TITLE_LENGTH_MAX: usize = 100;
pub const CARD_TITLE_LENGTH_MAX: usize = 255;
/// A fake's worth of data: more boards, stacks, cards or labels than this is
/// a runaway test.
pub const ENTITY_COUNT_MAX: usize = 100_000;

/// The labels Deck gives every new board.
pub const DEFAULT_LABELS: &[(&str, &str)] = &[
    ("Finished", "31CC7C"),
    ("To review", "317CCC"),
    ("Action needed", "FF7A66"),
    ("Later", "F1DB50"),
];

#[derive(Debug, Clone)]
pub struct Board {
    pub id: BoardId,
    pub title: String,
    pub owner: String,
    pub color: String,
    pub archived: bool,
    /// uids with read + edit.
    pub shared_with: Vec<String>,
    /// uids with read only (an ACL entry without permissionEdit).
    pub shared_read_only: Vec<String>,
    pub last_modified: i64,
    pub deleted_at: i64,
    revision: u64,
}

#[derive(Debug, Clone)]
pub struct Stack {
    pub id: StackId,
    pub board_id: BoardId,
    pub title: String,
    pub order: i64,
    pub last_modified: i64,
    pub deleted_at: i64,
    revision: u64,
}

#[derive(Debug, Clone)]
pub struct Card {
    pub id: CardId,
    pub stack_id: StackId,
    pub title: String,
    pub description: String,
    pub card_type: String,
    pub order: i64,
    pub duedate: Option<i64>,
    pub done: Option<i64>,
    pub owner: String,
    pub archived: bool,
    pub labels: Vec<LabelId>,
    /// (assignment id, uid)
    pub assigned: Vec<(u64, String)>,
    pub created_at: i64,
    pub last_modified: i64,
    pub last_editor: Option<String>,
    pub deleted_at: i64,
    revision: u64,
}

#[derive(Debug, Clone)]
pub struct Label {
    pub id: LabelId,
    pub board_id: BoardId,
    pub title: String,
    pub color: String,
    pub last_modified: i64,
}

/// Which of a stack's cards its JSON carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardsShown {
    /// As a create or update answers: no `cards` key.
    None,
    /// As `GET .../stacks` answers: the cards that are not archived.
    Active,
    /// As `GET .../stacks/archived` answers: only the archived cards.
    Archived,
}

/// What a user may do on a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permissions {
    pub read: bool,
    pub edit: bool,
    pub manage: bool,
    pub share: bool,
}

impl Permissions {
    pub const NONE: Permissions =
        Permissions { read: false, edit: false, manage: false, share: false };

    pub fn to_json(self) -> Value {
        json!({
            "PERMISSION_READ": self.read,
            "PERMISSION_EDIT": self.edit,
            "PERMISSION_MANAGE": self.manage,
            "PERMISSION_SHARE": self.share,
        })
    }
}

/// The permission an operation needs, e.g. `|permissions| permissions.edit`.
pub type Wanted = fn(Permissions) -> bool;

/// What the API names by id in a path: a board, or a stack, card or label
/// on one. Each is found live (not deleted) first, then the caller's
/// permission is checked on the board it is on, through every parent in
/// between, so a card of a deleted stack is "Stack not found".
pub trait Item: Sized {
    /// The path parameter that names it, e.g. "card".
    const PATH_NAME: &'static str;
    /// What a missing or deleted one answers (404).
    const MISSING: &'static str;
    fn id(&self) -> u64;
    /// The one with this id, unless it does not exist or is deleted.
    fn live(deck: &Deck, id: u64) -> Option<&Self>;
    /// Whether `uid` may do what `wanted` says, decided by its parent.
    fn permit(&self, deck: &Deck, uid: &str, wanted: Wanted) -> Result<(), DeckError>;
}

impl Item for Board {
    const PATH_NAME: &'static str = "board";
    const MISSING: &'static str = "Board not found";
    fn id(&self) -> u64 {
        self.id
    }
    fn live(deck: &Deck, id: u64) -> Option<&Self> {
        deck.boards.get(&id).filter(|board| board.deleted_at == 0)
    }
    fn permit(&self, deck: &Deck, uid: &str, wanted: Wanted) -> Result<(), DeckError> {
        if wanted(deck.permissions(self, uid)) { Ok(()) } else { Err(DeckError::Forbidden) }
    }
}

impl Item for Stack {
    const PATH_NAME: &'static str = "stack";
    const MISSING: &'static str = "Stack not found";
    fn id(&self) -> u64 {
        self.id
    }
    fn live(deck: &Deck, id: u64) -> Option<&Self> {
        deck.stacks.get(&id).filter(|stack| stack.deleted_at == 0)
    }
    fn permit(&self, deck: &Deck, uid: &str, wanted: Wanted) -> Result<(), DeckError> {
        deck.item_for::<Board>(self.board_id, uid, wanted).map(drop)
    }
}

impl Item for Card {
    const PATH_NAME: &'static str = "card";
    const MISSING: &'static str = "Card not found";
    fn id(&self) -> u64 {
        self.id
    }
    fn live(deck: &Deck, id: u64) -> Option<&Self> {
        deck.cards.get(&id).filter(|card| card.deleted_at == 0)
    }
    fn permit(&self, deck: &Deck, uid: &str, wanted: Wanted) -> Result<(), DeckError> {
        deck.item_for::<Stack>(self.stack_id, uid, wanted).map(drop)
    }
}

/// Labels are deleted for good, not softly: every stored one is live.
impl Item for Label {
    const PATH_NAME: &'static str = "label";
    const MISSING: &'static str = "Label not found";
    fn id(&self) -> u64 {
        self.id
    }
    fn live(deck: &Deck, id: u64) -> Option<&Self> {
        deck.labels.get(&id)
    }
    fn permit(&self, deck: &Deck, uid: &str, wanted: Wanted) -> Result<(), DeckError> {
        deck.item_for::<Board>(self.board_id, uid, wanted).map(drop)
    }
}

/// Why a Deck operation was refused; the API turns it into Deck's
/// `{"status":…,"message":…}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeckError {
    #[error("{0}")]
    BadRequest(String),
    #[error("Permission denied")]
    Forbidden,
    #[error("{0}")]
    NotFound(&'static str),
    /// Deck's `StatusException`, which its middleware answers with 500.
    #[error("{0}")]
    Status(&'static str),
}

impl DeckError {
    pub fn status(&self) -> u16 {
        match self {
            DeckError::BadRequest(_) => 400,
            DeckError::Forbidden => 403,
            DeckError::NotFound(_) => 404,
            DeckError::Status(_) => 500,
        }
    }
}

#[derive(Debug, Default)]
pub struct Deck {
    pub boards: BTreeMap<BoardId, Board>,
    pub stacks: BTreeMap<StackId, Stack>,
    pub cards: BTreeMap<CardId, Card>,
    pub labels: BTreeMap<LabelId, Label>,
    next_id: u64,
    revision_counter: u64,
}

impl Deck {
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> Deck {
        let mut deck = Deck { next_id: 1, ..Deck::default() };
        for board_fixture in &fixture.deck_boards {
            if !users.contains_key(&board_fixture.owner) {
                problems.push(format!(
                    "Deck board {:?} names unknown owner {:?}",
                    board_fixture.title, board_fixture.owner
                ));
                continue;
            }
            for uid in board_fixture.shared_with.iter().chain(&board_fixture.shared_read_only) {
                if !users.contains_key(uid) {
                    problems.push(format!(
                        "Deck board {:?} is shared with unknown user {uid:?}",
                        board_fixture.title
                    ));
                }
            }
            let board_id = deck.insert_board(
                &board_fixture.owner,
                &board_fixture.title,
                board_fixture.color.as_deref().unwrap_or("0082c9"),
                now,
            );
            let known = |uids: &[String]| -> Vec<String> {
                uids.iter().filter(|uid| users.contains_key(*uid)).cloned().collect()
            };
            let board = deck.boards.get_mut(&board_id).expect("inserted");
            board.shared_with = known(&board_fixture.shared_with);
            board.shared_read_only = known(&board_fixture.shared_read_only);
            let mut label_ids = BTreeMap::new();
            for label in &board_fixture.labels {
                let id = deck.insert_label(
                    board_id,
                    &label.title,
                    label.color.as_deref().unwrap_or("31CC7C"),
                    now,
                );
                label_ids.insert(label.title.clone(), id);
            }
            for (stack_order, stack_fixture) in board_fixture.stacks.iter().enumerate() {
                let stack_id =
                    deck.insert_stack(board_id, &stack_fixture.title, stack_order as i64, now);
                for (card_order, card_fixture) in stack_fixture.cards.iter().enumerate() {
                    let duedate = match &card_fixture.duedate {
                        None => None,
                        Some(text) => match crate::clock::parse_rfc3339(text) {
                            Some(time) => Some(time),
                            None => {
                                problems.push(format!(
                                    "Deck card {:?}: duedate {text:?} is not RFC 3339",
                                    card_fixture.title
                                ));
                                None
                            }
                        },
                    };
                    let card_id = deck.insert_card(
                        stack_id,
                        &card_fixture.title,
                        "plain",
                        card_order as i64,
                        card_fixture.description.as_deref().unwrap_or(""),
                        duedate,
                        &board_fixture.owner,
                        now,
                    );
                    for label in &card_fixture.labels {
                        match label_ids.get(label) {
                            Some(label_id) => deck.cards.get_mut(&card_id).expect("inserted").labels.push(*label_id),
                            None => problems.push(format!(
                                "Deck card {:?} names label {label:?}, which its board does not define",
                                card_fixture.title
                            )),
                        }
                    }
                    for uid in &card_fixture.assigned {
                        let has_access = uid == &board_fixture.owner
                            || board_fixture.shared_with.contains(uid)
                            || board_fixture.shared_read_only.contains(uid);
                        if !users.contains_key(uid) || !has_access {
                            problems.push(format!(
                                "Deck card {:?} is assigned to {uid:?}, who cannot see its board",
                                card_fixture.title
                            ));
                            continue;
                        }
                        let assignment_id = deck.next_id();
                        deck.cards
                            .get_mut(&card_id)
                            .expect("inserted")
                            .assigned
                            .push((assignment_id, uid.clone()));
                    }
                }
            }
        }
        deck
    }

    fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        assert!(
            self.boards.len() + self.stacks.len() + self.cards.len() + self.labels.len()
                < ENTITY_COUNT_MAX,
            "more than {ENTITY_COUNT_MAX} Deck entities: a runaway test"
        );
        id
    }

    fn next_revision(&mut self) -> u64 {
        self.revision_counter += 1;
        self.revision_counter
    }

    pub fn insert_board(&mut self, owner: &str, title: &str, color: &str, now: i64) -> BoardId {
        let id = self.next_id();
        let revision = self.next_revision();
        self.boards.insert(
            id,
            Board {
                id,
                title: title.to_string(),
                owner: owner.to_string(),
                color: color.to_string(),
                archived: false,
                shared_with: Vec::new(),
                shared_read_only: Vec::new(),
                last_modified: now,
                deleted_at: 0,
                revision,
            },
        );
        id
    }

    pub fn insert_label(
        &mut self,
        board_id: BoardId,
        title: &str,
        color: &str,
        now: i64,
    ) -> LabelId {
        let id = self.next_id();
        self.labels.insert(
            id,
            Label {
                id,
                board_id,
                title: title.to_string(),
                color: color.to_string(),
                last_modified: now,
            },
        );
        id
    }

    pub fn insert_stack(
        &mut self,
        board_id: BoardId,
        title: &str,
        order: i64,
        now: i64,
    ) -> StackId {
        let id = self.next_id();
        let revision = self.next_revision();
        self.stacks.insert(
            id,
            Stack {
                id,
                board_id,
                title: title.to_string(),
                order,
                last_modified: now,
                deleted_at: 0,
                revision,
            },
        );
        id
    }

    #[allow(clippy::too_many_arguments)]
    pub fn insert_card(
        &mut self,
        stack_id: StackId,
        title: &str,
        card_type: &str,
        order: i64,
        description: &str,
        duedate: Option<i64>,
        owner: &str,
        now: i64,
    ) -> CardId {
        let id = self.next_id();
        let revision = self.next_revision();
        self.cards.insert(
            id,
            Card {
                id,
                stack_id,
                title: title.to_string(),
                description: description.to_string(),
                card_type: card_type.to_string(),
                order,
                duedate,
                done: None,
                owner: owner.to_string(),
                archived: false,
                labels: Vec::new(),
                assigned: Vec::new(),
                created_at: now,
                last_modified: now,
                last_editor: None,
                deleted_at: 0,
                revision,
            },
        );
        id
    }

    /// What `uid` may do on a board.
    pub fn permissions(&self, board: &Board, uid: &str) -> Permissions {
        if board.owner == uid {
            Permissions { read: true, edit: true, manage: true, share: true }
        } else if board.shared_with.iter().any(|shared| shared == uid) {
            Permissions { read: true, edit: true, manage: false, share: false }
        } else if board.shared_read_only.iter().any(|shared| shared == uid) {
            Permissions { read: true, edit: false, manage: false, share: false }
        } else {
            Permissions::NONE
        }
    }

    /// The live [`Item`] with this id, checked for existence and then, on
    /// the board it is on, for `wanted` permission.
    pub fn item_for<T: Item>(&self, id: u64, uid: &str, wanted: Wanted) -> Result<&T, DeckError> {
        let item = T::live(self, id).ok_or(DeckError::NotFound(T::MISSING))?;
        item.permit(self, uid, wanted)?;
        Ok(item)
    }

    pub fn board_for(&self, id: BoardId, uid: &str, wanted: Wanted) -> Result<&Board, DeckError> {
        self.item_for(id, uid, wanted)
    }

    pub fn stack_for(&self, id: StackId, uid: &str, wanted: Wanted) -> Result<&Stack, DeckError> {
        self.item_for(id, uid, wanted)
    }

    /// Boards `uid` can read, not deleted, changed after `since`.
    pub fn boards_of(&self, uid: &str, since: i64) -> Vec<&Board> {
        self.boards
            .values()
            .filter(|board| {
                board.deleted_at == 0
                    && self.permissions(board, uid).read
                    && board.last_modified > since
            })
            .collect()
    }

    pub fn stacks_of(&self, board_id: BoardId) -> Vec<&Stack> {
        let mut stacks: Vec<&Stack> = self
            .stacks
            .values()
            .filter(|stack| stack.board_id == board_id && stack.deleted_at == 0)
            .collect();
        stacks.sort_by_key(|stack| (stack.order, stack.id));
        stacks
    }

    /// A stack's cards, archived ones included.
    pub fn cards_of(&self, stack_id: StackId) -> Vec<&Card> {
        let mut cards: Vec<&Card> = self
            .cards
            .values()
            .filter(|card| card.stack_id == stack_id && card.deleted_at == 0)
            .collect();
        cards.sort_by_key(|card| (card.order, card.id));
        cards
    }

    /// Records a change to a board (its title, colour, labels, sharing).
    pub fn touch_board(&mut self, board_id: BoardId, now: i64) {
        let revision = self.next_revision();
        if let Some(board) = self.boards.get_mut(&board_id) {
            board.last_modified = now;
            board.revision = revision;
        }
    }

    /// Records a change to a stack and its board.
    pub fn touch_stack(&mut self, stack_id: StackId, now: i64) {
        let revision = self.next_revision();
        let Some(stack) = self.stacks.get_mut(&stack_id) else {
            return;
        };
        stack.last_modified = now;
        stack.revision = revision;
        let board_id = stack.board_id;
        self.touch_board(board_id, now);
    }

    /// Records a change to a card, its stack and its board.
    pub fn touch_card(&mut self, card_id: CardId, uid: &str, now: i64) {
        let revision = self.next_revision();
        let Some(card) = self.cards.get_mut(&card_id) else {
            return;
        };
        card.last_modified = now;
        card.last_editor = Some(uid.to_string());
        card.revision = revision;
        let stack_id = card.stack_id;
        self.touch_stack(stack_id, now);
    }

    // ---- JSON, as Deck's entities serialise -----------------------------

    pub fn board_json(
        &self,
        board: &Board,
        uid: &str,
        users: &BTreeMap<String, User>,
        details: bool,
    ) -> Value {
        let (labels, acl, board_users) = if details {
            let labels: Vec<Value> = self
                .labels
                .values()
                .filter(|label| label.board_id == board.id)
                .map(|label| label_json(label, true))
                .collect();
            let acl: Vec<Value> = board
                .shared_with
                .iter()
                .map(|shared| (shared, true))
                .chain(board.shared_read_only.iter().map(|shared| (shared, false)))
                .enumerate()
                .map(|(index, (shared, edit))| {
                    json!({
                        "participant": user_json(shared, users),
                        "type": 0,
                        "boardId": board.id,
                        "permissionEdit": edit,
                        "permissionShare": false,
                        "permissionManage": false,
                        "owner": false,
                        "id": board.id * 1000 + index as u64 + 1,
                    })
                })
                .collect();
            let mut board_users = vec![user_json(&board.owner, users)];
            board_users.extend(
                board
                    .shared_with
                    .iter()
                    .chain(&board.shared_read_only)
                    .map(|shared| user_json(shared, users)),
            );
            (labels, acl, board_users)
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        json!({
            "title": board.title,
            "owner": user_json(&board.owner, users),
            "color": board.color,
            "archived": board.archived,
            "labels": labels,
            "acl": acl,
            "permissions": self.permissions(board, uid).to_json(),
            "users": board_users,
            "shared": if board.owner == uid { 0 } else { 1 },
            "stacks": [],
            "activeSessions": [],
            "deletedAt": board.deleted_at,
            "lastModified": board.last_modified,
            "settings": { "notify-due": "off", "calendar": true },
            "id": board.id,
            "ETag": etag("board", board.id, board.revision),
        })
    }

    pub fn stack_json(
        &self,
        stack: &Stack,
        users: &BTreeMap<String, User>,
        cards: CardsShown,
        now: i64,
    ) -> Value {
        let mut value = json!({
            "title": stack.title,
            "boardId": stack.board_id,
            "deletedAt": stack.deleted_at,
            "lastModified": stack.last_modified,
            "order": stack.order,
            "id": stack.id,
            "ETag": etag("stack", stack.id, stack.revision),
        });
        let archived = match cards {
            CardsShown::None => return value,
            CardsShown::Active => false,
            CardsShown::Archived => true,
        };
        // Deck lists active and archived cards separately (CardMapper's
        // findAll and findAllArchived).
        let cards: Vec<Value> = self
            .cards_of(stack.id)
            .into_iter()
            .filter(|card| card.archived == archived)
            .map(|card| self.card_json(card, users, true, now))
            .collect();
        value["cards"] = Value::Array(cards);
        value
    }

    /// `enriched` = as GET answers (owner, labels and assignees resolved);
    /// otherwise as a create or update answers (owner a plain uid).
    pub fn card_json(
        &self,
        card: &Card,
        users: &BTreeMap<String, User>,
        enriched: bool,
        now: i64,
    ) -> Value {
        let board_id = self.stacks.get(&card.stack_id).map(|stack| stack.board_id).unwrap_or(0);
        let labels: Vec<Value> = card
            .labels
            .iter()
            .filter_map(|id| self.labels.get(id))
            .map(|label| {
                let mut value = label_json(label, false);
                value["cardId"] = json!(card.id);
                value
            })
            .collect();
        let assigned: Vec<Value> = card
            .assigned
            .iter()
            .map(|(id, uid)| json!({ "id": id, "participant": user_json(uid, users), "cardId": card.id, "type": 0 }))
            .collect();
        let overdue = match card.duedate {
            Some(due) if card.done.is_none() => {
                if due < now {
                    3
                } else if due - now < 24 * 3600 {
                    2
                } else if due - now < 48 * 3600 {
                    1
                } else {
                    0
                }
            }
            _ => 0,
        };
        json!({
            "title": card.title,
            "description": card.description,
            "descriptionPrev": null,
            "stackId": card.stack_id,
            "type": card.card_type,
            "lastModified": card.last_modified,
            "lastEditor": card.last_editor,
            "createdAt": card.created_at,
            "labels": if enriched || !labels.is_empty() { Value::Array(labels) } else { Value::Null },
            "assignedUsers": if enriched || !assigned.is_empty() { Value::Array(assigned) } else { Value::Null },
            "attachments": null,
            "attachmentCount": if enriched { json!(0) } else { Value::Null },
            "owner": if enriched { user_json(&card.owner, users) } else { json!(card.owner) },
            "order": card.order,
            "archived": card.archived,
            "done": card.done.map(atom),
            "duedate": card.duedate.map(atom),
            "notified": false,
            "deletedAt": card.deleted_at,
            "commentsUnread": 0,
            "commentsCount": 0,
            "id": card.id,
            "ETag": etag("card", card.id, card.revision),
            "overdue": overdue,
            "boardId": board_id,
        })
    }
}

/// Deck's user object.
pub fn user_json(uid: &str, users: &BTreeMap<String, User>) -> Value {
    let display_name =
        users.get(uid).map(|user| user.display_name.clone()).unwrap_or(uid.to_string());
    json!({ "primaryKey": uid, "uid": uid, "displayname": display_name, "type": 0 })
}

/// A label; on a board listing `boardId` is a string, as Deck's docs show.
pub fn label_json(label: &Label, board_id_as_string: bool) -> Value {
    json!({
        "title": label.title,
        "color": label.color,
        "boardId": if board_id_as_string { json!(label.board_id.to_string()) } else { json!(label.board_id) },
        "cardId": null,
        "lastModified": label.last_modified,
        "id": label.id,
        "ETag": etag("label", label.id, label.last_modified as u64),
    })
}

/// `DateTime::ATOM` in UTC: `2019-12-24T19:29:30+00:00`.
pub fn atom(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%S+00:00")
        .to_string()
}

/// Parses the ISO 8601 dates Deck accepts (`2019-12-24T19:29:30+00:00`,
/// `...Z`, or a naive date-time taken as UTC).
pub fn parse_date(text: &str) -> Option<i64> {
    if let Some(time) = crate::clock::parse_rfc3339(text) {
        return Some(time);
    }
    for format in ["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S%.f%z"] {
        if let Ok(time) = chrono::DateTime::parse_from_str(text, format) {
            return Some(time.timestamp());
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"] {
        if let Ok(time) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Some(time.and_utc().timestamp());
        }
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc().timestamp())
}

/// An md5-length hex ETag that changes with every revision.
fn etag(kind: &str, id: u64, revision: u64) -> String {
    let digest = Sha256::digest(format!("{kind}:{id}:{revision}").as_bytes());
    digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = r#"
[[users]]
uid = "alice"
password = "a"
[[users]]
uid = "bob"
password = "b"
[[users]]
uid = "carol"
password = "c"

[[deck_boards]]
owner = "alice"
title = "Apollo"
shared_with = ["bob"]
[[deck_boards.labels]]
title = "Budget"
[[deck_boards.stacks]]
title = "To do"
[[deck_boards.stacks.cards]]
title = "Budget"
duedate = "2026-03-27T17:00:00Z"
labels = ["Budget"]
assigned = ["bob"]
"#;

    fn deck() -> (Deck, BTreeMap<String, User>) {
        let fixture = Fixture::parse(FIXTURE).unwrap();
        let world = crate::World::from_fixture(&fixture, 1_000).unwrap();
        let deck = Deck::from_fixture(&fixture, &world.users, 1_000, &mut Vec::new());
        (deck, world.users)
    }

    #[test]
    fn owner_and_shared_users_see_the_board_others_are_forbidden() {
        let (deck, _) = deck();
        let board_id = *deck.boards.keys().next().unwrap();
        assert!(deck.board_for(board_id, "alice", |p| p.manage).is_ok());
        assert!(deck.board_for(board_id, "bob", |p| p.edit).is_ok());
        assert_eq!(
            deck.board_for(board_id, "bob", |p| p.manage).unwrap_err(),
            DeckError::Forbidden
        );
        assert_eq!(
            deck.board_for(board_id, "carol", |p| p.read).unwrap_err(),
            DeckError::Forbidden
        );
        assert_eq!(deck.board_for(9999, "alice", |p| p.read).unwrap_err().status(), 404);
        assert_eq!(deck.boards_of("carol", 0).len(), 0);
        assert_eq!(deck.boards_of("bob", 0).len(), 1);
        assert_eq!(deck.boards_of("bob", 1_000).len(), 0, "If-Modified-Since filters");
    }

    #[test]
    fn a_read_only_share_reads_but_does_not_edit() {
        let fixture = Fixture::parse(&FIXTURE.replace(
            "shared_with = [\"bob\"]",
            "shared_with = [\"bob\"]\nshared_read_only = [\"carol\"]",
        ))
        .unwrap();
        let world = crate::World::from_fixture(&fixture, 1_000).unwrap();
        let board = world.deck.boards.values().next().unwrap();
        assert!(world.deck.board_for(board.id, "carol", |p| p.read).is_ok());
        assert_eq!(
            world.deck.board_for(board.id, "carol", |p| p.edit).unwrap_err(),
            DeckError::Forbidden
        );
        let json = world.deck.board_json(board, "carol", &world.users, true);
        assert_eq!(json["permissions"]["PERMISSION_EDIT"], false);
        assert_eq!(json["acl"][1]["permissionEdit"], false);
    }

    #[test]
    fn fixture_cards_carry_labels_assignees_and_atom_due_dates() {
        let (deck, users) = deck();
        let card = deck.cards.values().next().unwrap();
        let json = deck.card_json(card, &users, true, 0);
        assert_eq!(json["duedate"], "2026-03-27T17:00:00+00:00");
        assert_eq!(json["labels"][0]["title"], "Budget");
        assert_eq!(json["assignedUsers"][0]["participant"]["uid"], "bob");
        assert_eq!(json["owner"]["uid"], "alice");
        assert_eq!(deck.card_json(card, &users, false, 0)["owner"], "alice");
    }

    #[test]
    fn a_card_change_changes_the_etags_of_its_parents() {
        let (mut deck, users) = deck();
        let card_id = *deck.cards.keys().next().unwrap();
        let board_id = *deck.boards.keys().next().unwrap();
        let board_before =
            deck.board_json(&deck.boards[&board_id], "alice", &users, false)["ETag"].clone();
        deck.touch_card(card_id, "alice", 1_000);
        let board_after =
            deck.board_json(&deck.boards[&board_id], "alice", &users, false)["ETag"].clone();
        assert_ne!(board_before, board_after);
    }

    #[test]
    fn fixture_problems_are_reported() {
        let fixture = Fixture::parse(
            &FIXTURE
                .replace("assigned = [\"bob\"]", "assigned = [\"carol\"]")
                .replace("labels = [\"Budget\"]", "labels = [\"Nope\"]"),
        )
        .unwrap();
        let problems = crate::World::from_fixture(&fixture, 0).unwrap_err();
        assert!(problems.iter().any(|problem| problem.contains("carol")), "{problems:?}");
        assert!(problems.iter().any(|problem| problem.contains("Nope")), "{problems:?}");
    }

    #[test]
    fn dates_parse_in_the_forms_deck_accepts() {
        assert_eq!(parse_date("2019-12-24T19:29:30+00:00"), Some(1_577_215_770));
        assert_eq!(parse_date("2019-12-24T19:29:30Z"), Some(1_577_215_770));
        assert_eq!(parse_date("2019-12-24 19:29:30"), Some(1_577_215_770));
        assert_eq!(parse_date("tomorrow"), None);
        assert_eq!(atom(1_577_215_770), "2019-12-24T19:29:30+00:00");
    }
}
