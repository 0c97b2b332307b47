//! Deck's REST API over real sockets: who sees which board, the entity
//! shapes, card life cycle and moves, ETags, the OCS variant, and the
//! bearer-rejection fault on Deck's app routes.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Running, json_of, start};
use serde_json::{Value, json};

const DECK: &str = concat!(
    common::small_people!(),
    r##"
[[deck_boards]]
owner = "alice"
title = "Apollo"
color = "0082c9"
shared_with = ["bob"]

[[deck_boards.labels]]
title = "Budget"
color = "31CC7C"

[[deck_boards.stacks]]
title = "To do"

[[deck_boards.stacks.cards]]
title = "Validate the budget"
description = "40 000 EUR"
duedate = "2026-03-27T17:00:00Z"
labels = ["Budget"]
assigned = ["alice"]

[[deck_boards.stacks.cards]]
title = "Enable 2FA"

[[deck_boards.stacks]]
title = "Done"

[[deck_boards.stacks.cards]]
title = "Kick-off"
"##
);

const API: &str = "/index.php/apps/deck/api/v1.0";

async fn call(
    running: &Running,
    method: &str,
    uid: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = running.as_user(method, uid, &format!("{API}{path}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    json_of(request.send().await.unwrap()).await
}

/// A GET on Deck's OCS variant (`path` below its API root) as `uid`.
async fn ocs_get(running: &Running, uid: &str, path: &str) -> (u16, Value) {
    let path = format!("/ocs/v2.php/apps/deck/api/v1.0{path}");
    json_of(running.ocs("GET", uid, &path).send().await.unwrap()).await
}

/// The status of listing the boards with `token` as the bearer.
async fn boards_with_bearer(running: &Running, token: &str) -> reqwest::StatusCode {
    running.get_with_bearer(&format!("{API}/boards"), token).send().await.unwrap().status()
}

/// (board id, [stack ids], [[card ids]]) as alice sees them.
async fn layout(running: &Running) -> (u64, Vec<u64>, Vec<Vec<u64>>) {
    let (_, boards) = call(running, "GET", "alice", "/boards", None).await;
    let board = boards[0]["id"].as_u64().unwrap();
    let (_, stacks) = call(running, "GET", "alice", &format!("/boards/{board}/stacks"), None).await;
    let stacks = stacks.as_array().unwrap();
    let ids = stacks.iter().map(|stack| stack["id"].as_u64().unwrap()).collect();
    let cards = stacks
        .iter()
        .map(|stack| {
            stack["cards"]
                .as_array()
                .unwrap()
                .iter()
                .map(|card| card["id"].as_u64().unwrap())
                .collect()
        })
        .collect();
    (board, ids, cards)
}

#[tokio::test]
async fn owner_and_shared_users_list_the_board_and_others_do_not() {
    let running = start(DECK).await;
    let (status, boards) = call(&running, "GET", "alice", "/boards?details=true", None).await;
    assert_eq!(status, 200);
    let board = &boards[0];
    assert_eq!(board["title"], "Apollo");
    assert_eq!(
        board["owner"],
        json!({"primaryKey": "alice", "uid": "alice", "displayname": "Alice Martin", "type": 0})
    );
    assert_eq!(board["color"], "0082c9");
    assert_eq!(board["archived"], false);
    assert_eq!(board["permissions"]["PERMISSION_MANAGE"], true);
    assert_eq!(board["labels"][0]["title"], "Budget");
    assert_eq!(board["acl"][0]["participant"]["uid"], "bob");
    assert_eq!(board["deletedAt"], 0);
    assert!(board["ETag"].is_string());

    let (_, boards) = call(&running, "GET", "bob", "/boards", None).await;
    assert_eq!(boards.as_array().unwrap().len(), 1);
    assert_eq!(boards[0]["permissions"]["PERMISSION_EDIT"], true);
    assert_eq!(boards[0]["permissions"]["PERMISSION_MANAGE"], false);
    assert_eq!(boards[0]["labels"], json!([]), "details only on request");

    let (_, boards) = call(&running, "GET", "carol", "/boards", None).await;
    assert_eq!(boards, json!([]));
    let id = board["id"].as_u64().unwrap();
    let (status, body) = call(&running, "GET", "carol", &format!("/boards/{id}"), None).await;
    assert_eq!(status, 403);
    assert_eq!(body, json!({"status": 403, "message": "Permission denied"}));
    let (status, body) = call(&running, "GET", "alice", "/boards/99999", None).await;
    assert_eq!(status, 404);
    assert_eq!(body["status"], 404);
}

#[tokio::test]
async fn stacks_carry_their_cards_in_order() {
    let running = start(DECK).await;
    let (board, stacks, _) = layout(&running).await;
    let (status, body) =
        call(&running, "GET", "bob", &format!("/boards/{board}/stacks"), None).await;
    assert_eq!(status, 200);
    assert_eq!(body[0]["title"], "To do");
    assert_eq!(body[0]["boardId"], board);
    let card = &body[0]["cards"][0];
    assert_eq!(card["title"], "Validate the budget");
    assert_eq!(card["description"], "40 000 EUR");
    assert_eq!(card["duedate"], "2026-03-27T17:00:00+00:00");
    assert_eq!(card["type"], "plain");
    assert_eq!(card["stackId"], stacks[0]);
    assert_eq!(card["owner"]["uid"], "alice");
    assert_eq!(card["labels"][0]["title"], "Budget");
    assert_eq!(card["assignedUsers"][0]["participant"]["uid"], "alice");
    assert!(card["createdAt"].is_i64());
    assert!(card["lastModified"].is_i64());
    assert_eq!(body[0]["cards"][1]["duedate"], Value::Null);
    let (status, _) =
        call(&running, "GET", "carol", &format!("/boards/{board}/stacks"), None).await;
    assert_eq!(status, 403);
    let (status, stack) =
        call(&running, "GET", "alice", &format!("/boards/{board}/stacks/{}", stacks[1]), None)
            .await;
    assert_eq!((status, stack["title"].clone()), (200, json!("Done")));
}

#[tokio::test]
async fn creating_boards_gives_default_labels_and_validates_titles() {
    let running = start(DECK).await;
    let (status, board) = call(
        &running,
        "POST",
        "carol",
        "/boards",
        Some(json!({"title": "Mine", "color": "ff0000"})),
    )
    .await;
    assert_eq!(status, 200);
    let titles: Vec<&str> = board["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|label| label["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Finished", "To review", "Action needed", "Later"]);
    assert_eq!(board["owner"]["uid"], "carol");
    let (status, body) =
        call(&running, "POST", "carol", "/boards", Some(json!({"color": "ff0000"}))).await;
    assert_eq!((status, body["message"].clone()), (400, json!("title must be provided")));
    let long = "x".repeat(101);
    let (status, _) =
        call(&running, "POST", "carol", "/boards", Some(json!({"title": long, "color": "ff0000"})))
            .await;
    assert_eq!(status, 400);
    let id = board["id"].as_u64().unwrap();
    let (status, updated) = call(
        &running,
        "PUT",
        "carol",
        &format!("/boards/{id}"),
        Some(json!({"title": "Renamed", "color": "00ff00"})),
    )
    .await;
    assert_eq!((status, updated["title"].clone()), (200, json!("Renamed")));
    let (status, _) = call(
        &running,
        "PUT",
        "alice",
        &format!("/boards/{id}"),
        Some(json!({"title": "x", "color": "00ff00"})),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn card_life_cycle_create_update_move_delete() {
    let running = start(DECK).await;
    let (board, stacks, _) = layout(&running).await;
    let todo = stacks[0];
    let done = stacks[1];
    let (status, card) = call(
        &running,
        "POST",
        "bob",
        &format!("/boards/{board}/stacks/{todo}/cards"),
        Some(json!({"title": "Write the report", "type": "plain", "order": 5, "description": "draft", "duedate": "2026-04-01T10:00:00+02:00"})),
    )
    .await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(card["owner"], "bob", "a create answer carries the uid, not an object");
    assert_eq!(card["duedate"], "2026-04-01T08:00:00+00:00");
    assert_eq!(card["stackId"], todo);
    let card_id = card["id"].as_u64().unwrap();
    let path = format!("/boards/{board}/stacks/{todo}/cards/{card_id}");

    let (status, body) =
        call(&running, "PUT", "bob", &path, Some(json!({"title": "Report", "type": "plain"})))
            .await;
    assert_eq!((status, body["message"].clone()), (400, json!("owner must be provided")));
    let (status, updated) = call(
        &running,
        "PUT",
        "bob",
        &path,
        Some(json!({"title": "Report", "type": "plain", "owner": "bob"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(updated["title"], "Report");
    assert_eq!(updated["description"], "", "Deck's update resets what is left out");
    assert_eq!(updated["duedate"], Value::Null);

    let (status, moved) = call(
        &running,
        "PUT",
        "bob",
        &format!("{path}/reorder"),
        Some(json!({"stackId": done, "order": 0})),
    )
    .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved[0]["id"], card_id);
    assert_eq!(moved[0]["stackId"], done);
    let (_, _, cards) = layout(&running).await;
    assert_eq!(cards[1][0], card_id, "first in Done");
    assert!(!cards[0].contains(&card_id));

    let (status, deleted) = call(&running, "DELETE", "bob", &path, None).await;
    assert_eq!(status, 200);
    assert!(deleted["deletedAt"].as_i64().unwrap() > 0);
    let (_, _, cards) = layout(&running).await;
    assert!(!cards.concat().contains(&card_id));
    let (status, _) = call(&running, "GET", "bob", &path, None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn strangers_cannot_touch_cards() {
    let running = start(DECK).await;
    let (board, stacks, cards) = layout(&running).await;
    let path = format!("/boards/{board}/stacks/{}/cards/{}", stacks[0], cards[0][0]);
    let (status, _) = call(&running, "GET", "carol", &path, None).await;
    assert_eq!(status, 403);
    let (status, _) = call(
        &running,
        "POST",
        "carol",
        &format!("/boards/{board}/stacks/{}/cards", stacks[0]),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = call(&running, "DELETE", "carol", &path, None).await;
    assert_eq!(status, 403);
    let (status, body) = call(
        &running,
        "PUT",
        "carol",
        &format!("{path}/reorder"),
        Some(json!({"stackId": stacks[1], "order": 0})),
    )
    .await;
    assert_eq!((status, body["message"].clone()), (403, json!("Permission denied")));
}

#[tokio::test]
async fn labels_and_assignees() {
    let running = start(DECK).await;
    let (board, stacks, cards) = layout(&running).await;
    let path = format!("/boards/{board}/stacks/{}/cards/{}", stacks[0], cards[0][1]);
    let (_, boards) = call(&running, "GET", "alice", "/boards?details=true", None).await;
    let label = boards[0]["labels"][0]["id"].as_u64().unwrap();
    let (assign_user, labels) = (format!("{path}/assignUser"), format!("/boards/{board}/labels"));

    let (status, card) = call(
        &running,
        "PUT",
        "bob",
        &format!("{path}/assignLabel"),
        Some(json!({"labelId": label})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(card["labels"][0]["id"], label);
    let (status, card) = call(
        &running,
        "PUT",
        "bob",
        &format!("{path}/removeLabel"),
        Some(json!({"labelId": label})),
    )
    .await;
    assert_eq!((status, card["labels"].clone()), (200, json!([])));

    let (status, assignment) =
        call(&running, "PUT", "bob", &assign_user, Some(json!({"userId": "bob"}))).await;
    assert_eq!(status, 200);
    assert_eq!(assignment["participant"]["uid"], "bob");
    assert_eq!(assignment["cardId"], cards[0][1]);
    let (status, body) =
        call(&running, "PUT", "bob", &assign_user, Some(json!({"userId": "bob"}))).await;
    assert_eq!(
        (status, body["message"].clone()),
        (400, json!("The user is already assigned to the card"))
    );
    let (status, body) =
        call(&running, "PUT", "bob", &assign_user, Some(json!({"userId": "carol"}))).await;
    assert_eq!(
        (status, body["message"].clone()),
        (400, json!("The user is not part of the board"))
    );
    // Unassigning works once; the second time there is nothing to remove.
    for expected in [200, 404] {
        let unassign = Some(json!({"userId": "bob"}));
        let (status, _) =
            call(&running, "PUT", "bob", &format!("{path}/unassignUser"), unassign).await;
        assert_eq!(status, expected);
    }

    let (status, created) =
        call(&running, "POST", "alice", &labels, Some(json!({"title": "New", "color": "000000"})))
            .await;
    assert_eq!(status, 200);
    let (status, _) =
        call(&running, "POST", "bob", &labels, Some(json!({"title": "No", "color": "000000"})))
            .await;
    assert_eq!(status, 403, "labels need manage permission");
    let label_id = created["id"].as_u64().unwrap();
    let (status, got) =
        call(&running, "GET", "bob", &format!("/boards/{board}/labels/{label_id}"), None).await;
    assert_eq!((status, got["title"].clone()), (200, json!("New")));
}

#[tokio::test]
async fn etags_answer_304_and_change_when_a_card_changes() {
    let running = start(DECK).await;
    let (board, stacks, cards) = layout(&running).await;
    let board_path = format!("{API}/boards/{board}");
    let response = running.as_user("GET", "alice", &board_path).send().await.unwrap();
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let body: Value = response.json().await.unwrap();
    assert_eq!(format!("\"{}\"", body["ETag"].as_str().unwrap()), etag);
    let if_none_match = || async {
        let request = running.as_user("GET", "alice", &board_path).header("If-None-Match", &etag);
        request.send().await.unwrap().status()
    };
    assert_eq!(if_none_match().await, 304);

    let path = format!("/boards/{board}/stacks/{}/cards/{}/archive", stacks[0], cards[0][0]);
    let (status, _) = call(&running, "PUT", "alice", &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(if_none_match().await, 200, "a card change propagates to the board's ETag");
}

#[tokio::test]
async fn if_modified_since_limits_lists() {
    let running = start(DECK).await;
    let future = httpdate::fmt_http_date(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
    );
    let past = httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
    );
    let list = |since: String| {
        running
            .as_user("GET", "alice", &format!("{API}/boards"))
            .header("If-Modified-Since", since)
            .send()
    };
    let boards: Value = list(future).await.unwrap().json().await.unwrap();
    assert_eq!(boards, json!([]));
    let boards: Value = list(past).await.unwrap().json().await.unwrap();
    assert_eq!(boards.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_ocs_variant_wraps_answers_in_the_envelope() {
    let running = start(DECK).await;
    let (status, body) = ocs_get(&running, "bob", "/boards?format=json").await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["meta"]["statuscode"], 200);
    let board = body["ocs"]["data"][0]["id"].as_u64().unwrap();
    let (_, body) = ocs_get(&running, "bob", &format!("/boards/{board}/stacks?format=json")).await;
    assert_eq!(body["ocs"]["data"][0]["cards"][0]["title"], "Validate the budget");
    let (status, body) = ocs_get(&running, "carol", &format!("/boards/{board}?format=json")).await;
    assert_eq!((status, body["ocs"]["meta"]["message"].clone()), (403, json!("Permission denied")));
    let response = running
        .as_user("GET", "bob", "/ocs/v2.php/apps/deck/api/v1.0/boards")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 412, "OCS routes need the OCS-APIRequest header");
}

#[tokio::test]
async fn the_pretty_url_prefix_and_unauthenticated_calls() {
    let running = start(DECK).await;
    let (status, boards) = json_of(
        running.as_user("GET", "alice", "/apps/deck/api/v1.0/boards").send().await.unwrap(),
    )
    .await;
    assert_eq!((status, boards[0]["title"].clone()), (200, json!("Apollo")));
    let response = running.http.get(running.url(&format!("{API}/boards"))).send().await.unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!((status, body["message"].clone()), (401, json!("Current user is not logged in")));
}

/// A Nextcloud-audience access token for `uid`, minted by the fake's key.
fn bearer(running: &Running, uid: &str) -> String {
    let shared = &running.fake.shared;
    let now = shared.now();
    shared.signer.sign_access_token(&access_token::Claims {
        iss: running.fake.base_url().to_string(),
        sub: uid.to_string(),
        aud: access_token::Audience::One("nextcloud".to_string()),
        exp: now + 900,
        iat: now,
        nbf: None,
        jti: "test".to_string(),
        client_id: "nextcloud".to_string(),
        azp: None,
        preferred_username: None,
        scope: None,
    })
}

#[tokio::test]
async fn bearer_rejection_fault_bites_on_deck_routes_only() {
    let fixture = format!("{DECK}\n[faults]\nbearer_rejected_on = [\"/index.php/apps/deck\"]\n");
    let running = start(&fixture).await;
    let token = bearer(&running, "alice");
    assert_eq!(boards_with_bearer(&running, &token).await, 401, "bearer refused on Deck");
    let user = running.get_with_bearer("/ocs/v2.php/cloud/user?format=json", &token);
    assert_eq!(user.send().await.unwrap().status(), 200, "the same token works on OCS");
    let response = running
        .http
        .get(running.url(&format!("{API}/boards")))
        .basic_auth("alice", Some("alice-app-password"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "an app password still works on Deck");

    let running = start(DECK).await;
    let token = bearer(&running, "alice");
    assert_eq!(
        boards_with_bearer(&running, &token).await,
        200,
        "without the fault the bearer works"
    );
}

#[tokio::test]
async fn archived_cards_are_listed_apart_as_deck_does() {
    let running = start(DECK).await;
    let (board, stacks, cards) = layout(&running).await;
    let archived = cards[0][0];
    let path = format!("/boards/{board}/stacks/{}/cards/{archived}", stacks[0]);
    let (status, _) = call(&running, "PUT", "alice", &format!("{path}/archive"), None).await;
    assert_eq!(status, 200);
    let (_, _, cards) = layout(&running).await;
    assert!(!cards.concat().contains(&archived), "GET .../stacks leaves archived cards out");
    let (status, body) =
        call(&running, "GET", "bob", &format!("/boards/{board}/stacks/archived"), None).await;
    assert_eq!(status, 200);
    assert_eq!(body[0]["id"], stacks[0]);
    assert_eq!(body[0]["cards"].as_array().unwrap().len(), 1);
    assert_eq!(body[0]["cards"][0]["id"], archived);
    assert_eq!(body[0]["cards"][0]["archived"], true);
    assert_eq!(body[1]["cards"], json!([]));
    let (status, body) = call(
        &running,
        "PUT",
        "alice",
        &format!("{path}/reorder"),
        Some(json!({"stackId": stacks[1], "order": 0})),
    )
    .await;
    assert_eq!(
        (status, body["message"].clone()),
        (500, json!("Operation not allowed. This card is archived.")),
        "Deck's StatusException"
    );
    let (status, _) =
        call(&running, "GET", "carol", &format!("/boards/{board}/stacks/archived"), None).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn reorder_moves_cards_across_boards_the_user_can_edit_and_no_further() {
    let running = start(&format!(
        r#"{DECK}
[[deck_boards]]
owner = "bob"
title = "Bob's"
shared_read_only = ["alice"]

[[deck_boards.stacks]]
title = "Inbox"

[[deck_boards]]
owner = "alice"
title = "Other"

[[deck_boards.stacks]]
title = "Later"
"#
    ))
    .await;
    let (_, boards) = call(&running, "GET", "alice", "/boards", None).await;
    let id_of = |title: &str| {
        boards.as_array().unwrap().iter().find(|board| board["title"] == title).unwrap()["id"]
            .as_u64()
            .unwrap()
    };
    let (apollo, bobs, other) = (id_of("Apollo"), id_of("Bob's"), id_of("Other"));
    let bobs_board = boards.as_array().unwrap().iter().find(|board| board["id"] == bobs).unwrap();
    assert_eq!(bobs_board["permissions"]["PERMISSION_READ"], true);
    assert_eq!(bobs_board["permissions"]["PERMISSION_EDIT"], false);
    let stack_of = |board: u64| {
        let running = &running;
        async move {
            let (_, stacks) =
                call(running, "GET", "alice", &format!("/boards/{board}/stacks"), None).await;
            stacks[0]["id"].as_u64().unwrap()
        }
    };
    let (todo, inbox, later) =
        (stack_of(apollo).await, stack_of(bobs).await, stack_of(other).await);
    let (_, stacks) =
        call(&running, "GET", "alice", &format!("/boards/{apollo}/stacks"), None).await;
    let card = stacks[0]["cards"][0]["id"].as_u64().unwrap();
    let path = format!("/boards/{apollo}/stacks/{todo}/cards/{card}/reorder");
    let (status, _) =
        call(&running, "PUT", "alice", &path, Some(json!({"stackId": inbox, "order": 0}))).await;
    assert_eq!(status, 403, "a read-only board takes no cards");
    let (status, _) = call(
        &running,
        "POST",
        "alice",
        &format!("/boards/{bobs}/stacks/{inbox}/cards"),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(status, 403, "nor new ones");
    let (status, moved) =
        call(&running, "PUT", "alice", &path, Some(json!({"stackId": later, "order": 0}))).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved[0]["stackId"], later);
    let (_, stacks) =
        call(&running, "GET", "alice", &format!("/boards/{other}/stacks"), None).await;
    assert_eq!(stacks[0]["cards"][0]["id"], card);
}
