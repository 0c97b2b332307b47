//! The fixture file: the world a fake Nextcloud starts with.
//!
//! A fixture is TOML. This module holds the raw, serde-shaped ("low") types;
//! [`crate::world::World::from_fixture`] turns them into validated state and
//! reports every problem it finds at once. File contents are inline (`content`)
//! or read from a path relative to the fixture file (`source`).

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A whole fixture file.
#[derive(Debug, Clone, Default, Deserialize)]
// Every section may be left out.
#[serde(default, deny_unknown_fields)]
pub struct Fixture {
    pub server: ServerFixture,
    pub user_oidc: UserOidcFixture,
    pub users: Vec<UserFixture>,
    pub groups: Vec<GroupFixture>,
    pub oidc_clients: Vec<OidcClientFixture>,
    pub folders: Vec<FolderFixture>,
    pub files: Vec<FileFixture>,
    pub shares: Vec<ShareFixture>,
    pub calendars: Vec<CalendarFixture>,
    pub addressbooks: Vec<AddressBookFixture>,
    pub deck_boards: Vec<DeckBoardFixture>,
    pub mail_accounts: Vec<MailAccountFixture>,
    pub webhooks: WebhooksFixture,
    pub faults: crate::faults::Faults,
    /// The directory `source` paths are relative to; set by [`Fixture::load`].
    #[serde(skip)]
    pub base_dir: PathBuf,
}

/// Nextcloud's `config.php` switches that the fake honours; a switch left
/// out of the fixture keeps its [`Default`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerFixture {
    /// `overwritehost` (with `overwriteprotocol`): when set, every absolute
    /// URL and the OIDC issuer use it; when unset they follow the request's
    /// Host header, which is how the issuer mismatch happens.
    pub overwritehost: Option<String>,
    pub overwriteprotocol: String,
    /// When `overwritehost` is "self", the fake uses its own listen address.
    pub instance_id: String,
    pub version: String,
    /// JWT secret of the OnlyOffice-style converter; `None` = no secret.
    pub converter_secret: Option<String>,
    /// Lifetime of access tokens in seconds (the oidc app's `expire_time`).
    pub token_lifetime_seconds: i64,
    /// `sharing.force_share_accept`: user and group shares made through
    /// the OCS API wait for each recipient to accept them (`POST
    /// …/shares/pending/{id}`) before they are mounted. Off: accepted at
    /// once, Nextcloud's default. Fixture `[[shares]]` are accepted either way.
    pub force_share_accept: bool,
}

impl Default for ServerFixture {
    fn default() -> Self {
        ServerFixture {
            overwritehost: None,
            overwriteprotocol: "http".to_string(),
            instance_id: "ocfake0001".to_string(),
            version: "31.0.5.1".to_string(),
            converter_secret: None,
            token_lifetime_seconds: 900,
            force_share_accept: false,
        }
    }
}

/// The user_oidc app's bearer validation settings; a setting left out of
/// the fixture keeps its [`Default`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UserOidcFixture {
    /// The client id user_oidc's provider is registered with; a token's
    /// `aud` must contain it when `audience_check` is on.
    pub provider_client_id: String,
    /// `selfencoded_bearer_validation_audience_check`.
    pub audience_check: bool,
    /// `oidc_provider_bearer_validation`: look the token up in the oidc
    /// app's own store instead of checking iss/aud.
    pub oidc_provider_bearer_validation: bool,
    /// The URL user_oidc fetches discovery from (Nextcloud's internal URL).
    /// `None` = the fake's own listen address.
    pub discovery_url: Option<String>,
}

impl Default for UserOidcFixture {
    fn default() -> Self {
        UserOidcFixture {
            provider_client_id: "nextcloud".to_string(),
            audience_check: true,
            oidc_provider_bearer_validation: false,
            discovery_url: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserFixture {
    pub uid: String,
    pub display_name: Option<String>,
    pub password: String,
    #[serde(default)]
    pub app_passwords: Vec<String>,
    pub email: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    pub language: Option<String>,
    pub timezone: Option<String>,
    pub quota_bytes: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupFixture {
    pub gid: String,
    pub display_name: Option<String>,
}

/// An OIDC client as `occ oidc:create` registers it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcClientFixture {
    pub client_id: String,
    pub client_secret: String,
    pub name: Option<String>,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// `--resource_url`: becomes the access token's `aud`.
    pub resource_url: Option<String>,
    /// `--token_type`: "jwt" (RFC 9068) or "opaque".
    #[serde(default = "default_token_type")]
    pub token_type: String,
}

fn default_token_type() -> String {
    "jwt".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FolderFixture {
    pub owner: String,
    pub path: String,
    pub mtime: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileFixture {
    pub owner: String,
    /// Path inside the owner's files, e.g. `Documents/notes.md`.
    pub path: String,
    pub content: Option<String>,
    /// A file to read, relative to the fixture file.
    pub source: Option<String>,
    /// RFC 3339; default: the fake's start time.
    pub mtime: Option<String>,
    pub mime: Option<String>,
    #[serde(default)]
    pub favorite: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareFixture {
    pub owner: String,
    pub path: String,
    /// A uid (user share) ...
    pub share_with: Option<String>,
    /// ... or a gid (group share).
    pub share_with_group: Option<String>,
    /// OCS permission bits: 1 read, 2 update, 4 create, 8 delete, 16 share.
    #[serde(default = "default_permissions")]
    pub permissions: u8,
    /// Mount path in the recipient's files; default: the node's name at root.
    pub target: Option<String>,
}

fn default_permissions() -> u8 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarFixture {
    pub owner: String,
    pub uri: String,
    pub display_name: Option<String>,
    pub color: Option<String>,
    /// Component set: VEVENT, VTODO ...; default both.
    #[serde(default)]
    pub components: Vec<String>,
    #[serde(default)]
    pub events: Vec<CalendarObjectFixture>,
}

/// One calendar object resource (an `.ics` body).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarObjectFixture {
    /// Resource name; default: the UID plus `.ics`.
    pub uri: Option<String>,
    pub ics: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddressBookFixture {
    pub owner: String,
    pub uri: String,
    pub display_name: Option<String>,
    #[serde(default)]
    pub cards: Vec<CardFixture>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFixture {
    pub uri: Option<String>,
    pub vcf: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeckBoardFixture {
    pub owner: String,
    pub title: String,
    pub color: Option<String>,
    /// uids the board is shared with (edit permission).
    #[serde(default)]
    pub shared_with: Vec<String>,
    /// uids the board is shared with read-only.
    #[serde(default)]
    pub shared_read_only: Vec<String>,
    #[serde(default)]
    pub labels: Vec<DeckLabelFixture>,
    #[serde(default)]
    pub stacks: Vec<DeckStackFixture>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeckLabelFixture {
    pub title: String,
    pub color: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeckStackFixture {
    pub title: String,
    #[serde(default)]
    pub cards: Vec<DeckCardFixture>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeckCardFixture {
    pub title: String,
    pub description: Option<String>,
    /// RFC 3339.
    pub duedate: Option<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub assigned: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailAccountFixture {
    pub owner: String,
    pub email: String,
    pub name: Option<String>,
    #[serde(default)]
    pub messages: Vec<MailMessageFixture>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailMessageFixture {
    #[serde(default = "default_mailbox")]
    pub mailbox: String,
    pub from: String,
    #[serde(default)]
    pub to: Vec<String>,
    #[serde(default)]
    pub cc: Vec<String>,
    pub subject: String,
    /// RFC 3339.
    pub date: String,
    pub body: String,
    #[serde(default)]
    pub seen: bool,
}

fn default_mailbox() -> String {
    "INBOX".to_string()
}

/// How file events reach registered webhooks; a key left out keeps its
/// [`Default`].
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhooksFixture {
    /// "immediate": a background task delivers as events happen;
    /// "on_demand": events wait until the admin endpoint flushes them.
    pub delivery: crate::webhooks::Delivery,
    pub registrations: Vec<WebhookRegistrationFixture>,
}

impl Default for WebhooksFixture {
    fn default() -> Self {
        WebhooksFixture {
            delivery: crate::webhooks::Delivery::Immediate,
            registrations: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookRegistrationFixture {
    pub event: String,
    pub uri: String,
    #[serde(default = "default_http_method")]
    pub http_method: String,
    pub auth_header_name: Option<String>,
    pub auth_header_value: Option<String>,
}

fn default_http_method() -> String {
    "POST".to_string()
}

/// Why a fixture could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read fixture {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("fixture {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("fixture is inconsistent:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

impl Fixture {
    /// Reads and parses a fixture file; `source` paths resolve beside it.
    pub fn load(path: &Path) -> Result<Fixture, FixtureError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| FixtureError::Read { path: path.to_path_buf(), source })?;
        let mut fixture = Fixture::parse(&text)
            .map_err(|message| FixtureError::Parse { path: path.to_path_buf(), message })?;
        fixture.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(fixture)
    }

    /// Parses fixture text; `source` paths resolve against the current directory.
    pub fn parse(text: &str) -> Result<Fixture, String> {
        toml::from_str(text).map_err(|error| error.to_string())
    }

    /// Reads a `source` file named by the fixture.
    pub fn read_source(&self, source: &str) -> Result<Vec<u8>, String> {
        let path = self.base_dir.join(source);
        std::fs::read(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))
    }
}
