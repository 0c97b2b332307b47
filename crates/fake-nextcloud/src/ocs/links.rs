//! Public link shares (share type 3) in files_sharing's OCS API, as
//! `ShareAPIController` makes and edits them: permissions from
//! `permissions` and the legacy `publicUpload` flag (with the share
//! permission added whenever read is given, as Nextcloud does while
//! outgoing federated shares are allowed, its default), a password kept as
//! a digest, an
//! expiry day, a note and a label. Who reaches a link is in
//! [`crate::files::public`].

use super::app_config::Settings;
use super::{OcsCall, OcsError};
use crate::storage::{Link, Share, permission};

/// `getLinkSharePermissions` and `validateLinkSharePermissions`: what a
/// link grants, from `permissions` (default read) or the legacy
/// `publicUpload`, which wins.
pub(super) fn permissions(
    call: &OcsCall,
    settings: &Settings<'_>,
    given: Option<i64>,
    is_folder: bool,
) -> Result<u8, OcsError> {
    let mut permissions = match given {
        Some(given) if (0..=permission::ALL as i64).contains(&given) => given as u8,
        Some(_) => return Err(call.ocs.fail(400, "Invalid permissions")),
        None => permission::READ,
    };
    match call.text("publicUpload").as_deref() {
        Some("true") => permissions = UPLOAD,
        Some("false") => permissions = permission::READ,
        _ => {}
    }
    if permissions & permission::READ != 0 && settings.outgoing_federation() {
        permissions |= permission::SHARE;
    }
    if permissions & (permission::READ | permission::CREATE) == 0 {
        return Err(call.ocs.fail(400, "Share must at least have READ or CREATE permissions"));
    }
    if permissions & permission::READ == 0
        && permissions & (permission::UPDATE | permission::DELETE) != 0
    {
        return Err(call
            .ocs
            .fail(400, "Share must have READ permission if UPDATE or DELETE permission is set"));
    }
    let uploads = permissions & (permission::CREATE | permission::UPDATE | permission::DELETE) != 0;
    if uploads && !settings.public_upload_allowed() {
        return Err(call.ocs.fail(403, "Public upload disabled by the administrator"));
    }
    if uploads && !is_folder {
        return Err(call
            .ocs
            .fail(404, "Public upload is only possible for publicly shared folders"));
    }
    Ok(permissions)
}

/// Read, create, update and delete: what `publicUpload=true` means.
const UPLOAD: u8 = permission::READ | permission::CREATE | permission::UPDATE | permission::DELETE;

/// A fresh token: 15 letters and digits, as `Manager::generateToken`.
pub(super) fn token() -> String {
    use rand::Rng as _;
    let mut rng = rand::thread_rng();
    (0..15).map(|_| rng.sample(rand::distributions::Alphanumeric) as char).collect()
}

/// The optional fields of a create or an update, applied to `share`:
/// `password` ("" removes it, links only), `expireDate` ("" removes it;
/// a past day is refused), `note`, `label`, `hideDownload`.
pub(super) fn apply_fields(call: &OcsCall, share: &mut Share, today: &str) -> Result<(), OcsError> {
    if let Some(password) = call.text("password")
        && let Some(link) = share.link.as_mut()
    {
        link.password = (!password.is_empty()).then(|| Link::password_digest(&password));
    }
    if let Some(date) = call.text("expireDate") {
        share.expiration = match date.trim() {
            "" => None,
            date => Some(expiry_day(call, date, today)?),
        };
    }
    if let Some(note) = call.text("note") {
        share.note = note;
    }
    if let Some(label) = call.text("label") {
        share.label = label;
    }
    if let Some(hide) = call.text("hideDownload") {
        share.hide_download = hide == "true" || hide == "1";
        // A link's hidden download is its download attribute too.
        if share.share_type == crate::storage::ShareType::Link {
            set_download(share, !share.hide_download);
        }
    }
    if let Some(text) = call.text("attributes") {
        share.attributes = match text.trim() {
            "" | "null" | "[]" => None,
            text => Some(attributes(text).ok_or_else(|| {
                call.ocs.fail(400, format!("Invalid share attributes provided: \"{text}\""))
            })?),
        };
    }
    Ok(())
}

/// Share attributes as `setShareAttributes` reads them: a JSON array of
/// objects with `scope`, `key` and `value`, kept in that shape.
fn attributes(text: &str) -> Option<serde_json::Value> {
    let parsed: serde_json::Value = serde_json::from_str(text).ok()?;
    let list = parsed.as_array()?;
    let mut kept = Vec::with_capacity(list.len());
    for attribute in list {
        let (scope, key) = (attribute["scope"].as_str()?, attribute["key"].as_str()?);
        let value = attribute.get("value")?.clone();
        kept.push(serde_json::json!({ "scope": scope, "key": key, "value": value }));
    }
    Some(serde_json::Value::Array(kept))
}

/// Sets `download` false among the share's attributes.
pub(super) fn restrict_download(share: &mut Share) {
    set_download(share, false);
}

/// Sets the `download` attribute (scope `permissions`) of the share.
fn set_download(share: &mut Share, allowed: bool) {
    let mut list =
        share.attributes.take().and_then(|value| value.as_array().cloned()).unwrap_or_default();
    list.retain(|attribute| {
        !(attribute["scope"] == "permissions" && attribute["key"] == "download")
    });
    list.push(serde_json::json!({ "scope": "permissions", "key": "download", "value": allowed }));
    share.attributes = Some(serde_json::Value::Array(list));
}

/// The attributes as the JSON text files_sharing stores and answers:
/// `scope`, `key`, `value` in that order.
pub(super) fn attributes_text(attributes: &serde_json::Value) -> String {
    let list = attributes.as_array().map(Vec::as_slice).unwrap_or_default();
    let items: Vec<String> = list
        .iter()
        .map(|attribute| {
            format!(
                "{{\"scope\":{},\"key\":{},\"value\":{}}}",
                attribute["scope"], attribute["key"], attribute["value"]
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// `parseDate`: a day, `Y-m-d` (a time after it is ignored), not before
/// today.
fn expiry_day(call: &OcsCall, text: &str, today: &str) -> Result<String, OcsError> {
    let day = text.get(..10).unwrap_or(text);
    let Ok(parsed) = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d") else {
        return Err(call.ocs.fail(404, "Invalid date. Format must be YYYY-MM-DD"));
    };
    let day = parsed.format("%Y-%m-%d").to_string();
    if day.as_str() < today {
        return Err(call.ocs.fail(404, "Expiration date is in the past"));
    }
    Ok(day)
}

/// The day a share made `now` expires by the server's default, when the
/// creator named none (`expireDate` absent, not empty).
pub(super) fn default_expiration(
    call: &OcsCall,
    settings: &Settings<'_>,
    link: bool,
    now: i64,
) -> Option<String> {
    if call.params.contains_key("expireDate") {
        return None;
    }
    let days = settings.default_expiry_days(link)?;
    Some(crate::clock::day(now + days * 86_400))
}
