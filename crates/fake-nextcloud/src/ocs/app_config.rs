//! provisioning_api's `AppConfigController`: the administrator reads and
//! sets apps' configuration values on
//! `/ocs/{v}/apps/provisioning_api/api/v1/config/apps/{app}/{key}` — how
//! Nextcloud's suite turns the share API's settings on and off. The values
//! live in [`crate::world::World::app_config`]; [`Settings`] reads the
//! ones the fake honours, with Nextcloud's defaults.

use super::guard;
use super::{Guarded, OcsCall, OcsError, OcsResult};
use crate::AppState;
use crate::world::World;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde_json::json;

const ROOT: &str = "/ocs/{version}/apps/provisioning_api/api/v1/config/apps";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(ROOT, get(apps))
        .route(&format!("{ROOT}/{{app}}"), get(keys))
        .route(&format!("{ROOT}/{{app}}/{{key}}"), get(value).post(set).delete(remove))
}

/// The route's app id, if `verifyAppId` takes it (letters, digits and
/// `_` only); 403 otherwise.
fn app_of(call: &OcsCall) -> Result<&str, OcsError> {
    let app = call.path_param("app");
    let valid =
        !app.is_empty() && app.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
    if valid { Ok(app) } else { Err(call.ocs.fail(403, "Invalid app id given")) }
}

/// `verifyConfigKey`: keys the API never sets.
fn settable(app: &str, key: &str) -> bool {
    !(matches!(key, "installed_version" | "enabled" | "types")
        || (app == "core" && (key.starts_with("public_") || key.starts_with("remote_"))))
}

async fn apps(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let world = shared.world();
    let mut apps: Vec<&str> = world.app_config.keys().map(String::as_str).collect();
    for app in ["core", "dav", "files", "files_sharing", "provisioning_api"] {
        if !apps.contains(&app) {
            apps.push(app);
        }
    }
    apps.sort_unstable();
    Ok(call.ocs.ok(json!({ "data": apps })))
}

async fn keys(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let app = app_of(&call)?;
    let world = shared.world();
    let keys: Vec<&String> =
        world.app_config.get(app).map(|values| values.keys().collect()).unwrap_or_default();
    Ok(call.ocs.ok(json!({ "data": keys })))
}

async fn value(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let (app, key) = (app_of(&call)?, call.path_param("key"));
    let world = shared.world();
    let stored = world.app_config.get(app).and_then(|values| values.get(key)).cloned();
    let value = stored.or_else(|| call.text("defaultValue")).unwrap_or_default();
    Ok(call.ocs.ok(json!({ "data": value })))
}

async fn set(State(shared): State<AppState>, Guarded(call, _): Guarded<guard::Admin>) -> OcsResult {
    let (app, key) = (app_of(&call)?.to_string(), call.path_param("key").to_string());
    if !settable(&app, &key) {
        return Err(call.ocs.fail(403, "The given key can not be set"));
    }
    let value = call.text("value").unwrap_or_default();
    shared.world().app_config.entry(app).or_default().insert(key, value);
    Ok(call.ocs.ok(json!([])))
}

async fn remove(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let (app, key) = (app_of(&call)?, call.path_param("key"));
    if !settable(app, key) {
        return Err(call.ocs.fail(403, "The given key can not be deleted"));
    }
    if let Some(values) = shared.world().app_config.get_mut(app) {
        values.remove(key);
    }
    Ok(call.ocs.ok(json!([])))
}

/// The share API's settings the fake honours, read as `Share\Manager`
/// reads them (a "yes"/"no" flag, a number with its default).
pub(crate) struct Settings<'w>(&'w World);

impl<'w> Settings<'w> {
    pub(crate) fn of(world: &'w World) -> Settings<'w> {
        Settings(world)
    }

    fn get(&self, app: &str, key: &str) -> Option<&'w str> {
        self.0.app_config.get(app)?.get(key).map(String::as_str)
    }

    fn flag(&self, app: &str, key: &str, default: bool) -> bool {
        match self.get(app, key) {
            Some(value) => value == "yes",
            None => default,
        }
    }

    fn number(&self, app: &str, key: &str, default: i64) -> i64 {
        self.get(app, key).and_then(|value| value.trim().parse().ok()).unwrap_or(default)
    }

    /// `shareapi_default_permissions`: what a user or group share gets
    /// when its creator names no permissions.
    pub(crate) fn default_permissions(&self) -> i64 {
        self.number("core", "shareapi_default_permissions", crate::storage::permission::ALL as i64)
    }

    /// `shareapi_allow_view_without_download`: whether a view-only share's
    /// files may still be read (viewed) by its recipients.
    pub(crate) fn view_without_download(&self) -> bool {
        self.flag("core", "shareapi_allow_view_without_download", true)
    }

    pub(crate) fn links_allowed(&self) -> bool {
        self.flag("core", "shareapi_allow_links", true)
    }

    pub(crate) fn public_upload_allowed(&self) -> bool {
        self.flag("core", "shareapi_allow_public_upload", true)
    }

    /// `outgoing_server2server_share_enabled`: whether a readable link
    /// carries the share permission (it can be added to another server).
    pub(crate) fn outgoing_federation(&self) -> bool {
        self.flag("files_sharing", "outgoing_server2server_share_enabled", true)
    }

    /// Days until a new share without an `expireDate` expires, if a
    /// default applies: `shareapi_default_[internal_]expire_date`, after
    /// `…_expire_after_n_days` days, or the relaxed default
    /// (`link_defaultExpDays`, `internal_defaultExpDays`) when it is
    /// shorter.
    pub(crate) fn default_expiry_days(&self, link: bool) -> Option<i64> {
        let (on, limit, relaxed) = if link {
            ("shareapi_default_expire_date", "shareapi_expire_after_n_days", "link_defaultExpDays")
        } else {
            (
                "shareapi_default_internal_expire_date",
                "shareapi_internal_expire_after_n_days",
                "internal_defaultExpDays",
            )
        };
        if !self.flag("core", on, false) {
            return None;
        }
        let limit = self.number("core", limit, 7);
        Some(self.number("core", relaxed, limit).min(limit))
    }
}
