//! contacts_search against the fake Nextcloud's demo address books, as the
//! user: what Nextcloud's `i;unicode-casemap` matching finds (case folded,
//! accents kept), every searched property, several address books, isolation
//! between users, and failures that say what to do next.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use mcp_nextcloud::UpstreamAuth;
use serde_json::{Value, json};

fn names(result: &Value) -> Vec<String> {
    assert_ne!(result["isError"], json!(true), "{result}");
    result["structuredContent"]["contacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|contact| contact["name"].as_str().unwrap().to_string())
        .collect()
}

async fn search(stack: &Stack, uid: &str, query: &str) -> Vec<String> {
    names(&stack.call_tool(uid, "contacts_search", json!({ "query": query })).await)
}

#[tokio::test]
async fn a_contact_comes_back_whole() {
    let stack = start(second_token()).await;
    let result = stack.call_tool("alice", "contacts_search", json!({"query": "Dubois"})).await;
    let contact = &result["structuredContent"]["contacts"][0];
    assert_eq!(
        *contact,
        json!({
            "uid": "chloe@tamebi.demo",
            "address_book": "contacts",
            "name": "Chloé Dubois",
            "emails": [{"address": "chloe.dubois@example.com", "type": "work"}],
            "phones": [{"number": "+33 6 12 34 56 78", "type": "cell"}],
            "organisation": "Finance",
            "note": "Valide le budget du projet Apollo.",
            "href": "/remote.php/dav/addressbooks/users/alice/contacts/chloe.vcf"
        })
    );
    assert_eq!(result["structuredContent"]["truncated"], json!(false));
    let text = text_of(&result);
    assert!(
        text.contains(
            "Chloé Dubois: chloe.dubois@example.com (work); tel +33 6 12 34 56 78 (cell); Finance"
        ),
        "{text}"
    );
    assert!(text.contains("Note: Valide le budget"), "{text}");
}

#[tokio::test]
async fn matching_folds_case_but_not_accents_as_nextcloud_does() {
    let stack = start(second_token()).await;
    assert_eq!(search(&stack, "alice", "chloé").await, ["Chloé Dubois"]);
    assert_eq!(search(&stack, "alice", "CHLOÉ").await, ["Chloé Dubois"], "É folds to é");
    // Without the accent the name does not match; the card is still found,
    // but only because its email address is spelled without one.
    assert_eq!(search(&stack, "alice", "chloe").await, ["Chloé Dubois"]);
    let unaccented =
        stack.call_tool("alice", "contacts_search", json!({"query": "Chloe Dubois"})).await;
    assert!(names(&unaccented).is_empty(), "i;unicode-casemap keeps accents");
    assert!(text_of(&unaccented).contains("accented spelling"), "{}", text_of(&unaccented));
}

#[tokio::test]
async fn every_searched_property_finds_the_contact() {
    let stack = start(second_token()).await;
    for query in ["chloe.dubois@example.com", "+33 6 12", "finance", "projet apollo", "Dubois;Chlo"]
    {
        let found = search(&stack, "alice", query).await;
        // N is matched as its structured value, as sabre/vobject gives it.
        assert_eq!(found, ["Chloé Dubois"], "{query}");
    }
    assert_eq!(search(&stack, "alice", "@example.com").await, ["Bob Stone", "Chloé Dubois"]);
    assert!(search(&stack, "alice", "nobody-at-all").await.is_empty());
}

#[tokio::test]
async fn an_empty_query_lists_contacts_within_the_limit() {
    let stack = start(second_token()).await;
    assert_eq!(search(&stack, "alice", "").await, ["Bob Stone", "Chloé Dubois"]);
    let all = stack.call_tool("alice", "contacts_search", json!({})).await;
    assert_eq!(names(&all), ["Bob Stone", "Chloé Dubois"]);
    let first = stack.call_tool("alice", "contacts_search", json!({"limit": 1})).await;
    assert_eq!(names(&first), ["Bob Stone"]);
    assert_eq!(first["structuredContent"]["truncated"], json!(true));
    assert!(text_of(&first).contains("More than 1 contacts match"));
}

#[tokio::test]
async fn users_see_only_their_own_address_books() {
    let stack = start(second_token()).await;
    assert!(search(&stack, "bob", "chloé").await.is_empty(), "alice's contacts never reach bob");
    assert_eq!(search(&stack, "bob", "").await, ["Dana Kowalski"]);
    assert!(search(&stack, "alice", "dana").await.is_empty());
    assert!(search(&stack, "carol", "").await.is_empty(), "carol's default book is empty");
}

#[tokio::test]
async fn every_address_book_of_the_user_is_searched() {
    let stack = start(second_token()).await;
    let book = format!("{}/remote.php/dav/addressbooks/users/alice/work/", stack.fake.base_url());
    let mkcol = r#"<d:mkcol xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:set><d:prop><d:resourcetype><d:collection/><card:addressbook/></d:resourcetype><d:displayname>Work</d:displayname></d:prop></d:set></d:mkcol>"#;
    let client = reqwest::Client::new();
    let created = client
        .request(reqwest::Method::from_bytes(b"MKCOL").unwrap(), &book)
        .basic_auth("alice", Some("alice-demo-password"))
        .body(mkcol)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let put = client
        .put(format!("{book}eve.vcf"))
        .basic_auth("alice", Some("alice-demo-password"))
        .header("content-type", "text/vcard")
        .body("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:eve\r\nFN:Ève Martin\r\nEMAIL;TYPE=work:eve@example.com\r\nEND:VCARD\r\n")
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 201);
    let result =
        stack.call_tool("alice", "contacts_search", json!({"query": "@example.com"})).await;
    assert_eq!(names(&result), ["Bob Stone", "Chloé Dubois", "Ève Martin"]);
    let eve = &result["structuredContent"]["contacts"][2];
    assert_eq!(eve["address_book"], "work");
    assert_eq!(eve["href"], "/remote.php/dav/addressbooks/users/alice/work/eve.vcf");
}

#[tokio::test]
async fn bad_arguments_are_the_models_to_fix() {
    let stack = start(second_token()).await;
    let long = "x".repeat(201);
    let cases = [
        json!({"limit": 0}),
        json!({"limit": 51}),
        json!({"query": 42}),
        json!({"query": long}),
        json!({"name": "Chloé"}),
    ];
    for arguments in cases {
        let result = stack.call_tool("alice", "contacts_search", arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("invalid_arguments"), "{arguments}: {result}");
    }
}

#[tokio::test]
async fn carddav_down_is_unreachable_not_an_empty_address_book() {
    let stack = start(second_token()).await;
    stack.fail_route("/remote.php/dav/addressbooks", Some("REPORT"), 503, None);
    let result = stack.call_tool("alice", "contacts_search", json!({"query": "chloé"})).await;
    assert_eq!(failure_kind(&result), Some("nextcloud_unreachable"));
    assert!(text_of(&result).contains("do not guess"));
}

#[tokio::test]
async fn a_bearer_refused_on_carddav_says_what_to_do_and_app_passwords_work() {
    for upstream in [second_token(), UpstreamAuth::AppPassword] {
        let stack = start(upstream.clone()).await;
        stack
            .fake
            .shared
            .world()
            .faults
            .bearer_rejected_on
            .push("/remote.php/dav/addressbooks".into());
        let result = stack.call_tool("alice", "contacts_search", json!({"query": "chloé"})).await;
        match upstream {
            UpstreamAuth::AppPassword => assert_eq!(names(&result), ["Chloé Dubois"]),
            _ => {
                assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"));
                let message = text_of(&result);
                assert!(message.contains("app-password mode"), "{message}");
                assert!(!message.contains("remote.php") && !message.contains("127.0.0.1"));
            }
        }
    }
}
