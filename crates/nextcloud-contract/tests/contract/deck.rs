//! Deck's REST API (`/index.php/apps/deck/api/v1.0/`, Deck's docs/API.md),
//! the endpoints mcp-nextcloud uses (`nextcloud/deck.rs`): boards with
//! details, stacks with their cards, one card, card creation and reorder.
//! The suite makes its own board and deletes it.

use nextcloud_contract::{Account, Target, require_app};
use serde_json::{Value, json};

const API: &str = "/index.php/apps/deck/api/v1.0";

async fn deck(
    target: &Target,
    account: &Account,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = target
        .as_account(account, method, &format!("{API}{path}"))
        .header("Accept", "application/json")
        .header("OCS-APIRequest", "true");
    if let Some(body) = body {
        request = request.header("Content-Type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// A JSON list, or an object used as one (PHP's json_encode of an array
/// whose keys are not 0..n), as mcp-nextcloud reads it.
fn list(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        Value::Object(items) => items.values().cloned().collect(),
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn boards_stacks_and_cards_as_mcp_nextcloud_uses_them() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let title = target.unique("board");
    let (status, board) =
        deck(&target, &alice, "POST", "/boards", Some(json!({"title": title, "color": "0087c5"})))
            .await;
    require_app(status, "deck", API);
    assert_eq!(status, 200, "{board}");
    let board_id = board["id"].as_u64().expect("a numeric board id");
    assert_eq!(board["title"].as_str(), Some(title.as_str()));
    assert_eq!(board["owner"]["uid"].as_str(), Some(alice.uid.as_str()));
    assert_eq!(board["archived"], false);

    let (status, boards) = deck(&target, &alice, "GET", "/boards?details=true", None).await;
    assert_eq!(status, 200);
    let listed = list(&boards)
        .into_iter()
        .find(|listed| listed["id"].as_u64() == Some(board_id))
        .expect("the new board is listed");
    assert_eq!(listed["permissions"]["PERMISSION_EDIT"], true, "the owner may edit");
    assert!(listed["labels"].is_array(), "details=true carries labels");
    assert_eq!(listed["deletedAt"], 0);

    let (status, stack) = deck(
        &target,
        &alice,
        "POST",
        &format!("/boards/{board_id}/stacks"),
        Some(json!({"title": "To do", "order": 1})),
    )
    .await;
    assert_eq!(status, 200, "{stack}");
    let stack_id = stack["id"].as_u64().expect("a numeric stack id");

    let mut card_ids = Vec::new();
    for name in ["First", "Second"] {
        let (status, card) = deck(
            &target,
            &alice,
            "POST",
            &format!("/boards/{board_id}/stacks/{stack_id}/cards"),
            Some(json!({
                "title": name,
                "type": "plain",
                "order": 999,
                "description": "From the contract suite.",
                "duedate": "2026-03-27T17:00:00+00:00",
            })),
        )
        .await;
        assert_eq!(status, 200, "{card}");
        assert_eq!(card["title"], name);
        assert_eq!(card["type"], "plain");
        assert_eq!(card["stackId"].as_u64(), Some(stack_id));
        assert_eq!(card["archived"], false);
        let due = card["duedate"].as_str().expect("duedate is an ISO 8601 string");
        assert!(due.starts_with("2026-03-27T17:00:00"), "duedate {due}");
        card_ids.push(card["id"].as_u64().expect("a numeric card id"));
    }

    let (status, stacks) =
        deck(&target, &alice, "GET", &format!("/boards/{board_id}/stacks"), None).await;
    assert_eq!(status, 200);
    let stacks = list(&stacks);
    let ours = stacks.iter().find(|stack| stack["id"].as_u64() == Some(stack_id)).expect("stack");
    let cards: Vec<u64> =
        list(&ours["cards"]).iter().filter_map(|card| card["id"].as_u64()).collect();
    for id in &card_ids {
        assert!(cards.contains(id), "the stack lists card {id}: {cards:?}");
    }

    let (status, card) = deck(
        &target,
        &alice,
        "GET",
        &format!("/boards/{board_id}/stacks/{stack_id}/cards/{}", card_ids[1]),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(card["title"], "Second");
    assert_eq!(card["description"], "From the contract suite.");

    let (status, reordered) = deck(
        &target,
        &alice,
        "PUT",
        &format!("/boards/{board_id}/stacks/{stack_id}/cards/{}/reorder", card_ids[1]),
        Some(json!({"stackId": stack_id, "order": 0})),
    )
    .await;
    assert_eq!(status, 200, "{reordered}");
    let moved = list(&reordered)
        .into_iter()
        .find(|card| card["id"].as_u64() == Some(card_ids[1]))
        .expect("reorder answers the stack's cards");
    assert_eq!(moved["order"], 0);

    let (status, _) = deck(&target, &bob, "GET", &format!("/boards/{board_id}"), None).await;
    assert_eq!(status, 403, "a board not shared with bob");
    let (status, _) = deck(&target, &alice, "GET", "/boards/987654321", None).await;
    assert!(status == 403 || status == 404, "a board that does not exist: {status}");

    let (status, deleted) =
        deck(&target, &alice, "DELETE", &format!("/boards/{board_id}"), None).await;
    assert_eq!(status, 200);
    assert!(deleted["deletedAt"].as_i64().is_some_and(|at| at > 0), "deletion is soft: {deleted}");
}
