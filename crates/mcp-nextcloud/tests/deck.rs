//! deck_cards, deck_create_card and deck_move_card against the fake
//! Nextcloud's demo Deck (alice's "Apollo" board, shared with bob, not with
//! carol): filters, ids that circulate from the listing into the actions,
//! read-only boards, unknown ids, archived cards, and Deck refusing token
//! sign-ins while app passwords work.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use mcp_nextcloud::UpstreamAuth;
use serde_json::{Value, json};

fn ok(result: &Value) -> &Value {
    assert_ne!(result["isError"], json!(true), "{result}");
    &result["structuredContent"]
}

/// (stack title, [card titles]) per stack of the first board.
fn layout(result: &Value) -> Vec<(String, Vec<String>)> {
    ok(result)["boards"][0]["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stack| {
            let cards = stack["cards"]
                .as_array()
                .unwrap()
                .iter()
                .map(|card| card["title"].as_str().unwrap().to_string())
                .collect();
            (stack["title"].as_str().unwrap().to_string(), cards)
        })
        .collect()
}

fn card_titles(result: &Value) -> Vec<String> {
    layout(result).into_iter().flat_map(|(_, cards)| cards).collect()
}

/// The ids of the Apollo board as a user sees them.
struct Apollo {
    board: u64,
    /// À faire, En cours, Terminé.
    stacks: [u64; 3],
    budget_card: u64,
    two_factor_card: u64,
}

async fn apollo(stack: &Stack, uid: &str) -> Apollo {
    let result = stack.call_tool(uid, "deck_cards", json!({"board": "Apollo"})).await;
    let board = &ok(&result)["boards"][0];
    let stacks = board["stacks"].as_array().unwrap();
    let stack_id = |index: usize| stacks[index]["id"].as_u64().unwrap();
    let card_id = |index: usize| stacks[0]["cards"][index]["id"].as_u64().unwrap();
    Apollo {
        board: board["id"].as_u64().unwrap(),
        stacks: [stack_id(0), stack_id(1), stack_id(2)],
        budget_card: card_id(0),
        two_factor_card: card_id(1),
    }
}

/// A stack, and the Apollo board's ids as `uid` sees them.
async fn start_apollo(uid: &str) -> (Stack, Apollo) {
    let stack = start(second_token()).await;
    let ids = apollo(&stack, uid).await;
    (stack, ids)
}

const TWO_FACTOR: &str = "Activer l'authentification à deux facteurs";
const BUDGET: &str = "Valider le budget prévisionnel";

#[tokio::test]
async fn the_board_comes_with_its_stacks_cards_and_ids() {
    let stack = start(second_token()).await;
    let result = stack.call_tool("alice", "deck_cards", json!({})).await;
    assert_eq!(
        layout(&result),
        [
            ("À faire".to_string(), vec![BUDGET.to_string(), TWO_FACTOR.to_string()]),
            ("En cours".to_string(), vec!["Migrer les 850 GB de données".to_string()]),
            ("Terminé".to_string(), vec!["Kick-off du projet".to_string()]),
        ]
    );
    let board = &ok(&result)["boards"][0];
    assert_eq!(board["title"], "Apollo");
    assert_eq!(board["can_edit"], true);
    assert_eq!(board["archived"], false);
    let labels: Vec<&str> = board["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|label| label["title"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Budget", "Urgent"]);
    let card = &board["stacks"][0]["cards"][0];
    assert_eq!(card["board_id"], board["id"]);
    assert_eq!(card["stack_id"], board["stacks"][0]["id"]);
    assert_eq!(card["duedate"], "2026-03-27T17:00:00Z");
    assert_eq!(card["description"], "40 000 € — voir CR-reunion-mars.docx, §3.");
    assert_eq!(card["description_truncated"], false);
    assert_eq!(card["labels"][0]["title"], "Budget");
    assert_eq!(card["assigned_users"], json!([{"uid": "alice", "display_name": "Alice Martin"}]));
    assert_eq!(card["archived"], false);
    assert_eq!(ok(&result)["truncated"], false);
    let text = text_of(&result);
    let board_id = board["id"].as_u64().unwrap();
    assert!(text.contains(&format!("Board \"Apollo\" (board_id {board_id}, can edit)")), "{text}");
    assert!(
        text.contains(&format!(
            "card_id {}: \"{BUDGET}\"; due 2026-03-27T17:00:00Z; labels: Budget; assigned: alice",
            card["id"]
        )),
        "{text}"
    );
}

#[tokio::test]
async fn cards_filter_by_stack_label_assignee_text_and_due_date() {
    let (stack, ids) = start_apollo("alice").await;
    let cases = [
        (json!({"stack": "en cours"}), vec!["Migrer les 850 GB de données"]),
        (json!({"stack": ids.stacks[2]}), vec!["Kick-off du projet"]),
        (json!({"label": "urgent"}), vec![TWO_FACTOR]),
        (json!({"assigned_to": "bob"}), vec![TWO_FACTOR]),
        (json!({"assigned_to": "Alice Martin"}), vec![BUDGET]),
        (json!({"text": "CR-REUNION"}), vec![BUDGET]),
        (json!({"text": "kick-off"}), vec!["Kick-off du projet"]),
        (json!({"due_before": "2026-03-28T00:00:00Z"}), vec![BUDGET]),
        (json!({"due_after": "2026-03-27T17:00:00Z"}), vec![BUDGET]),
        (json!({"due_after": "2026-03-27T17:00:01Z"}), vec![]),
        (json!({"due_before": "2026-03-27T18:00:00+02:00"}), vec![]),
        (json!({"board": ids.board, "label": "Budget", "stack": "À faire"}), vec![BUDGET]),
    ];
    for (arguments, expected) in cases {
        let result = stack.call_tool("alice", "deck_cards", arguments.clone()).await;
        assert_eq!(card_titles(&result), expected, "{arguments}");
    }
    let stack_only = stack.call_tool("alice", "deck_cards", json!({"stack": "Terminé"})).await;
    assert_eq!(layout(&stack_only).len(), 1, "a stack filter shows only that stack");
    let none = stack.call_tool("alice", "deck_cards", json!({"label": "Later"})).await;
    assert!(text_of(&none).contains("No card matches the filters"), "{}", text_of(&none));
    assert_eq!(layout(&none).len(), 3, "stacks stay listed: they are where cards can go");
}

#[tokio::test]
async fn the_card_limit_truncates() {
    let stack = start(second_token()).await;
    let result = stack.call_tool("alice", "deck_cards", json!({"limit": 2})).await;
    assert_eq!(card_titles(&result), [BUDGET, TWO_FACTOR]);
    assert_eq!(ok(&result)["truncated"], true);
    assert!(text_of(&result).contains("More cards match than the 2 shown"));
}

#[tokio::test]
async fn a_board_is_seen_by_its_owner_and_those_it_is_shared_with_only() {
    let stack = start(second_token()).await;
    let bob = stack.call_tool("bob", "deck_cards", json!({"board": "apollo"})).await;
    assert_eq!(card_titles(&bob).len(), 4);
    assert_eq!(ok(&bob)["boards"][0]["can_edit"], true);
    let carol = stack.call_tool("carol", "deck_cards", json!({})).await;
    assert_eq!(ok(&carol)["boards"], json!([]));
    assert!(text_of(&carol).contains("no Deck boards"));
    let carol = stack.call_tool("carol", "deck_cards", json!({"board": "Apollo"})).await;
    assert_eq!(failure_kind(&carol), Some("not_found"));
    let ids = apollo(&stack, "alice").await;
    let carol = stack.call_tool("carol", "deck_cards", json!({"board": ids.board})).await;
    assert_eq!(failure_kind(&carol), Some("not_found"));
}

#[tokio::test]
async fn a_created_card_is_listed_where_it_was_put() {
    let (stack, ids) = start_apollo("bob").await;
    let result = stack
        .call_tool(
            "bob",
            "deck_create_card",
            json!({
                "board_id": ids.board,
                "stack_id": ids.stacks[1],
                "title": "  Préparer la démo  ",
                "description": "Salle B, 10 personnes.",
                "duedate": "2026-04-02T09:30:00+02:00"
            }),
        )
        .await;
    let card = ok(&result).clone();
    assert_eq!(card["title"], "Préparer la démo");
    assert_eq!(card["board_id"], ids.board);
    assert_eq!(card["stack_id"], ids.stacks[1]);
    assert_eq!(card["duedate"], "2026-04-02T07:30:00Z");
    assert_eq!(card["description"], "Salle B, 10 personnes.");
    let card_id = card["id"].as_u64().unwrap();
    assert!(text_of(&result).contains(&format!("Created card_id {card_id}: \"Préparer la démo\"")));
    assert!(text_of(&result).contains("in stack \"En cours\""));
    let listed = stack.call_tool("alice", "deck_cards", json!({"stack": "En cours"})).await;
    assert_eq!(card_titles(&listed), ["Migrer les 850 GB de données", "Préparer la démo"]);
    let listed_card = &ok(&listed)["boards"][0]["stacks"][0]["cards"][1];
    assert_eq!(listed_card["id"], card_id);
    assert_eq!(listed_card["duedate"], "2026-04-02T07:30:00Z");
    // Not idempotent: the same call makes a second card.
    let again = stack
        .call_tool(
            "bob",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[1], "title": "Préparer la démo"}),
        )
        .await;
    assert_ne!(ok(&again)["id"], card_id);
}

#[tokio::test]
async fn a_moved_card_is_listed_in_its_new_stack() {
    let (stack, ids) = start_apollo("alice").await;
    let arguments =
        json!({"card_id": ids.budget_card, "board_id": ids.board, "stack_id": ids.stacks[2]});
    let result = stack.call_tool("alice", "deck_move_card", arguments.clone()).await;
    let card = ok(&result);
    assert_eq!(card["id"], ids.budget_card);
    assert_eq!(card["stack_id"], ids.stacks[2]);
    assert_eq!(card["previous_stack_id"], ids.stacks[0]);
    assert_eq!(card["order"], 0, "the top of the stack by default");
    assert_eq!(card["title"], BUDGET);
    assert!(text_of(&result).contains("to stack \"Terminé\""), "{}", text_of(&result));
    assert!(text_of(&result).contains("at the top"), "{}", text_of(&result));
    let listed = stack.call_tool("bob", "deck_cards", json!({})).await;
    assert_eq!(
        layout(&listed),
        [
            ("À faire".to_string(), vec![TWO_FACTOR.to_string()]),
            ("En cours".to_string(), vec!["Migrer les 850 GB de données".to_string()]),
            ("Terminé".to_string(), vec![BUDGET.to_string(), "Kick-off du projet".to_string()]),
        ]
    );
    // Idempotent: the same move again leaves the board as it is.
    let again = stack.call_tool("alice", "deck_move_card", arguments).await;
    assert_eq!(ok(&again)["stack_id"], ids.stacks[2]);
    assert_eq!(ok(&again)["order"], 0);
    assert_eq!(layout(&stack.call_tool("bob", "deck_cards", json!({})).await), layout(&listed));
    // An order past the end puts the card last.
    let last = stack
        .call_tool(
            "alice",
            "deck_move_card",
            json!({"card_id": ids.two_factor_card, "board_id": ids.board, "stack_id": ids.stacks[2], "order": 100}),
        )
        .await;
    assert_eq!(ok(&last)["order"], 2);
    assert_eq!(
        card_titles(&stack.call_tool("alice", "deck_cards", json!({"stack": "Terminé"})).await),
        [BUDGET, "Kick-off du projet", TWO_FACTOR]
    );
}

#[tokio::test]
async fn carol_cannot_create_or_move_on_a_board_not_shared_with_her() {
    let (stack, ids) = start_apollo("alice").await;
    let create = stack
        .call_tool(
            "carol",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "Intrusion"}),
        )
        .await;
    assert_failure(&create, "not_found", "not shared with them");
    let moved = stack
        .call_tool(
            "carol",
            "deck_move_card",
            json!({"card_id": ids.budget_card, "board_id": ids.board, "stack_id": ids.stacks[2]}),
        )
        .await;
    assert_eq!(failure_kind(&moved), Some("not_found"));
    assert_eq!(card_titles(&stack.call_tool("alice", "deck_cards", json!({})).await).len(), 4);
}

/// Bob's own board "Bob's", shared read-only with alice; returns its
/// (board id, stack id).
fn add_read_only_board(stack: &Stack) -> (u64, u64) {
    let mut world = stack.fake.shared.world();
    let board = world.deck.insert_board("bob", "Bob's", "0082c9", 1);
    world.deck.boards.get_mut(&board).unwrap().shared_read_only.push("alice".into());
    let inbox = world.deck.insert_stack(board, "Inbox", 0, 1);
    world.deck.insert_card(inbox, "Bob's card", "plain", 0, "", None, "bob", 1);
    (board, inbox)
}

#[tokio::test]
async fn a_read_only_board_is_listed_but_takes_no_cards() {
    let (stack, ids) = start_apollo("alice").await;
    let (board, inbox) = add_read_only_board(&stack);
    let listed = stack.call_tool("alice", "deck_cards", json!({"board": "Bob's"})).await;
    assert_eq!(ok(&listed)["boards"][0]["can_edit"], false);
    assert!(text_of(&listed).contains("read-only"));
    let create = stack
        .call_tool(
            "alice",
            "deck_create_card",
            json!({"board_id": board, "stack_id": inbox, "title": "Mine"}),
        )
        .await;
    assert_failure(&create, "refused_by_nextcloud", "edit rights");
    assert!(text_of(&create).contains("Bob's"), "{}", text_of(&create));
    let moved = stack
        .call_tool(
            "alice",
            "deck_move_card",
            json!({"card_id": ids.budget_card, "board_id": board, "stack_id": inbox}),
        )
        .await;
    assert_failure(&moved, "refused_by_nextcloud", "edit rights");
    assert_eq!(
        card_titles(&stack.call_tool("alice", "deck_cards", json!({"board": board})).await),
        ["Bob's card"]
    );
}

#[tokio::test]
async fn a_card_moves_to_another_board_the_user_can_edit() {
    let (stack, ids) = start_apollo("alice").await;
    let (other, later) = {
        let mut world = stack.fake.shared.world();
        let board = world.deck.insert_board("alice", "Perso", "0082c9", 1);
        (board, world.deck.insert_stack(board, "Plus tard", 0, 1))
    };
    let moved = stack
        .call_tool(
            "alice",
            "deck_move_card",
            json!({"card_id": ids.two_factor_card, "board_id": other, "stack_id": later}),
        )
        .await;
    assert_eq!(ok(&moved)["board_id"], other);
    assert_eq!(
        card_titles(&stack.call_tool("alice", "deck_cards", json!({"board": "Perso"})).await),
        [TWO_FACTOR]
    );
}

#[tokio::test]
async fn unknown_ids_are_not_found_with_what_to_do() {
    let (stack, ids) = start_apollo("alice").await;
    let cases = [
        (
            "deck_move_card",
            json!({"card_id": 99999, "board_id": ids.board, "stack_id": ids.stacks[1]}),
            "Card 99999 is not visible",
        ),
        (
            "deck_move_card",
            json!({"card_id": ids.budget_card, "board_id": ids.board, "stack_id": 99999}),
            "Its stacks are: \"À faire\"",
        ),
        (
            "deck_move_card",
            json!({"card_id": ids.budget_card, "board_id": 99999, "stack_id": ids.stacks[1]}),
            "Board 99999 is not visible",
        ),
        (
            "deck_create_card",
            json!({"board_id": 99999, "stack_id": ids.stacks[1], "title": "x"}),
            "deck_cards",
        ),
        (
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": 99999, "title": "x"}),
            "stack_id",
        ),
        ("deck_cards", json!({"board": "Gemini"}), "Their boards are: \"Apollo\""),
        ("deck_cards", json!({"stack": "Backlog"}), "\"En cours\" (stack_id"),
    ];
    for (tool, arguments, hint) in cases {
        let result = stack.call_tool("alice", tool, arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("not_found"), "{tool} {arguments}: {result}");
        assert!(text_of(&result).contains(hint), "{tool} {arguments}: {}", text_of(&result));
    }
    // A stack of another board is not taken for one of this board.
    let (_, inbox) = add_read_only_board(&stack);
    let result = stack
        .call_tool(
            "alice",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": inbox, "title": "x"}),
        )
        .await;
    assert_eq!(failure_kind(&result), Some("not_found"));
}

#[tokio::test]
async fn bad_arguments_are_the_models_to_fix() {
    let (stack, ids) = start_apollo("alice").await;
    let long_title = "x".repeat(256);
    let cases = [
        (
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "   "}),
        ),
        (
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": long_title}),
        ),
        (
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "x", "duedate": "tomorrow"}),
        ),
        ("deck_create_card", json!({"board_id": ids.board, "title": "x"})),
        (
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "x", "labels": ["Urgent"]}),
        ),
        (
            "deck_move_card",
            json!({"card_id": ids.budget_card, "board_id": ids.board, "stack_id": ids.stacks[1], "order": -1}),
        ),
        (
            "deck_move_card",
            json!({"card_id": "budget", "board_id": ids.board, "stack_id": ids.stacks[1]}),
        ),
        ("deck_cards", json!({"due_before": "next week"})),
        ("deck_cards", json!({"limit": 0})),
        ("deck_cards", json!({"board": -1})),
        ("deck_cards", json!({"boards": "Apollo"})),
    ];
    for (tool, arguments) in cases {
        let result = stack.call_tool("alice", tool, arguments.clone()).await;
        assert_eq!(
            failure_kind(&result),
            Some("invalid_arguments"),
            "{tool} {arguments}: {result}"
        );
    }
    assert_eq!(
        card_titles(&stack.call_tool("alice", "deck_cards", json!({})).await).len(),
        4,
        "nothing was created"
    );
}

#[tokio::test]
async fn archived_cards_are_hidden_unless_asked_for_and_are_not_moved() {
    let (stack, ids) = start_apollo("alice").await;
    stack.fake.shared.world().deck.cards.get_mut(&ids.two_factor_card).unwrap().archived = true;
    let default = stack.call_tool("alice", "deck_cards", json!({})).await;
    assert!(!card_titles(&default).contains(&TWO_FACTOR.to_string()));
    let all = stack.call_tool("alice", "deck_cards", json!({"include_archived": true})).await;
    let archived = &ok(&all)["boards"][0]["stacks"][0]["cards"][1];
    assert_eq!(
        (archived["title"].as_str(), &archived["archived"]),
        (Some(TWO_FACTOR), &json!(true))
    );
    assert!(text_of(&all).contains("; archived"));
    let moved = stack
        .call_tool(
            "alice",
            "deck_move_card",
            json!({"card_id": ids.two_factor_card, "board_id": ids.board, "stack_id": ids.stacks[2]}),
        )
        .await;
    assert_failure(&moved, "conflict", "unarchive");
}

#[tokio::test]
async fn deck_refusing_token_sign_in_is_explained_and_app_passwords_work() {
    let bearer = start(second_token()).await;
    bearer.fake.shared.world().faults.bearer_rejected_on.push("/index.php/apps/deck".into());
    for (tool, arguments) in [
        ("deck_cards", json!({})),
        ("deck_create_card", json!({"board_id": 1, "stack_id": 4, "title": "x"})),
        ("deck_move_card", json!({"card_id": 5, "board_id": 1, "stack_id": 4})),
    ] {
        let result = bearer.call_tool("alice", tool, arguments).await;
        assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"), "{tool}");
        let message = text_of(&result);
        assert!(message.contains("Deck can't be reached with the current sign-in"), "{message}");
        assert!(message.contains("app-password mode"), "{message}");
        assert!(!message.contains("index.php") && !message.contains("127.0.0.1"), "{message}");
    }

    let app_password = start(UpstreamAuth::AppPassword).await;
    app_password.fake.shared.world().faults.bearer_rejected_on.push("/index.php/apps/deck".into());
    let ids = apollo(&app_password, "alice").await;
    let created = app_password
        .call_tool(
            "alice",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "Par mot de passe d'application"}),
        )
        .await;
    let card_id = ok(&created)["id"].as_u64().unwrap();
    let moved = app_password
        .call_tool(
            "alice",
            "deck_move_card",
            json!({"card_id": card_id, "board_id": ids.board, "stack_id": ids.stacks[2]}),
        )
        .await;
    assert_eq!(ok(&moved)["stack_id"], ids.stacks[2]);
    let listed = app_password.call_tool("alice", "deck_cards", json!({"stack": "Terminé"})).await;
    assert_eq!(card_titles(&listed)[0], "Par mot de passe d'application");
}

#[tokio::test]
async fn deck_down_is_unreachable_not_an_empty_board() {
    let stack = start(second_token()).await;
    stack.fail_route("/index.php/apps/deck", None, 503, None);
    let result = stack.call_tool("alice", "deck_cards", json!({})).await;
    assert_eq!(failure_kind(&result), Some("nextcloud_unreachable"));
    assert!(text_of(&result).contains("do not guess"));
}

#[tokio::test]
async fn the_deck_tools_declare_what_they_do() {
    let stack = start(second_token()).await;
    let result = stack.rpc_result(&stack.headers_for("alice"), "tools/list", json!({})).await;
    let tool = |name: &str| {
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tool("deck_cards")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("contacts_search")["annotations"]["readOnlyHint"], true);
    for (name, idempotent) in [("deck_create_card", false), ("deck_move_card", true)] {
        let annotations = &tool(name)["annotations"];
        assert_eq!(annotations["readOnlyHint"], false, "{name}");
        assert_eq!(annotations["destructiveHint"], false, "{name}");
        assert_eq!(annotations["idempotentHint"], idempotent, "{name}");
        assert_eq!(tool(name)["inputSchema"]["additionalProperties"], false, "{name}");
    }
    assert_eq!(
        tool("deck_move_card")["inputSchema"]["required"],
        json!(["card_id", "board_id", "stack_id"])
    );
}

#[tokio::test]
async fn long_descriptions_are_cut_but_still_searched() {
    let (stack, ids) = start_apollo("alice").await;
    let description = format!("{} aiguille", "foin ".repeat(120));
    let created = stack
        .call_tool(
            "alice",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "Meule", "description": description}),
        )
        .await;
    let card = ok(&created);
    assert_eq!(card["description_truncated"], true);
    let shown = card["description"].as_str().unwrap();
    assert!(shown.ends_with('…') && shown.chars().count() <= 501, "{shown}");
    assert!(!shown.contains("aiguille"));
    let found = stack.call_tool("alice", "deck_cards", json!({"text": "AIGUILLE"})).await;
    assert_eq!(card_titles(&found), ["Meule"]);
}

#[tokio::test]
async fn archived_boards_are_hidden_unless_asked_for() {
    let (stack, ids) = start_apollo("alice").await;
    stack.fake.shared.world().deck.boards.get_mut(&ids.board).unwrap().archived = true;
    let hidden = stack.call_tool("bob", "deck_cards", json!({})).await;
    assert_eq!(ok(&hidden)["boards"], json!([]));
    assert!(text_of(&hidden).contains("include_archived=true"), "{}", text_of(&hidden));
    let named = stack.call_tool("bob", "deck_cards", json!({"board": "Apollo"})).await;
    assert_failure(&named, "not_found", "is archived");
    let shown = stack.call_tool("bob", "deck_cards", json!({"include_archived": true})).await;
    assert_eq!(ok(&shown)["boards"][0]["archived"], true);
    let created = stack
        .call_tool(
            "bob",
            "deck_create_card",
            json!({"board_id": ids.board, "stack_id": ids.stacks[0], "title": "x"}),
        )
        .await;
    assert_eq!(failure_kind(&created), Some("conflict"));
}
