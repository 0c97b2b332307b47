//! The accept link of a share notification, as Nextcloud's
//! `sharing_features/sharing-accept.feature` checks it: files_sharing's
//! `/index.php/apps/files_sharing/accept/{ocinternal:id}` shows a
//! confirmation page to the share's recipient only, and accepting it (a
//! POST with the session's request token) leads to the file. alice shares,
//! bob receives, the administrator is the other user.

use super::shares::{id_of, share_with, shared_with};
use nextcloud_contract::{Cookies, Target, attribute_after, form_encode, header};

const ACCEPT: &str = "/index.php/apps/files_sharing/accept";

/// "Accepting a non-existent share" and "Accepting a share with an invalid
/// share ID": both are 404, whatever the id looks like.
#[tokio::test]
async fn a_share_that_does_not_exist_has_no_accept_page() {
    let target = Target::get().await;
    for id in ["ocinternal:999999", "invalid:format"] {
        let response =
            target.as_account(target.alice(), "GET", &format!("{ACCEPT}/{id}")).send().await;
        assert_eq!(response.unwrap().status(), 404, "{id}");
    }
}

/// "Accepting a valid share": the recipient, signed in through the login
/// form, opens the confirmation page, takes its request token and accepts;
/// the answer leads to the file's page (200 at the end of the redirects),
/// and the file is in the recipient's files. Without the token the POST
/// fails Nextcloud's CSRF check (412) and accepts nothing.
#[tokio::test]
async fn the_recipient_accepts_through_the_confirmation_page() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let name = format!("{}.txt", target.unique("welcome"));
    assert!(target.put_file(&alice, &name, "accept me").await.status().is_success());
    let (status, created) = share_with(&target, &alice, &name, &bob, None).await;
    assert_eq!(status, 200, "{created}");
    let id = id_of(&created);
    let fileid = created["ocs"]["data"]["item_source"].to_string();
    let url = format!("{ACCEPT}/ocinternal:{id}");

    let cookies = target.login(&bob).await;
    let page = in_session(&target, &cookies, "GET", &url).send().await;
    let page = page.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let token = attribute_after(&html, "data-requesttoken=\"").expect("the page's request token");
    assert!(!token.is_empty());

    let without = in_session(&target, &cookies, "POST", &url).send().await;
    assert_eq!(without.unwrap().status(), 412, "no request token: the CSRF check");

    let accepted = in_session(&target, &cookies, "POST", &url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_encode(&[("requesttoken", token)]))
        .send()
        .await
        .unwrap();
    assert!(accepted.status().is_redirection(), "{}", accepted.status());
    let location = header(&accepted, "location");
    assert!(location.ends_with(&format!("/index.php/f/{fileid}")), "{location}");
    assert_eq!(follow(&target, &cookies, &location).await, 200, "the file's page");

    let (status, content) = target.get_text(&bob, &target.files_path(&bob, &name)).await;
    assert_eq!((status, content.as_str()), (200, "accept me"));

    target.cleanup(&alice, &name).await;
}

/// "Accepting a share as a different user": to anyone but the recipient
/// the share has no accept page, and accepting it is refused as well.
#[tokio::test]
async fn to_anyone_else_the_share_has_no_accept_page() {
    let target = Target::get().await;
    let (alice, bob, admin) =
        (target.alice().clone(), target.bob().clone(), target.admin().clone());
    let name = format!("{}.txt", target.unique("welcome"));
    assert!(target.put_file(&alice, &name, "not yours").await.status().is_success());
    let id = shared_with(&target, &alice, &name, &bob, None).await;
    let url = format!("{ACCEPT}/ocinternal:{id}");

    let response = target.as_account(&admin, "GET", &url).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let cookies = target.login(&admin).await;
    let page = in_session(&target, &cookies, "GET", &url).send().await;
    assert_eq!(page.unwrap().status(), 404);
    // The administrator's own request token gets past the CSRF check, and
    // the share is still not theirs to accept.
    let token = in_session(&target, &cookies, "GET", "/index.php/csrftoken");
    let token: serde_json::Value = token.send().await.unwrap().json().await.unwrap();
    let token = token["token"].as_str().expect("the session's request token").to_string();
    let accepted = in_session(&target, &cookies, "POST", &url)
        .header("requesttoken", token)
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 404);
    let (_, mounted) = target.get_text(&admin, &target.files_path(&admin, &name)).await;
    assert_ne!(mounted, "not yours", "nothing was mounted for the administrator");

    target.cleanup(&alice, &name).await;
}

/// A request in the browser session whose cookies are `cookies`.
fn in_session(
    target: &Target,
    cookies: &Cookies,
    method: &str,
    path: &str,
) -> reqwest::RequestBuilder {
    target.anonymous(method, path).header("Cookie", cookies.header())
}

/// Follows redirects with the session's cookies; the last status.
async fn follow(target: &Target, cookies: &Cookies, location: &str) -> u16 {
    let mut next = location.to_string();
    for _ in 0..5 {
        let path = match next.find("/index.php") {
            Some(at) => next[at..].to_string(),
            None => next.clone(),
        };
        let response = in_session(target, cookies, "GET", &path);
        let response = response.send().await.unwrap();
        if !response.status().is_redirection() {
            return response.status().as_u16();
        }
        next = header(&response, "location");
    }
    panic!("more than five redirects from {location}");
}
