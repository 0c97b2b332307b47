//! The admin endpoint only tests and scenarios use, under `/__fake/` on the
//! main listener (never the converter's). Every route requires the admin
//! token in [`TOKEN_HEADER`] (401 without it, 404 when the fake was started
//! with [`crate::Admin::Off`]): loopback is shared by every local account,
//! and these routes can point a user's chat, with their tokens, anywhere.
//!
//! | route | does |
//! |---|---|
//! | `GET /__fake/faults` | the current [`Faults`] as JSON |
//! | `PUT /__fake/faults` | replaces them (the whole object; omitted fields reset to their defaults) |
//! | `GET /__fake/clock` | `{"now": unix, "offset_seconds": n}` |
//! | `POST /__fake/clock/advance` | `{"seconds": n}` moves the clock (token expiry, mtimes, webhook times); answers like GET |
//! | `POST /__fake/webhooks/flush` | delivers every queued webhook call now, in either delivery mode; answers `{"delivered": [record…]}` |
//! | `GET /__fake/webhooks/deliveries` | `{"deliveries": [record…], "pending": n, "dropped": n}` |
//! | `POST /__fake/sessions/{uid}/end` | ends every browser session of a user ("the session is gone"); 404 for an unknown uid |
//! | `POST /__fake/server` | `{"overwritehost": "h:p" or null, "converter_secret": "s" or null}`; a field left out is left alone; answers the current values |
//! | `GET /__fake/app` | the Tamebi app's settings: `{"orchestrator_url", "shared_secret_set", "audiences", "renew_margin_s"}` (never the secret) |
//! | `POST /__fake/app` | `{"orchestrator_url": "http://…" or null, "shared_secret": "…" (≥ 32 bytes) or null}`; a field left out is left alone; answers like GET |
//! | `GET /__fake/oidc/authorize-requests` | `{"requests": [{"client_id", "cookie_names", "header_names"}…]}`: the latest 64 authorize requests, names only |
//! | `GET /__fake/state` | counts: users, groups, files, folders, shares, sessions, Deck boards/stacks/cards, webhook registrations/pending/deliveries, mail messages, mail previews, re-served pages, cached tokens |
//!
//! A record is [`crate::webhooks::DeliveryRecord`]: registration id, event
//! class, method, URI, payload, attempts, last status, error, delivered.

use crate::AppState;
use crate::faults::Faults;
use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

pub const PREFIX: &str = "/__fake/";
/// The header carrying the admin token.
pub const TOKEN_HEADER: &str = wire::headers::FAKE_ADMIN;

/// A fresh admin token.
pub fn random_token() -> String {
    http_serve::admin_token::random()
}

/// Lets a request through only with the admin token.
pub async fn require_token(
    State(shared): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let expected = shared.admin_token.as_deref();
    http_serve::admin_token::guard(expected, TOKEN_HEADER, request, next, refused).await
}

/// The 401 of a request without the admin token.
fn refused() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({
            "error": "admin_token_required",
            "message": format!("The fake's admin routes need the admin token in the {TOKEN_HEADER} header: the one FakeNextcloud::admin_token gives, or the file given to --admin-token-file."),
        })),
    )
        .into_response()
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/__fake/faults", get(get_faults).put(put_faults))
        .route("/__fake/clock", get(get_clock))
        .route("/__fake/clock/advance", post(advance_clock))
        .route("/__fake/webhooks/flush", post(flush_webhooks))
        .route("/__fake/webhooks/deliveries", get(deliveries))
        .route("/__fake/sessions/{uid}/end", post(end_sessions))
        .route("/__fake/server", post(set_server))
        .route("/__fake/app", get(get_app).post(set_app))
        .route("/__fake/oidc/authorize-requests", get(authorize_requests))
        .route("/__fake/state", get(state))
}

async fn get_faults(State(shared): State<AppState>) -> Response {
    Json(shared.world().faults.clone()).into_response()
}

async fn put_faults(State(shared): State<AppState>, Json(faults): Json<Faults>) -> Response {
    shared.world().faults = faults.clone();
    Json(faults).into_response()
}

fn clock_json(shared: &crate::Shared) -> Value {
    json!({ "now": shared.now(), "offset_seconds": shared.clock.offset_seconds() })
}

async fn get_clock(State(shared): State<AppState>) -> Response {
    Json(clock_json(&shared)).into_response()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Advance {
    seconds: i64,
}

/// Ten years: a larger jump is a mistake in the test, not a scenario.
const CLOCK_ADVANCE_SECONDS_MAX: i64 = 10 * 365 * 24 * 3600;

async fn advance_clock(State(shared): State<AppState>, Json(advance): Json<Advance>) -> Response {
    if advance.seconds.abs() > CLOCK_ADVANCE_SECONDS_MAX {
        return (StatusCode::BAD_REQUEST, "seconds is out of range\n").into_response();
    }
    shared.clock.advance(advance.seconds);
    Json(clock_json(&shared)).into_response()
}

async fn flush_webhooks(State(shared): State<AppState>) -> Response {
    let delivered = crate::webhooks::deliver_pending(&shared).await;
    Json(json!({ "delivered": delivered })).into_response()
}

async fn deliveries(State(shared): State<AppState>) -> Response {
    let world = shared.world();
    let records: Vec<_> = world.webhooks.records().cloned().collect();
    Json(json!({
        "deliveries": records,
        "pending": world.webhooks.pending_count(),
        "dropped": world.webhooks.dropped_count,
    }))
    .into_response()
}

async fn end_sessions(State(shared): State<AppState>, Path(uid): Path<String>) -> Response {
    let mut world = shared.world();
    if !world.users.contains_key(&uid) {
        return (StatusCode::NOT_FOUND, "No such user\n").into_response();
    }
    let ended = world.oidc.end_sessions_of(&uid);
    Json(json!({ "ended": ended })).into_response()
}

/// Applies a body of `{name: string or null}` settings in order with `set`,
/// which answers whether it knows the name; the first field that is not a
/// string or null, or that `set` does not know, ends it with the 400's text.
fn apply_settings(
    body: Value,
    mut set: impl FnMut(&str, Option<String>) -> bool,
) -> Result<(), String> {
    let Value::Object(fields) = body else {
        return Err("expected a JSON object\n".to_string());
    };
    for (name, value) in fields {
        let text = match value {
            Value::Null => None,
            Value::String(text) => Some(text),
            _ => return Err(format!("{name} must be a string or null\n")),
        };
        if !set(&name, text) {
            return Err(format!("unknown field {name}\n"));
        }
    }
    Ok(())
}

async fn set_server(State(shared): State<AppState>, Json(body): Json<Value>) -> Response {
    let mut world = shared.world();
    let applied = apply_settings(body, |name, text| {
        match name {
            "overwritehost" => {
                world.server.overwritehost = match text.as_deref() {
                    Some("self") => Some(shared.base_url.trim_start_matches("http://").to_string()),
                    _ => text,
                }
            }
            "converter_secret" => world.server.converter_secret = text,
            _ => return false,
        }
        true
    });
    if let Err(message) = applied {
        return (StatusCode::BAD_REQUEST, message).into_response();
    }
    Json(json!({
        "overwritehost": world.server.overwritehost,
        "converter_secret": world.server.converter_secret,
    }))
    .into_response()
}

fn app_json(settings: &crate::AppConfig) -> Value {
    json!({
        "orchestrator_url": settings.orchestrator_url,
        "shared_secret_set": settings.shared_secret.is_some(),
        "audiences": settings
            .audiences
            .iter()
            .map(|audience| json!({ "name": audience.name, "client_id": audience.client_id }))
            .collect::<Vec<_>>(),
        "renew_margin_s": settings.renew_margin_s,
    })
}

async fn get_app(State(shared): State<AppState>) -> Response {
    Json(app_json(&shared.world().app.settings)).into_response()
}

async fn set_app(State(shared): State<AppState>, Json(body): Json<Value>) -> Response {
    let mut world = shared.world();
    let mut settings = world.app.settings.clone();
    let applied = apply_settings(body, |name, text| {
        match name {
            "orchestrator_url" => settings.orchestrator_url = text,
            "shared_secret" => settings.shared_secret = text.map(String::into_bytes),
            _ => return false,
        }
        true
    });
    if let Err(message) = applied {
        return (StatusCode::BAD_REQUEST, message).into_response();
    }
    let problems = settings.problems();
    if !problems.is_empty() {
        return (StatusCode::BAD_REQUEST, format!("{}\n", problems.join("\n"))).into_response();
    }
    world.app.settings = settings;
    Json(app_json(&world.app.settings)).into_response()
}

async fn authorize_requests(State(shared): State<AppState>) -> Response {
    let world = shared.world();
    let requests: Vec<_> = world.oidc.authorize_records.iter().cloned().collect();
    Json(json!({ "requests": requests })).into_response()
}

async fn state(State(shared): State<AppState>) -> Response {
    let world = shared.world();
    let mut files = 0;
    let mut folders = 0;
    for user in world.users.values() {
        let Ok(entries) = world.storage.walk(user.viewer(), "") else {
            continue;
        };
        for entry in entries
            .iter()
            .filter(|entry| entry.node.owner == user.uid && !entry.node.path.is_empty())
        {
            if entry.node.is_folder() {
                folders += 1;
            } else {
                files += 1;
            }
        }
    }
    let live = |deleted_at: i64| deleted_at == 0;
    Json(json!({
        "users": world.users.len(),
        "groups": world.groups.len(),
        "files": files,
        "folders": folders,
        "shares": world.storage.shares().count(),
        "sessions": world.oidc.session_count(),
        "deck_boards": world.deck.boards.values().filter(|board| live(board.deleted_at)).count(),
        "deck_stacks": world.deck.stacks.values().filter(|stack| live(stack.deleted_at)).count(),
        "deck_cards": world.deck.cards.values().filter(|card| live(card.deleted_at)).count(),
        "webhook_registrations": world.webhooks.registrations().count(),
        "webhook_pending": world.webhooks.pending_count(),
        "webhook_deliveries": world.webhooks.records().count(),
        "mail_messages": world.mail.messages.len(),
        "mail_previews": world.app.previews.len(),
        "app_pages": world.app.pages.len(),
        "app_tokens": world.app.tokens.len(),
    }))
    .into_response()
}
