//! webhook_listeners: registrations, the event queue and delivery.
//!
//! A storage change becomes a [`crate::storage::FileEvent`]; after every
//! request the DAV layer hands it to [`Webhooks::enqueue_file_event`], which
//! builds Nextcloud's payload once per matching registration:
//!
//! ```json
//! {"event":{"class":"OCP\\Files\\Events\\Node\\NodeCreatedEvent",
//!           "node":{"id":123,"path":"/alice/files/Documents/a.md"}},
//!  "user":{"uid":"alice","displayName":"Alice Martin"},
//!  "time":1773400000}
//! ```
//!
//! A rename carries `"source"` and `"target"` instead of `"node"`
//! (`AbstractNodesEvent`). The payload never carries a token: the real one
//! fires from a background job where no session exists, which is exactly
//! why Tamebi's index only marks a row dirty on a webhook.
//!
//! Matching follows `WebhooksEventListener`: the event class, the
//! `userIdFilter` (empty = everybody) and the `eventFilter`, a MongoDB-style
//! query evaluated by [`filter_matches`] the way `PHPMongoQuery` does it
//! (dotted paths, equality, `/regex/flags` strings, `$and` `$or` `$nor`
//! `$not` `$in` `$nin` `$ne` `$exists` `$lt` `$lte` `$gt` `$gte` `$all`).
//!
//! Delivery is like `WebhookCall`: the registered method and URI, the
//! registered headers plus the auth headers (`authMethod: header`), and the
//! JSON body with no Content-Type of its own (Guzzle's `body` option sets
//! none). Unlike the real background job, which tries once, the fake retries
//! connection failures and 5xx answers a bounded number of times, so a
//! receiver that is still starting does not lose events in a test. Each
//! attempt's outcome is recorded for tests ([`DeliveryRecord`]).

use crate::fixture::Fixture;
use crate::storage::{FileEvent, FileEventKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};

mod filter;

pub use filter::filter_matches;

/// When queued events are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    Immediate,
    OnDemand,
}

/// The most calls waiting for delivery; past it the oldest are dropped (and
/// counted), as a full job queue would lose them.
pub const QUEUE_LENGTH_MAX: usize = 1000;
/// The most delivery records kept for tests.
pub const RECORDS_MAX: usize = 1000;
/// Tries per call, the first included.
pub const DELIVERY_ATTEMPTS_MAX: u32 = 3;
/// Wait before the second try; doubles for each further one.
pub const RETRY_BACKOFF_FIRST_MS: u64 = 100;
/// Calls delivered per pass of the delivery task before it looks again.
pub const DELIVERY_BATCH_MAX: usize = 100;

pub const NODE_CREATED: &str = "OCP\\Files\\Events\\Node\\NodeCreatedEvent";
pub const NODE_WRITTEN: &str = "OCP\\Files\\Events\\Node\\NodeWrittenEvent";
pub const NODE_DELETED: &str = "OCP\\Files\\Events\\Node\\NodeDeletedEvent";
pub const NODE_RENAMED: &str = "OCP\\Files\\Events\\Node\\NodeRenamedEvent";
pub const NODE_TOUCHED: &str = "OCP\\Files\\Events\\Node\\NodeTouchedEvent";
/// The trash bin's restore event (an `AbstractNodesEvent`, so webhook
/// compatible since Nextcloud 30): source is the trash path, target the
/// restored one.
pub const NODE_RESTORED: &str = "OCA\\Files_Trashbin\\Events\\NodeRestoredEvent";

/// Event classes Nextcloud 31 accepts as webhook-compatible
/// (`IWebhookCompatibleEvent`). Only the node events above ever fire here.
pub const WEBHOOK_COMPATIBLE_EVENTS: &[&str] = &[
    NODE_CREATED,
    NODE_WRITTEN,
    NODE_DELETED,
    NODE_RENAMED,
    NODE_TOUCHED,
    NODE_RESTORED,
    "OCP\\Files\\Events\\Node\\NodeCopiedEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeCreatedEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeWrittenEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeDeletedEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeRenamedEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeCopiedEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeReadEvent",
    "OCP\\Files\\Events\\Node\\BeforeNodeTouchedEvent",
    "OCP\\Calendar\\Events\\CalendarObjectCreatedEvent",
    "OCP\\Calendar\\Events\\CalendarObjectUpdatedEvent",
    "OCP\\Calendar\\Events\\CalendarObjectDeletedEvent",
    "OCP\\Calendar\\Events\\CalendarObjectMovedEvent",
    "OCP\\Calendar\\Events\\CalendarObjectMovedToTrashEvent",
    "OCP\\Calendar\\Events\\CalendarObjectRestoredEvent",
    "OCP\\SystemTag\\MapperEvent",
    "OCP\\SystemTag\\TagAssignedEvent",
    "OCP\\SystemTag\\TagUnassignedEvent",
    "OCP\\Share\\Events\\ShareCreatedEvent",
    "OCP\\Share\\Events\\ShareDeletedEvent",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    None,
    Header,
}

/// One registration, as `WebhookListener` stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub id: u64,
    /// Who registered it; `None` for fixture registrations.
    pub user_id: Option<String>,
    pub http_method: String,
    pub uri: String,
    pub event: String,
    pub event_filter: Map<String, Value>,
    /// Empty = every user's events.
    pub user_id_filter: String,
    pub headers: Option<BTreeMap<String, String>>,
    pub auth_method: AuthMethod,
    /// Extra headers for `authMethod: header`. Never shown back.
    pub auth_data: Option<BTreeMap<String, String>>,
}

impl Registration {
    /// `WebhookListener::jsonSerialize`, minus the (encrypted) auth data.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "appId": null,
            "userId": self.user_id,
            "httpMethod": self.http_method,
            "uri": self.uri,
            "event": self.event,
            // PHP encodes an empty array as [] and a filled one as an object.
            "eventFilter": if self.event_filter.is_empty() { json!([]) } else { Value::Object(self.event_filter.clone()) },
            "userIdFilter": self.user_id_filter,
            "headers": self.headers,
            "authMethod": self.auth_method,
            "authData": null,
        })
    }
}

/// What a caller asks to register; validated by [`Webhooks::register`].
#[derive(Debug, Clone, Default)]
pub struct RegistrationRequest {
    pub http_method: String,
    pub uri: String,
    pub event: String,
    pub event_filter: Option<Map<String, Value>>,
    pub user_id_filter: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub auth_method: Option<String>,
    pub auth_data: Option<BTreeMap<String, String>>,
}

/// Why a registration was refused (400 in OCS).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    #[error("{0} is not an event class compatible with webhooks")]
    NotWebhookCompatible(String),
    #[error("This auth method does not exist")]
    UnknownAuthMethod,
    #[error("Header auth method needs an associative array of headers as auth data")]
    HeaderAuthNeedsData,
    #[error("The URI must be an absolute http or https URL")]
    BadUri,
    #[error("The HTTP method {0:?} is not supported")]
    BadMethod(String),
    #[error("There is no webhook listener with this id")]
    NotFound,
}

/// One call waiting to be made.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    pub registration_id: u64,
    pub event: String,
    pub payload: Value,
}

/// What happened to one call; the admin endpoint lists these.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeliveryRecord {
    pub registration_id: u64,
    pub event: String,
    pub http_method: String,
    pub uri: String,
    pub payload: Value,
    pub attempts: u32,
    /// The receiver's last HTTP status, if it answered.
    pub status: Option<u16>,
    /// Why the last attempt failed, when it did.
    pub error: Option<String>,
    pub delivered: bool,
}

#[derive(Debug)]
pub struct Webhooks {
    pub delivery: Delivery,
    registrations: BTreeMap<u64, Registration>,
    next_id: u64,
    queue: VecDeque<PendingCall>,
    records: VecDeque<DeliveryRecord>,
    /// Calls lost because the queue was full.
    pub dropped_count: u64,
}

impl Webhooks {
    pub fn from_fixture(fixture: &Fixture, problems: &mut Vec<String>) -> Webhooks {
        let mut webhooks = Webhooks {
            delivery: fixture.webhooks.delivery,
            registrations: BTreeMap::new(),
            next_id: 1,
            queue: VecDeque::new(),
            records: VecDeque::new(),
            dropped_count: 0,
        };
        for registration in &fixture.webhooks.registrations {
            let auth_data = match (&registration.auth_header_name, &registration.auth_header_value)
            {
                (Some(name), Some(value)) => Some(BTreeMap::from([(name.clone(), value.clone())])),
                (None, None) => None,
                _ => {
                    problems.push(format!(
                        "webhook for {:?} needs both auth_header_name and auth_header_value, or neither",
                        registration.event
                    ));
                    continue;
                }
            };
            let request = RegistrationRequest {
                http_method: registration.http_method.clone(),
                uri: registration.uri.clone(),
                event: registration.event.clone(),
                auth_method: Some(if auth_data.is_some() { "header" } else { "none" }.to_string()),
                auth_data,
                ..RegistrationRequest::default()
            };
            if let Err(error) = webhooks.register(None, request) {
                problems.push(format!("webhook for {:?}: {error}", registration.event));
            }
        }
        webhooks
    }

    pub fn registrations(&self) -> impl Iterator<Item = &Registration> {
        self.registrations.values()
    }

    pub fn registration(&self, id: u64) -> Option<&Registration> {
        self.registrations.get(&id)
    }

    /// `WebhookListenerMapper::addWebhookListener`.
    pub fn register(
        &mut self,
        user_id: Option<&str>,
        request: RegistrationRequest,
    ) -> Result<&Registration, RegistrationError> {
        let registration = self.validate(self.next_id, user_id, request)?;
        self.next_id += 1;
        let id = registration.id;
        self.registrations.insert(id, registration);
        Ok(&self.registrations[&id])
    }

    /// `WebhookListenerMapper::updateWebhookListener`.
    pub fn update(
        &mut self,
        id: u64,
        user_id: Option<&str>,
        request: RegistrationRequest,
    ) -> Result<&Registration, RegistrationError> {
        if !self.registrations.contains_key(&id) {
            return Err(RegistrationError::NotFound);
        }
        let registration = self.validate(id, user_id, request)?;
        self.registrations.insert(id, registration);
        Ok(&self.registrations[&id])
    }

    /// Returns whether something was deleted. Calls already queued for it
    /// are dropped, as the real job finds no listener any more.
    pub fn unregister(&mut self, id: u64) -> bool {
        let removed = self.registrations.remove(&id).is_some();
        self.queue.retain(|call| call.registration_id != id);
        removed
    }

    fn validate(
        &self,
        id: u64,
        user_id: Option<&str>,
        request: RegistrationRequest,
    ) -> Result<Registration, RegistrationError> {
        // "Remove any superfluous antislash", as the mapper does.
        let event = request.event.trim_start_matches('\\').to_string();
        if !WEBHOOK_COMPATIBLE_EVENTS.contains(&event.as_str()) {
            return Err(RegistrationError::NotWebhookCompatible(event));
        }
        let auth_method = match request.auth_method.as_deref().unwrap_or("none") {
            "none" => AuthMethod::None,
            "header" => AuthMethod::Header,
            _ => return Err(RegistrationError::UnknownAuthMethod),
        };
        if auth_method == AuthMethod::Header && request.auth_data.is_none() {
            return Err(RegistrationError::HeaderAuthNeedsData);
        }
        let http_method = request.http_method.to_ascii_uppercase();
        if !matches!(http_method.as_str(), "GET" | "POST" | "PUT" | "PATCH" | "DELETE") {
            return Err(RegistrationError::BadMethod(request.http_method));
        }
        let uri_ok =
            url::Url::parse(&request.uri).is_ok_and(|url| matches!(url.scheme(), "http" | "https"));
        if !uri_ok {
            return Err(RegistrationError::BadUri);
        }
        Ok(Registration {
            id,
            user_id: user_id.map(str::to_string),
            http_method,
            uri: request.uri,
            event,
            event_filter: request.event_filter.unwrap_or_default(),
            user_id_filter: request.user_id_filter.unwrap_or_default(),
            headers: request.headers,
            auth_method,
            auth_data: if auth_method == AuthMethod::Header { request.auth_data } else { None },
        })
    }

    /// Queues one call per registration that wants this event.
    pub fn enqueue_file_event(&mut self, event: &FileEvent, display_name: &str) {
        let (class, event_data) = match &event.kind {
            FileEventKind::Created => (NODE_CREATED, node_event(NODE_CREATED, event)),
            FileEventKind::Written => (NODE_WRITTEN, node_event(NODE_WRITTEN, event)),
            FileEventKind::Deleted => (NODE_DELETED, node_event(NODE_DELETED, event)),
            FileEventKind::Renamed { source_path } => {
                (NODE_RENAMED, nodes_event(NODE_RENAMED, source_path, event))
            }
            FileEventKind::Touched => (NODE_TOUCHED, node_event(NODE_TOUCHED, event)),
            FileEventKind::Restored { source_path } => {
                (NODE_RESTORED, nodes_event(NODE_RESTORED, source_path, event))
            }
        };
        let payload = json!({
            "event": event_data,
            "user": { "uid": event.uid, "displayName": display_name },
            "time": event.time,
        });
        let wanted: Vec<u64> = self
            .registrations
            .values()
            .filter(|registration| registration.event == class)
            .filter(|registration| {
                registration.user_id_filter.is_empty() || registration.user_id_filter == event.uid
            })
            .filter(|registration| match filter_matches(&registration.event_filter, &payload) {
                Ok(matched) => matched,
                Err(error) => {
                    tracing::warn!(registration = registration.id, %error, "webhook event filter failed");
                    false
                }
            })
            .map(|registration| registration.id)
            .collect();
        for registration_id in wanted {
            if self.queue.len() >= QUEUE_LENGTH_MAX {
                self.queue.pop_front();
                self.dropped_count += 1;
                tracing::warn!(
                    queue_length_max = QUEUE_LENGTH_MAX,
                    "webhook queue full; dropped the oldest call"
                );
            }
            self.queue.push_back(PendingCall {
                registration_id,
                event: class.to_string(),
                payload: payload.clone(),
            });
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn pending_count(&self) -> usize {
        self.queue.len()
    }

    /// Takes up to `count_max` queued calls with a snapshot of their
    /// registration, to deliver without holding the world's lock.
    pub fn take_pending(&mut self, count_max: usize) -> Vec<(PendingCall, Registration)> {
        let mut taken = Vec::new();
        while taken.len() < count_max {
            let Some(call) = self.queue.pop_front() else {
                break;
            };
            if let Some(registration) = self.registrations.get(&call.registration_id) {
                taken.push((call, registration.clone()));
            }
        }
        taken
    }

    pub fn record(&mut self, record: DeliveryRecord) {
        if self.records.len() >= RECORDS_MAX {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    pub fn records(&self) -> impl Iterator<Item = &DeliveryRecord> {
        self.records.iter()
    }
}

fn node_event(class: &str, event: &FileEvent) -> Value {
    json!({ "node": { "id": event.fileid, "path": event.path }, "class": class })
}

/// An `AbstractNodesEvent`: one node from `source_path` to the event's path.
fn nodes_event(class: &str, source_path: &str, event: &FileEvent) -> Value {
    json!({
        "source": { "id": event.fileid, "path": source_path },
        "target": { "id": event.fileid, "path": event.path },
        "class": class,
    })
}

/// Delivers one call, retrying as the module doc says.
pub async fn deliver(
    shared: &crate::Shared,
    call: PendingCall,
    registration: Registration,
) -> DeliveryRecord {
    let method = reqwest::Method::from_bytes(registration.http_method.as_bytes())
        .unwrap_or(reqwest::Method::POST);
    let body = serde_json::to_string(&call.payload).expect("payloads serialise");
    let mut record = DeliveryRecord {
        registration_id: registration.id,
        event: call.event.clone(),
        http_method: registration.http_method.clone(),
        uri: registration.uri.clone(),
        payload: call.payload.clone(),
        attempts: 0,
        status: None,
        error: None,
        delivered: false,
    };
    for attempt in 1..=DELIVERY_ATTEMPTS_MAX {
        record.attempts = attempt;
        let mut request = shared.http.request(method.clone(), &registration.uri).body(body.clone());
        let headers =
            registration.headers.iter().flatten().chain(registration.auth_data.iter().flatten());
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let retry = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                record.status = Some(status);
                record.delivered = response.status().is_success();
                record.error =
                    (!record.delivered).then(|| format!("the receiver answered {status}"));
                if !record.delivered {
                    tracing::warn!(uri = %registration.uri, status, attempt, "webhook returned unexpected status code");
                }
                response.status().is_server_error()
            }
            Err(error) => {
                record.status = None;
                record.error = Some(if error.is_timeout() {
                    "the receiver did not answer in time".to_string()
                } else {
                    "the receiver could not be reached".to_string()
                });
                tracing::warn!(uri = %registration.uri, %error, attempt, "webhook call failed");
                true
            }
        };
        if !retry || attempt == DELIVERY_ATTEMPTS_MAX {
            break;
        }
        let backoff_ms = RETRY_BACKOFF_FIRST_MS << (attempt - 1);
        tokio::time::sleep(std::time::Duration::from_millis(backoff_ms)).await;
    }
    record
}

/// Delivers everything queued now, in batches; returns what happened.
pub async fn deliver_pending(shared: &crate::Shared) -> Vec<DeliveryRecord> {
    let mut delivered = Vec::new();
    // Bounded: a batch is at most DELIVERY_BATCH_MAX calls and the queue at
    // most QUEUE_LENGTH_MAX, so this ends even if events keep arriving.
    for _ in 0..=(QUEUE_LENGTH_MAX / DELIVERY_BATCH_MAX) {
        let batch = shared.world().webhooks.take_pending(DELIVERY_BATCH_MAX);
        if batch.is_empty() {
            break;
        }
        for (call, registration) in batch {
            let record = deliver(shared, call, registration).await;
            shared.world().webhooks.record(record.clone());
            delivered.push(record);
        }
    }
    delivered
}

/// The background delivery task: with [`Delivery::Immediate`] it delivers
/// whenever `webhook_wakeup` is notified; with [`Delivery::OnDemand`] it
/// leaves the queue to `POST /__fake/webhooks/flush`. Runs until `stopped`.
pub async fn deliver_forever(
    shared: crate::AppState,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        if *stopped.borrow() {
            return;
        }
        let immediate = shared.world().webhooks.delivery == Delivery::Immediate;
        if immediate {
            deliver_pending(&shared).await;
        }
        tokio::select! {
            changed = stopped.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = shared.webhook_wakeup.notified() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> Value {
        json!({
            "event": {"class": NODE_CREATED, "node": {"id": 101, "path": "/alice/files/Documents/a.md"}},
            "user": {"uid": "alice", "displayName": "Alice"},
            "time": 1_700_000_000,
        })
    }

    fn check(filter: Value, expected: bool) {
        let Value::Object(filter) = filter else { panic!("filter must be an object") };
        assert_eq!(filter_matches(&filter, &payload()), Ok(expected), "{filter:?}");
    }

    #[test]
    fn filters_match_like_php_mongo_query() {
        check(json!({}), true);
        check(json!({"user.uid": "alice"}), true);
        check(json!({"user.uid": "bob"}), false);
        check(json!({"event.node.path": "/^\\/alice\\/files\\/Documents\\//"}), true);
        check(json!({"event.node.path": "/^\\/bob\\//"}), false);
        check(json!({"event.node.path": "/DOCUMENTS/i"}), true);
        check(json!({"event.node.id": 101}), true);
        check(json!({"event.node.id": "101"}), false);
        check(json!({"event.node.id": {"$gt": 100, "$lt": 200}}), true);
        check(json!({"user.uid": {"$in": ["bob", "alice"]}}), true);
        check(json!({"user.uid": {"$nin": ["bob", "alice"]}}), false);
        check(json!({"user.uid": {"$ne": "bob"}}), true);
        check(json!({"event.source": {"$exists": false}}), true);
        check(json!({"event.node": {"$exists": true}}), true);
        check(json!({"$or": [{"user.uid": "bob"}, {"user.uid": "alice"}]}), true);
        check(json!({"$nor": [{"user.uid": "bob"}, {"user.uid": "alice"}]}), false);
        check(json!({"$not": {"user.uid": "alice"}}), false);
        check(json!({"user.uid": {"$not": {"$in": ["alice"]}}}), false);
    }

    #[test]
    fn unknown_operators_are_errors_not_matches() {
        let Value::Object(filter) = json!({"user.uid": {"$regex": "a"}}) else { unreachable!() };
        assert!(filter_matches(&filter, &payload()).is_err());
    }

    #[test]
    fn a_filter_nested_too_deeply_is_an_error_on_both_paths() {
        // Nested `$not`s of whole queries, then of an element's operators.
        let nested = |levels: usize, inner: Value| {
            (0..levels).fold(inner, |inner, _| json!({ "$not": inner }))
        };
        let query = |filter: Value| {
            let Value::Object(filter) = filter else { panic!("filter must be an object") };
            filter_matches(&filter, &payload())
        };
        assert_eq!(query(nested(4, json!({"user.uid": "alice"}))), Ok(true));
        let deep = query(nested(40, json!({"user.uid": "alice"})));
        assert_eq!(deep, Err("the filter is nested too deeply".to_string()));
        let operators = json!({ "user.uid": nested(40, json!({"$in": ["alice"]})) });
        assert_eq!(query(operators), Err("the filter is nested too deeply".to_string()));
    }

    fn webhooks() -> Webhooks {
        Webhooks::from_fixture(&Fixture::default(), &mut Vec::new())
    }

    fn request(event: &str) -> RegistrationRequest {
        RegistrationRequest {
            http_method: "POST".into(),
            uri: "http://127.0.0.1:9/hook".into(),
            event: event.into(),
            ..RegistrationRequest::default()
        }
    }

    fn file_event(kind: FileEventKind, uid: &str) -> FileEvent {
        FileEvent {
            kind,
            fileid: 7,
            path: format!("/{uid}/files/a.md"),
            uid: uid.into(),
            time: 5,
            is_folder: false,
        }
    }

    #[test]
    fn registration_validates_like_the_mapper() {
        let mut webhooks = webhooks();
        assert_eq!(
            webhooks.register(None, request("OCP\\Foo")).unwrap_err(),
            RegistrationError::NotWebhookCompatible("OCP\\Foo".into())
        );
        let registered =
            webhooks.register(Some("admin"), request(&format!("\\{NODE_CREATED}"))).unwrap();
        assert_eq!(registered.event, NODE_CREATED);
        assert_eq!(registered.to_json()["eventFilter"], json!([]));
        let mut header = request(NODE_CREATED);
        header.auth_method = Some("header".into());
        assert_eq!(
            webhooks.register(None, header).unwrap_err(),
            RegistrationError::HeaderAuthNeedsData
        );
        let mut bad = request(NODE_CREATED);
        bad.auth_method = Some("basic".into());
        assert_eq!(webhooks.register(None, bad).unwrap_err(), RegistrationError::UnknownAuthMethod);
        let mut bad = request(NODE_CREATED);
        bad.uri = "file:///etc/passwd".into();
        assert_eq!(webhooks.register(None, bad).unwrap_err(), RegistrationError::BadUri);
    }

    #[test]
    fn events_queue_once_per_matching_registration() {
        let mut webhooks = webhooks();
        webhooks.register(None, request(NODE_CREATED)).unwrap();
        let mut only_bob = request(NODE_CREATED);
        only_bob.user_id_filter = Some("bob".into());
        webhooks.register(None, only_bob).unwrap();
        webhooks.register(None, request(NODE_RENAMED)).unwrap();
        webhooks.enqueue_file_event(&file_event(FileEventKind::Created, "alice"), "Alice");
        assert_eq!(webhooks.pending_count(), 1);
        webhooks.enqueue_file_event(
            &file_event(
                FileEventKind::Renamed { source_path: "/alice/files/b.md".into() },
                "alice",
            ),
            "Alice",
        );
        let taken = webhooks.take_pending(10);
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].0.payload["event"]["node"]["path"], "/alice/files/a.md");
        assert_eq!(taken[0].0.payload["user"]["displayName"], "Alice");
        assert_eq!(taken[1].0.payload["event"]["source"]["path"], "/alice/files/b.md");
        assert_eq!(taken[1].0.payload["event"]["target"]["path"], "/alice/files/a.md");
        assert!(taken[1].0.payload["event"].get("node").is_none());
        assert!(!webhooks.has_pending());
    }

    #[test]
    fn a_restore_is_a_nodes_event_from_the_trash_path() {
        let mut webhooks = webhooks();
        webhooks.register(None, request(NODE_RESTORED)).unwrap();
        webhooks.register(None, request(NODE_TOUCHED)).unwrap();
        let source_path = "/alice/files_trashbin/files/a.md.d5".to_string();
        webhooks.enqueue_file_event(
            &file_event(FileEventKind::Restored { source_path }, "alice"),
            "Alice",
        );
        webhooks.enqueue_file_event(&file_event(FileEventKind::Touched, "alice"), "Alice");
        let taken = webhooks.take_pending(10);
        assert_eq!(taken[0].0.payload["event"]["class"], NODE_RESTORED);
        assert_eq!(
            taken[0].0.payload["event"]["source"]["path"],
            "/alice/files_trashbin/files/a.md.d5"
        );
        assert_eq!(taken[0].0.payload["event"]["target"]["path"], "/alice/files/a.md");
        assert_eq!(taken[1].0.payload["event"]["node"]["path"], "/alice/files/a.md");
    }

    #[test]
    fn the_queue_is_bounded_and_counts_what_it_drops() {
        let mut webhooks = webhooks();
        webhooks.register(None, request(NODE_WRITTEN)).unwrap();
        for _ in 0..QUEUE_LENGTH_MAX + 5 {
            webhooks.enqueue_file_event(&file_event(FileEventKind::Written, "alice"), "Alice");
        }
        assert_eq!(webhooks.pending_count(), QUEUE_LENGTH_MAX);
        assert_eq!(webhooks.dropped_count, 5);
    }

    #[test]
    fn unregistering_drops_queued_calls() {
        let mut webhooks = webhooks();
        let id = webhooks.register(None, request(NODE_DELETED)).unwrap().id;
        webhooks.enqueue_file_event(&file_event(FileEventKind::Deleted, "alice"), "Alice");
        assert!(webhooks.unregister(id));
        assert!(!webhooks.unregister(id));
        assert!(!webhooks.has_pending());
    }
}
