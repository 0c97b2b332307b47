//! Mail shares (share type 4, the sharebymail app) as
//! `sharing_features/sharing-v1.feature` checks them: a share for one email
//! address is a token of its own, opened on the legacy public endpoint with
//! the token as user name and the share's password, if any, as password.
//! The suite listens with a dummy mail server; what is mailed is not
//! checked there, and the fake sends nothing.

use super::public_links::{legacy_get, update};
use super::share_settings::{set, unset};
use super::shares::{SHARES_V1, create_share_at, share_fields, text};
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use serde_json::Value;

/// A mail share of `path` for `address` (v1, as the suite's step sends
/// it): the OCS status code and the share.
async fn mail_share(
    target: &Target,
    owner: &Account,
    path: &str,
    address: &str,
    password: Option<&str>,
) -> (i64, Value) {
    let mut fields = share_fields(path, "4", address);
    if let Some(password) = password {
        fields.push(("password", password.to_string()));
    }
    let (status, answer) = create_share_at(target, owner, SHARES_V1, &fields).await;
    assert_eq!(status, 200, "v1 answers HTTP 200: {answer}");
    (answer["ocs"]["meta"]["statuscode"].as_i64().unwrap_or(0), answer["ocs"]["data"].clone())
}

/// The suite's "last share (with password X) can be downloaded": a GET of
/// `/public.php/webdav` with the token as user name.
async fn download(target: &Target, token: &str, password: &str) -> (u16, String) {
    legacy_get(target, token, "", password).await
}

/// "Creating a new mail share" and "… with password": the share names the
/// address and has a token; the file downloads by it, with the password
/// when there is one and not without it.
#[tokio::test]
async fn a_mail_share_is_a_token_for_one_address() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "mailed").await.status().is_success());

    let (code, share) = mail_share(&target, &owner, "welcome.txt", "dumy@test.com", None).await;
    assert_eq!(code, 100, "{share}");
    assert_eq!(share["share_type"], 4, "{share}");
    assert_eq!(text(&share, "share_with"), "dumy@test.com");
    let token = text(&share, "token");
    assert!(!token.is_empty() && token != "null", "a mail share has its token: {share}");
    assert_eq!(download(&target, &token, "").await, (200, "mailed".to_string()));

    let (code, guarded) =
        mail_share(&target, &owner, "welcome.txt", "other@test.com", Some("publicpw")).await;
    assert_eq!(code, 100, "{guarded}");
    let guarded_token = text(&guarded, "token");
    assert_ne!(guarded_token, token, "each address has a token of its own");
    assert_eq!(download(&target, &guarded_token, "publicpw").await, (200, "mailed".to_string()));
    assert_eq!(download(&target, &guarded_token, "wrong").await.0, 401, "not without it");
    people.remove().await;
}

/// "Creating a new mail share with password when password protection is
/// enforced": with `shareapi_enforce_links_password` on, a mail share that
/// brings its password is made and opens with it.
#[tokio::test]
async fn a_mail_share_with_its_password_is_made_when_passwords_are_enforced() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "enforced").await.status().is_success());
    set(&target, "core", "shareapi_enforce_links_password", "yes").await;
    let (code, share) =
        mail_share(&target, &owner, "welcome.txt", "dumy@test.com", Some("publicpw")).await;
    unset(&target, "core", "shareapi_enforce_links_password").await;
    assert_eq!(code, 100, "{share}");
    let token = text(&share, "token");
    assert_eq!(download(&target, &token, "publicpw").await, (200, "enforced".to_string()));
    people.remove().await;
}

/// "Creating a new mail share and setting a password", "… twice" and "…
/// the same password twice": an update sets the password, a second one
/// replaces it (or sets the same one again), and the latest opens it.
#[tokio::test]
async fn a_mail_shares_password_is_set_and_replaced_by_updates() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "updated").await.status().is_success());
    let (code, share) = mail_share(&target, &owner, "welcome.txt", "dumy@test.com", None).await;
    assert_eq!(code, 100, "{share}");
    let (id, token) = (text(&share, "id"), text(&share, "token"));

    for password in ["publicpw", "publicpw", "another publicpw"] {
        let (status, updated) = update(&target, &owner, &id, &[("password", password)]).await;
        assert_eq!(status, 200, "setting {password:?}: {updated}");
        assert_eq!(download(&target, &token, password).await, (200, "updated".to_string()));
    }
    assert_eq!(download(&target, &token, "publicpw").await.0, 401, "the old one no longer");
    people.remove().await;
}
