//! calendar_events and calendar_create_event against the fake Nextcloud's
//! demo world: the weekly stand-up expanded across the DST change with its
//! exceptions, what each user sees, filters, failures that say what to do
//! next, created events read back, and CalDAV refusing bearer sign-ins
//! (fixed by app-password mode).

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use serde_json::{Value, json};

fn occurrences(result: &Value) -> Vec<Value> {
    assert_eq!(failure_kind(result), None, "{result}");
    result["structuredContent"]["occurrences"].as_array().unwrap().clone()
}

/// `start summary` for each occurrence.
fn agenda(result: &Value) -> Vec<String> {
    occurrences(result)
        .iter()
        .map(|occurrence| {
            format!(
                "{} {}",
                occurrence["start"].as_str().unwrap(),
                occurrence["summary"].as_str().unwrap()
            )
        })
        .collect()
}

fn assert_no_infrastructure(message: &str) {
    for detail in ["127.0.0.1", "remote.php", "HTTP/1.1", "Sabre", "401", "403", "404"] {
        assert!(!message.contains(detail), "{detail} in: {message}");
    }
}

const MARCH_APRIL: (&str, &str) = ("2026-03-01", "2026-04-30");

async fn alice_events(stack: &Stack, arguments: Value) -> Value {
    stack.call_tool("alice", "calendar_events", arguments).await
}

async fn alice_creates(stack: &Stack, arguments: Value) -> Value {
    stack.call_tool("alice", "calendar_create_event", arguments).await
}

#[tokio::test]
async fn the_demo_standup_stays_at_nine_berlin_time_across_the_dst_change() {
    let stack = start(second_token()).await;
    let result = alice_events(
        &stack,
        json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "time_zone": "Europe/Paris"}),
    )
    .await;
    assert_eq!(
        agenda(&result),
        [
            "2026-03-09T09:00:00+01:00 Stand-up Apollo",
            "2026-03-16T09:00:00+01:00 Stand-up Apollo",
            // 2026-03-23 is cancelled (EXDATE).
            "2026-03-26T13:00:00Z Revue du budget prévisionnel",
            "2026-03-30T09:00:00+02:00 Stand-up Apollo",
            "2026-04-06T10:00:00+02:00 Stand-up Apollo (décalé)",
            "2026-04-13T09:00:00+02:00 Stand-up Apollo",
            "2026-04-20T09:00:00+02:00 Stand-up Apollo",
            "2026-04-27T09:00:00+02:00 Stand-up Apollo",
        ]
    );
    let all = occurrences(&result);
    let standups: Vec<&Value> =
        all.iter().filter(|occurrence| occurrence["uid"] == "weekly-standup@tamebi.demo").collect();
    assert_eq!(standups.len(), 7);
    for standup in &standups {
        assert_eq!(standup["time_zone"], "Europe/Berlin");
        assert_eq!(standup["recurring"], true);
        assert_eq!(standup["all_day"], false);
        assert_eq!(standup["calendar"]["uri"], "personal");
        assert_eq!(standup["calendar"]["name"], "Personnel");
    }
    // The exact instants: 08:00Z before the change, 07:00Z after.
    let utc: Vec<String> = standups
        .iter()
        .map(|standup| {
            chrono::DateTime::parse_from_rfc3339(standup["start"].as_str().unwrap())
                .unwrap()
                .to_utc()
                .format("%m-%dT%H:%MZ")
                .to_string()
        })
        .collect();
    assert_eq!(
        utc,
        [
            "03-09T08:00Z",
            "03-16T08:00Z",
            "03-30T07:00Z",
            "04-06T08:00Z",
            "04-13T07:00Z",
            "04-20T07:00Z",
            "04-27T07:00Z"
        ]
    );
    let first = standups[0];
    assert_eq!(first["end"], "2026-03-09T09:15:00+01:00");
    assert_eq!(first["location"], "Salle Écluse");
    assert_eq!(first["description"], "Point hebdomadaire de l'équipe Apollo.");
    assert_eq!(first["recurrence_id"], "2026-03-09T09:00:00+01:00");
    let moved = standups[3];
    assert_eq!(moved["recurrence_id"], "2026-04-06T09:00:00+02:00");
    assert_eq!(moved["end"], "2026-04-06T10:15:00+02:00");
    let budget = &all[2];
    assert_eq!(budget["time_zone"], "UTC");
    assert_eq!(budget["recurring"], false);
    assert!(budget.get("recurrence_id").is_none());
    assert_eq!(result["structuredContent"]["truncated"], false);
    assert_eq!(
        result["structuredContent"]["calendars"],
        json!([{"uri": "personal", "name": "Personnel", "color": "#0082c9", "writable": true}])
    );
    assert_eq!(
        result["structuredContent"]["range"],
        json!({"start": "2026-03-01T00:00:00+01:00", "end": "2026-05-01T00:00:00+02:00", "time_zone": "Europe/Paris"})
    );
    // The text alone is enough to answer from.
    let text = text_of(&result);
    assert!(text.starts_with("8 event occurrences between"), "{text}");
    assert!(
        text.contains("- Mon 2026-03-30 09:00–09:15 (Europe/Berlin, UTC+02:00): Stand-up Apollo @ Salle Écluse — Personnel [personal]; uid weekly-standup@tamebi.demo; recurring"),
        "{text}"
    );
    assert!(!text.contains("2026-03-23"), "{text}");
    assert!(
        text.contains("Revue du budget prévisionnel — Personnel [personal]; uid budget-review@tamebi.demo\n  Valider les 40 000 € avec Chloé."),
        "descriptions are in the text too: {text}"
    );
}

#[tokio::test]
async fn another_users_events_never_appear() {
    let stack = start(second_token()).await;
    let bob = stack
        .call_tool("bob", "calendar_events", json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1}))
        .await;
    assert_eq!(agenda(&bob), ["2026-03-18T15:00:00Z Dentist"]);
    let bob_personal = stack
        .call_tool(
            "bob",
            "calendar_events",
            json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "calendar": "personal", "query": "apollo"}),
        )
        .await;
    assert!(occurrences(&bob_personal).is_empty());
    assert!(
        text_of(&bob_personal).contains("No events matching \"apollo\""),
        "{}",
        text_of(&bob_personal)
    );
    let alice = alice_events(&stack, json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1})).await;
    assert!(!agenda(&alice).iter().any(|line| line.contains("Dentist")));
    // A path to another user's calendar is not a calendar uri.
    let sneaky = stack
        .call_tool(
            "bob",
            "calendar_events",
            json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "calendar": "../alice/personal"}),
        )
        .await;
    assert_eq!(failure_kind(&sneaky), Some("invalid_arguments"));
    // Carol has only the calendar Nextcloud creates on first login.
    let carol = stack
        .call_tool(
            "carol",
            "calendar_events",
            json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1}),
        )
        .await;
    assert!(occurrences(&carol).is_empty());
    assert!(text_of(&carol).contains("No events between"), "{}", text_of(&carol));
}

#[tokio::test]
async fn ranges_and_text_filters_narrow_the_agenda() {
    let stack = start(second_token()).await;
    let budget = alice_events(
        &stack,
        json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "query": "BUDGET"}),
    )
    .await;
    assert_eq!(agenda(&budget), ["2026-03-26T13:00:00Z Revue du budget prévisionnel"]);
    assert_eq!(
        occurrences(&budget)[0]["description"],
        "Valider les 40 000 € avec Chloé.",
        "descriptions match and are reported"
    );
    // The location is searched too; the moved occurrence has none.
    let ecluse = alice_events(
        &stack,
        json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "query": "écluse"}),
    )
    .await;
    assert_eq!(occurrences(&ecluse).len(), 6);
    // A date is a whole day in time_zone.
    let one_day = alice_events(
        &stack,
        json!({"start": "2026-03-16", "end": "2026-03-16", "time_zone": "Europe/Berlin"}),
    )
    .await;
    assert_eq!(agenda(&one_day), ["2026-03-16T09:00:00+01:00 Stand-up Apollo"]);
    // An occurrence overlapping the start of the range counts.
    let overlapping = alice_events(
        &stack,
        json!({"start": "2026-03-09T08:10:00Z", "end": "2026-03-09T10:00:00Z"}),
    )
    .await;
    assert_eq!(agenda(&overlapping), ["2026-03-09T09:00:00+01:00 Stand-up Apollo"]);
    let empty = alice_events(
        &stack,
        json!({"start": "2026-03-23T00:00:00+01:00", "end": "2026-03-24T00:00:00+01:00"}),
    )
    .await;
    assert!(occurrences(&empty).is_empty(), "the cancelled stand-up stays cancelled");
    let limited =
        alice_events(&stack, json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "limit": 2}))
            .await;
    assert_eq!(occurrences(&limited).len(), 2);
    assert_eq!(limited["structuredContent"]["truncated"], true);
    assert!(text_of(&limited).contains("More than 2 occurrences"), "{}", text_of(&limited));
}

#[tokio::test]
async fn invalid_ranges_and_arguments_are_explained() {
    let stack = start(second_token()).await;
    let cases = [
        (json!({"start": "2026-04-01", "end": "2026-03-01"}), "end must be after start"),
        (json!({"start": "2026-01-01", "end": "2027-06-01"}), "longer than 366 days"),
        (json!({"start": "next monday", "end": "2026-03-01"}), "not a date or time"),
        (json!({"start": "2026-03-01"}), "input schema"),
        (json!({"start": "2026-03-01", "end": "2026-03-02", "time_zone": "Paris"}), "IANA"),
        (json!({"start": "2026-03-01", "end": "2026-03-02", "limit": 0}), "limit"),
        (json!({"start": "2026-03-01", "end": "2026-03-02", "limit": 1000}), "limit"),
        (json!({"start": "2026-03-01", "end": "2026-03-02", "from": "x"}), "input schema"),
    ];
    for (arguments, expected) in cases {
        let result = alice_events(&stack, arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("invalid_arguments"), "{arguments}: {result}");
        let message = text_of(&result);
        assert!(message.contains(expected), "{arguments}: {message}");
        assert_no_infrastructure(&message);
    }
}

#[tokio::test]
async fn an_unknown_calendar_is_not_found_and_names_the_real_ones() {
    let stack = start(second_token()).await;
    let result = alice_events(
        &stack,
        json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "calendar": "work"}),
    )
    .await;
    assert_eq!(failure_kind(&result), Some("not_found"));
    let message = text_of(&result);
    assert!(message.contains("no calendar \"work\""), "{message}");
    assert!(message.contains("\"personal\" (Personnel)"), "{message}");
    assert!(message.contains("Call again with one of these uris"), "{message}");
    let create = alice_creates(
        &stack,
        json!({"summary": "x", "start": "2026-04-14", "end": "2026-04-14", "calendar": "work"}),
    )
    .await;
    assert_eq!(failure_kind(&create), Some("not_found"));
}

#[tokio::test]
async fn a_created_event_is_listed_as_it_was_created() {
    let stack = start(second_token()).await;
    let created = alice_creates(
        &stack,
        json!({
            "summary": "Revue Apollo, lot 2",
            "start": "2026-04-14T10:00:00",
            "end": "2026-04-14T11:30",
            "time_zone": "Europe/Berlin",
            "location": "Salle Écluse",
            "description": "Ordre du jour :\n- budget\n- planning"
        }),
    )
    .await;
    assert_eq!(failure_kind(&created), None, "{created}");
    let event = &created["structuredContent"];
    let uid = event["uid"].as_str().unwrap().to_string();
    assert_eq!(event["calendar"]["uri"], "personal", "the default calendar");
    assert_eq!(event["href"], format!("/remote.php/dav/calendars/alice/personal/{uid}.ics"));
    assert_eq!(event["start"], "2026-04-14T10:00:00+02:00");
    assert_eq!(event["end"], "2026-04-14T11:30:00+02:00");
    assert_eq!(event["time_zone"], "Europe/Berlin");
    assert_eq!(event["all_day"], false);
    assert!(text_of(&created).contains(&uid), "{}", text_of(&created));
    // Stored in Berlin time with its VTIMEZONE, as clients expect.
    {
        let world = stack.fake.shared.world();
        let calendar = world.calendars.get("alice", "personal").unwrap();
        let stored = &calendar.members[&format!("{uid}.ics")].data.text;
        assert!(stored.contains("DTSTART;TZID=Europe/Berlin:20260414T100000"), "{stored}");
        assert!(stored.contains("BEGIN:VTIMEZONE"), "{stored}");
    }
    let listed = alice_events(
        &stack,
        json!({"start": "2026-04-14", "end": "2026-04-14", "time_zone": "Europe/Berlin"}),
    )
    .await;
    let found = occurrences(&listed);
    assert_eq!(found.len(), 1, "{listed}");
    assert_eq!(found[0]["uid"], uid.as_str());
    assert_eq!(found[0]["summary"], "Revue Apollo, lot 2");
    assert_eq!(found[0]["start"], event["start"]);
    assert_eq!(found[0]["end"], event["end"]);
    assert_eq!(found[0]["time_zone"], "Europe/Berlin");
    assert_eq!(found[0]["location"], "Salle Écluse");
    assert_eq!(found[0]["description"], "Ordre du jour :\n- budget\n- planning");
    assert_eq!(found[0]["recurring"], false);
    // An all-day event: dates in, dates out, end inclusive.
    let holiday = alice_creates(
        &stack,
        json!({"summary": "Congés", "start": "2026-04-20", "end": "2026-04-21"}),
    )
    .await;
    assert_eq!(holiday["structuredContent"]["end"], "2026-04-21");
    let listed = alice_events(&stack, json!({"start": "2026-04-21", "end": "2026-04-21"})).await;
    let holidays: Vec<Value> =
        occurrences(&listed).into_iter().filter(|found| found["summary"] == "Congés").collect();
    assert_eq!(holidays.len(), 1);
    assert_eq!(holidays[0]["start"], "2026-04-20");
    assert_eq!(holidays[0]["end"], "2026-04-21");
    assert_eq!(holidays[0]["all_day"], true);
    assert_eq!(holidays[0]["time_zone"], Value::Null);
    // Not idempotent: the same call twice makes two events.
    let again = alice_creates(
        &stack,
        json!({"summary": "Congés", "start": "2026-04-20", "end": "2026-04-21"}),
    )
    .await;
    assert_ne!(again["structuredContent"]["uid"], holiday["structuredContent"]["uid"]);
    // Bob sees none of it.
    let bob = stack
        .call_tool("bob", "calendar_events", json!({"start": "2026-04-14", "end": "2026-04-21"}))
        .await;
    assert!(occurrences(&bob).is_empty());
}

#[tokio::test]
async fn an_event_with_only_an_offset_is_stored_in_utc() {
    let stack = start(second_token()).await;
    let created = stack
        .call_tool(
            "bob",
            "calendar_create_event",
            json!({"summary": "Call", "start": "2026-04-14T10:00:00+02:00", "end": "2026-04-14T10:30:00+02:00", "calendar": "personal"}),
        )
        .await;
    assert_eq!(created["structuredContent"]["start"], "2026-04-14T08:00:00Z");
    assert_eq!(created["structuredContent"]["time_zone"], "UTC");
    let listed = stack
        .call_tool("bob", "calendar_events", json!({"start": "2026-04-14", "end": "2026-04-14"}))
        .await;
    assert_eq!(agenda(&listed), ["2026-04-14T08:00:00Z Call"]);
}

/// Alice gets a calendar for tasks only, as Nextcloud's Tasks app makes.
async fn add_task_list(stack: &Stack) {
    let response = stack
        .client
        .http
        .request(
            reqwest::Method::from_bytes(b"MKCALENDAR").unwrap(),
            format!("{}/remote.php/dav/calendars/alice/tasks/", stack.fake.base_url()),
        )
        .basic_auth("alice", Some("alice-demo-password"))
        .body(
            r#"<?xml version="1.0" encoding="utf-8"?>
<cal:mkcalendar xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:displayname>Tâches</d:displayname><cal:supported-calendar-component-set><cal:comp name="VTODO"/></cal:supported-calendar-component-set></d:prop></d:set></cal:mkcalendar>"#,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}

#[tokio::test]
async fn task_lists_are_not_event_calendars() {
    let stack = start(second_token()).await;
    add_task_list(&stack).await;
    let listed = alice_events(&stack, json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1})).await;
    let searched: Vec<&str> = listed["structuredContent"]["calendars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|calendar| calendar["uri"].as_str().unwrap())
        .collect();
    assert_eq!(searched, ["personal"]);
    let tasks = alice_events(
        &stack,
        json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1, "calendar": "tasks"}),
    )
    .await;
    assert_failure(&tasks, "invalid_arguments", "holds tasks, not events");
    let create = alice_creates(
        &stack,
        json!({"summary": "x", "start": "2026-04-14", "end": "2026-04-14", "calendar": "tasks"}),
    )
    .await;
    assert_failure(&create, "invalid_arguments", "\"personal\" (Personnel)");
}

#[tokio::test]
async fn creating_in_a_calendar_the_user_cannot_write_is_refused() {
    let stack = start(second_token()).await;
    // Nextcloud answers a PUT into a calendar shared read-only with 403
    // (the fake has no calendar sharing, so the route fault stands in).
    stack.fail_route("/remote.php/dav/calendars/alice/personal/", Some("PUT"), 403, None);
    let result = alice_creates(&stack, json!({"summary": "Revue", "start": "2026-04-14T10:00:00Z", "end": "2026-04-14T11:00:00Z", "calendar": "personal"})).await;
    assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"));
    let message = text_of(&result);
    assert!(message.contains("cannot add events to calendar \"personal\""), "{message}");
    assert!(message.contains("Do not retry"), "{message}");
    assert_no_infrastructure(&message);
}

#[tokio::test]
async fn bad_event_arguments_are_explained() {
    let stack = start(second_token()).await;
    let cases = [
        (json!({"summary": "  ", "start": "2026-04-14", "end": "2026-04-14"}), "summary is empty"),
        (
            json!({"summary": "x", "start": "2026-04-14T10:00:00", "end": "2026-04-14T11:00:00"}),
            "no time zone",
        ),
        (
            json!({"summary": "x", "start": "2026-04-14T10:00:00Z", "end": "2026-04-14T09:00:00Z"}),
            "after start",
        ),
        (
            json!({"summary": "x", "start": "2026-03-29T02:30", "end": "2026-03-29T04:00", "time_zone": "Europe/Berlin"}),
            "does not exist",
        ),
        (
            json!({"summary": "x", "start": "2026-04-14", "end": "2026-04-14", "colour": "red"}),
            "input schema",
        ),
        (
            json!({"summary": "x".repeat(501), "start": "2026-04-14", "end": "2026-04-14"}),
            "longer than 500",
        ),
    ];
    for (arguments, expected) in cases {
        let result = stack.call_tool("alice", "calendar_create_event", arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("invalid_arguments"), "{arguments}: {result}");
        assert!(text_of(&result).contains(expected), "{arguments}: {}", text_of(&result));
    }
    let world = stack.fake.shared.world();
    assert_eq!(
        world.calendars.get("alice", "personal").unwrap().members.len(),
        2,
        "nothing written"
    );
}

#[tokio::test]
async fn caldav_refusing_bearer_sign_ins_is_explained_and_app_passwords_work() {
    let reject_bearer_on_caldav = |stack: &Stack| {
        stack.fake.shared.world().faults.bearer_rejected_on =
            vec!["/remote.php/dav/calendars".to_string()];
    };
    let list = json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1});
    let create =
        json!({"summary": "Revue", "start": "2026-04-14T10:00:00Z", "end": "2026-04-14T11:00:00Z"});

    let token_stack = start(second_token()).await;
    reject_bearer_on_caldav(&token_stack);
    for (tool, arguments) in [("calendar_events", &list), ("calendar_create_event", &create)] {
        let result = token_stack.call_tool("alice", tool, arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"), "{tool}: {result}");
        let message = text_of(&result);
        assert!(message.contains("cannot be reached with the current sign-in"), "{message}");
        assert!(
            message.contains("administrator can switch Tamebi to app-password mode"),
            "{message}"
        );
        assert_no_infrastructure(&message);
    }
    // Files still work with the same token: only CalDAV refuses it.
    let files = token_stack.call_tool("alice", "files_search", json!({"name": "todo"})).await;
    assert_eq!(failure_kind(&files), None);

    let app_password_stack = start(mcp_nextcloud::UpstreamAuth::AppPassword).await;
    reject_bearer_on_caldav(&app_password_stack);
    let headers = app_password_stack.app_password_headers_for("alice");
    let listed = app_password_stack.call_tool_with(&headers, "calendar_events", list).await;
    assert_eq!(occurrences(&listed).len(), 8);
    let created =
        app_password_stack.call_tool_with(&headers, "calendar_create_event", create).await;
    assert_eq!(failure_kind(&created), None, "{created}");
    assert_eq!(created["structuredContent"]["calendar"]["uri"], "personal");
}

#[tokio::test]
async fn nextcloud_down_is_unreachable_not_an_empty_agenda() {
    let stack = start(second_token()).await;
    stack.fail_route("/remote.php/dav/calendars", Some("REPORT"), 503, None);
    let result = alice_events(&stack, json!({"start": MARCH_APRIL.0, "end": MARCH_APRIL.1})).await;
    assert_failure(&result, "nextcloud_unreachable", "do not guess");
}

#[tokio::test]
async fn an_all_day_event_counts_in_the_callers_zone_not_the_servers() {
    let stack = start(second_token()).await;
    let created = alice_creates(
        &stack,
        json!({"summary": "Congés", "start": "2026-04-20", "end": "2026-04-20"}),
    )
    .await;
    assert_eq!(failure_kind(&created), None, "{created}");
    // 20:00–23:00 in New York on the 20th is already the 21st in UTC,
    // where the server places the date: it must still be found.
    let evening = alice_events(
        &stack,
        json!({"start": "2026-04-20T20:00:00", "end": "2026-04-20T23:00:00", "time_zone": "America/New_York"}),
    )
    .await;
    assert_eq!(agenda(&evening), ["2026-04-20 Congés"]);
    // And the next day in New York it is over.
    let next_day = alice_events(
        &stack,
        json!({"start": "2026-04-21T00:00:00", "end": "2026-04-21T12:00:00", "time_zone": "America/New_York"}),
    )
    .await;
    assert!(occurrences(&next_day).is_empty(), "{next_day}");
}
