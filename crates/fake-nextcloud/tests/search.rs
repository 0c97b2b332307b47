//! SEARCH (RFC 5323 basicsearch) at `/remote.php/dav/`, as Nextcloud's
//! FileSearchBackend answers it: operators, ordering, limits, scopes, and
//! only what the caller can see.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;
mod dav_support;

use common::{Running, SMALL, start};
use dav_support::{DavResponse, multistatus, name_like, search_body};
use reqwest::StatusCode;

/// SMALL plus a favorite, more types and sizes, and dated files.
const WORLD: &str = concat!(
    common::small_people!(),
    r##"
[[files]]
owner = "alice"
path = "Documents/notes.md"
content = "# Notes\n"
mtime = "2026-03-01T10:00:00Z"
favorite = true

[[files]]
owner = "alice"
path = "Documents/Report.MD"
content = "a longer report, forty bytes long......\n"
mtime = "2026-03-05T10:00:00Z"

[[files]]
owner = "alice"
path = "Documents/photo.png"
content = "not really a png"
mtime = "2026-02-01T10:00:00Z"

[[files]]
owner = "alice"
path = "Shared/plan.txt"
content = "The plan.\n"
mtime = "2026-03-02T10:00:00Z"

[[files]]
owner = "alice"
path = "Private/secret.md"
content = "alice only\n"
mtime = "2026-03-03T10:00:00Z"

[[files]]
owner = "bob"
path = "Work/todo.md"
content = "- ship it\n"
mtime = "2026-03-04T10:00:00Z"

[[shares]]
owner = "alice"
path = "Shared"
share_with = "bob"
permissions = 1
"##
);

async fn search(running: &Running, uid: &str, body: &str) -> reqwest::Response {
    running
        .as_user("SEARCH", uid, "/remote.php/dav/")
        .header("Content-Type", "text/xml")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

async fn found(running: &Running, uid: &str, body: &str) -> Vec<DavResponse> {
    let response = search(running, uid, body).await;
    assert_eq!(response.status(), StatusCode::MULTI_STATUS);
    multistatus(&response.text().await.unwrap())
}

/// The hrefs a search returns, with the caller's files prefix removed.
async fn paths(running: &Running, uid: &str, body: &str) -> Vec<String> {
    let prefix = format!("/remote.php/dav/files/{uid}/");
    found(running, uid, body)
        .await
        .into_iter()
        .map(|response| {
            response.href.strip_prefix(&prefix).expect("href in the caller's files").to_string()
        })
        .collect()
}

fn sorted(mut paths: Vec<String>) -> Vec<String> {
    paths.sort();
    paths
}

fn scope(uid: &str) -> String {
    format!("/files/{uid}")
}

#[tokio::test]
async fn everything_below_the_scope_but_not_the_scope_itself() {
    let running = start(WORLD).await;
    let all =
        sorted(paths(&running, "alice", &search_body(&scope("alice"), &name_like("%"), "")).await);
    assert_eq!(
        all,
        [
            "Documents/",
            "Documents/Report.MD",
            "Documents/notes.md",
            "Documents/photo.png",
            "Private/",
            "Private/secret.md",
            "Shared/",
            "Shared/plan.txt"
        ]
    );
    let below = sorted(
        paths(&running, "alice", &search_body("/files/alice/Documents", &name_like("%"), "")).await,
    );
    assert_eq!(below, ["Documents/Report.MD", "Documents/notes.md", "Documents/photo.png"]);
}

#[tokio::test]
async fn a_recipient_finds_shared_files_and_nothing_else_of_the_owner() {
    let running = start(WORLD).await;
    let all =
        sorted(paths(&running, "bob", &search_body(&scope("bob"), &name_like("%"), "")).await);
    assert_eq!(all, ["Shared/", "Shared/plan.txt", "Work/", "Work/todo.md"]);
    let markdown =
        sorted(paths(&running, "bob", &search_body(&scope("bob"), &name_like("%.md"), "")).await);
    assert_eq!(markdown, ["Work/todo.md"], "alice's markdown files stay hers");
    // oc:owner-id = self limits the search to one's own files.
    let own = r#"<d:and><d:eq><d:prop><oc:owner-id/></d:prop><d:literal>bob</d:literal></d:eq><d:like><d:prop><d:displayname/></d:prop><d:literal>%</d:literal></d:like></d:and>"#;
    assert_eq!(
        sorted(paths(&running, "bob", &search_body(&scope("bob"), own, "")).await),
        ["Work/", "Work/todo.md"]
    );
}

#[tokio::test]
async fn comparisons_on_each_searchable_property() {
    let running = start(WORLD).await;
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("like is case-insensitive", name_like("%.md"), vec!["Documents/Report.MD", "Documents/notes.md", "Private/secret.md"]),
        ("underscore is one character", name_like("notes._d"), vec!["Documents/notes.md"]),
        (
            "eq on the name is exact",
            r#"<d:eq><d:prop><d:displayname/></d:prop><d:literal>report.md</d:literal></d:eq>"#.into(),
            vec![],
        ),
        (
            "mime major type",
            r#"<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>text/%</d:literal></d:like>"#.into(),
            vec!["Documents/Report.MD", "Documents/notes.md", "Private/secret.md", "Shared/plan.txt"],
        ),
        (
            "mime exact",
            r#"<d:eq><d:prop><d:getcontenttype/></d:prop><d:literal>image/png</d:literal></d:eq>"#.into(),
            vec!["Documents/photo.png"],
        ),
        ("collections", "<d:is-collection/>".into(), vec!["Documents/", "Private/", "Shared/"]),
        (
            "files",
            "<d:not><d:is-collection/></d:not>".into(),
            vec!["Documents/Report.MD", "Documents/notes.md", "Documents/photo.png", "Private/secret.md", "Shared/plan.txt"],
        ),
        (
            "modified after an ATOM date",
            r#"<d:and><d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>2026-03-02T10:00:00+00:00</d:literal></d:gt><d:not><d:is-collection/></d:not></d:and>"#.into(),
            vec!["Documents/Report.MD", "Private/secret.md"],
        ),
        (
            "modified at or before a timestamp",
            r#"<d:and><d:lte><d:prop><d:getlastmodified/></d:prop><d:literal>1772445600</d:literal></d:lte><d:not><d:is-collection/></d:not></d:and>"#.into(),
            vec!["Documents/notes.md", "Documents/photo.png", "Shared/plan.txt"],
        ),
        (
            "size",
            r#"<d:and><d:gte><d:prop><oc:size/></d:prop><d:literal>16</d:literal></d:gte><d:not><d:is-collection/></d:not></d:and>"#.into(),
            vec!["Documents/Report.MD", "Documents/photo.png"],
        ),
        (
            "favorite, whatever the literal",
            r#"<d:eq><d:prop><oc:favorite/></d:prop><d:literal>no</d:literal></d:eq>"#.into(),
            vec!["Documents/notes.md"],
        ),
        (
            "or",
            format!("<d:or>{}{}</d:or>", name_like("photo%"), name_like("plan%")),
            vec!["Documents/photo.png", "Shared/plan.txt"],
        ),
    ];
    for (label, condition, expected) in cases {
        let got =
            sorted(paths(&running, "alice", &search_body(&scope("alice"), &condition, "")).await);
        assert_eq!(got, expected, "{label}");
    }
}

#[tokio::test]
async fn fileid_equality() {
    let running = start(WORLD).await;
    let all =
        found(&running, "alice", &search_body(&scope("alice"), &name_like("plan.txt"), "")).await;
    let fileid = all[0].value("{http://owncloud.org/ns}fileid").unwrap().to_string();
    let condition =
        format!("<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{fileid}</d:literal></d:eq>");
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), &condition, "")).await,
        ["Shared/plan.txt"]
    );
}

#[tokio::test]
async fn order_and_limit() {
    let running = start(WORLD).await;
    let files = "<d:not><d:is-collection/></d:not>";
    let by_date = r#"<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>"#;
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), files, by_date)).await,
        [
            "Documents/Report.MD",
            "Private/secret.md",
            "Shared/plan.txt",
            "Documents/notes.md",
            "Documents/photo.png"
        ]
    );
    let by_name = r#"<d:orderby><d:order><d:prop><d:displayname/></d:prop><d:ascending/></d:order></d:orderby>"#;
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), files, by_name)).await,
        [
            "Documents/Report.MD",
            "Documents/notes.md",
            "Documents/photo.png",
            "Shared/plan.txt",
            "Private/secret.md"
        ],
        "byte order, as strcmp"
    );
    let page = format!(
        "{by_date}<d:limit><d:nresults>2</d:nresults><ns:firstresult xmlns:ns=\"https://github.com/icewind1991/SearchDAV/ns\">1</ns:firstresult></d:limit>"
    );
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), files, &page)).await,
        ["Private/secret.md", "Shared/plan.txt"]
    );
}

#[tokio::test]
async fn without_a_limit_at_most_100_results() {
    let running = start(WORLD).await;
    {
        let mut world = running.fake.shared.world();
        for index in 0..120 {
            world.storage.seed_file(
                "alice",
                &format!("Many/file-{index:03}.txt"),
                b"x".to_vec(),
                None,
                1_770_000_000,
            );
        }
    }
    let condition = name_like("file-%");
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), &condition, "")).await.len(),
        100
    );
    let limit = "<d:limit><d:nresults>500</d:nresults></d:limit>";
    assert_eq!(
        paths(&running, "alice", &search_body(&scope("alice"), &condition, limit)).await.len(),
        120
    );
}

#[tokio::test]
async fn selected_properties_come_back_like_propfind() {
    let running = start(WORLD).await;
    let results =
        found(&running, "alice", &search_body(&scope("alice"), &name_like("notes.md"), "")).await;
    assert_eq!(results.len(), 1);
    let notes = &results[0];
    assert_eq!(notes.href, "/remote.php/dav/files/alice/Documents/notes.md");
    assert_eq!(notes.value("{DAV:}displayname"), Some("notes.md"));
    assert_eq!(notes.value("{DAV:}getcontenttype"), Some("text/markdown"));
    assert_eq!(notes.value("{http://owncloud.org/ns}size"), Some("8"));
    assert_eq!(notes.value("{http://owncloud.org/ns}owner-id"), Some("alice"));
    // An unknown selected property is a 404 propstat, as in PROPFIND.
    let body = search_body(&scope("alice"), &name_like("notes.md"), "")
        .replace("<d:displayname/><oc:fileid/>", "<d:displayname/><oc:no-such-thing/>");
    let notes = found(&running, "alice", &body).await.remove(0);
    assert_eq!(notes.status_of("{http://owncloud.org/ns}no-such-thing"), Some(404));
}

#[tokio::test]
async fn scopes() {
    let running = start(WORLD).await;
    // An absolute URL below /remote.php/dav/ works too; depth is ignored.
    let url = running.url("/remote.php/dav/files/alice/Shared");
    let body = search_body(&url, &name_like("%"), "")
        .replace("<d:depth>infinity</d:depth>", "<d:depth>0</d:depth>");
    assert_eq!(paths(&running, "alice", &body).await, ["Shared/plan.txt"]);
    // Another user's files: 404, nothing of theirs in the answer.
    for other in ["/files/bob", "/files/bob/Work", "/files/alice/../bob"] {
        let response = search(&running, "alice", &search_body(other, &name_like("%"), "")).await;
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(
            status == StatusCode::NOT_FOUND || status == StatusCode::BAD_REQUEST,
            "{other}: {status}"
        );
        assert!(!body.contains("todo.md"), "{other}: {body}");
    }
    let file_scope = search(
        &running,
        "alice",
        &search_body("/files/alice/Documents/notes.md", &name_like("%"), ""),
    )
    .await;
    assert_eq!(file_scope.status(), StatusCode::BAD_REQUEST);
    let missing =
        search(&running, "alice", &search_body("/files/alice/Nothing", &name_like("%"), "")).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let outside =
        search(&running, "alice", &search_body("/calendars/alice", &name_like("%"), "")).await;
    assert_eq!(outside.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn malformed_queries() {
    let running = start(WORLD).await;
    let valid = search_body(&scope("alice"), &name_like("%"), "");
    let parse_errors = [
        valid.replace("<d:where>", "<d:nowhere>").replace("</d:where>", "</d:nowhere>"),
        valid.replace("<d:select>", "<d:unselect>").replace("</d:select>", "</d:unselect>"),
        valid.replace("<d:from>", "<d:to>").replace("</d:from>", "</d:to>"),
        "<d:searchrequest xmlns:d=\"DAV:\"><d:basicsearch>".to_string(),
    ];
    for body in parse_errors {
        let response = search(&running, "alice", &body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        assert!(response.text().await.unwrap().starts_with("Parse error: "));
    }
    let other_document = search(&running, "alice", "<d:propfind xmlns:d=\"DAV:\"/>").await;
    assert_eq!(other_document.status(), StatusCode::BAD_REQUEST);
    assert!(
        other_document
            .text()
            .await
            .unwrap()
            .starts_with("Unexpected document type: {DAV:}propfind")
    );
    let invalid = [
        r#"<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>te%t/plain</d:literal></d:like>"#
            .to_string(),
        r#"<d:eq><d:prop><d:getetag/></d:prop><d:literal>x</d:literal></d:eq>"#.to_string(),
        r#"<d:eq><d:prop><oc:size/></d:prop><d:literal>big</d:literal></d:eq>"#.to_string(),
        r#"<d:eq><d:prop><oc:owner-id/></d:prop><d:literal>bob</d:literal></d:eq>"#.to_string(),
        format!(
            "<d:or><d:eq><d:prop><oc:owner-id/></d:prop><d:literal>alice</d:literal></d:eq>{}</d:or>",
            name_like("%")
        ),
        format!("<d:and>{}</d:and>", name_like("%").repeat(101)),
        "<d:contains><d:literal>x</d:literal></d:contains>".to_string(),
    ];
    for condition in invalid {
        let response =
            search(&running, "alice", &search_body(&scope("alice"), &condition, "")).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{condition}");
    }
    // SearchPlugin only handles XML bodies; the rest is sabre's 501.
    let response = running
        .as_user("SEARCH", "alice", "/remote.php/dav/")
        .header("Content-Type", "application/json")
        .body(valid)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_IMPLEMENTED);
}

#[tokio::test]
async fn search_requires_authentication() {
    let running = start(SMALL).await;
    let response = running
        .http
        .request(reqwest::Method::from_bytes(b"SEARCH").unwrap(), running.url("/remote.php/dav/"))
        .header("Content-Type", "text/xml")
        .body(search_body(&scope("alice"), &name_like("%"), ""))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

/// Alice's drive for the many-ids test: bob shares "Team" with her (mounted
/// as "From Bob") and keeps "Private" to himself.
const MANY_IDS: &str = concat!(
    common::small_people!(),
    r##"
[[files]]
owner = "bob"
path = "Team/budget.md"
content = "# Budget\n"

[[files]]
owner = "bob"
path = "Team/Q2/plan.txt"
content = "The plan.\n"

[[files]]
owner = "bob"
path = "Private/diary.md"
content = "bob only\n"

[[shares]]
owner = "bob"
path = "Team"
share_with = "alice"
permissions = 1
target = "From Bob"
"##
);

fn fileid_or(ids: &[u64]) -> String {
    let arguments: String = ids
        .iter()
        .map(|id| format!("<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{id}</d:literal></d:eq>"))
        .collect();
    format!("<d:or>{arguments}</d:or>")
}

/// A permission check by file id, the way an MCP server makes one: which of
/// these ids can the user see, and where are they in the user's files?
/// Nextcloud refuses more than 100 comparisons in one query
/// (FileSearchBackend::OPERATOR_LIMIT, before its QueryOptimizer turns an
/// `or` of equalities into SQL `IN`), so 3000 ids in one SEARCH are a 400
/// and the same ids in batches of 100 come back as exactly the visible ones.
#[tokio::test]
async fn which_of_many_file_ids_a_user_sees() {
    let running = start(MANY_IDS).await;
    let base = "/remote.php/dav/files/alice";
    let mut expected: Vec<(u64, String)> = Vec::new();
    let mut ids: Vec<u64> = Vec::new();
    {
        let mut world = running.fake.shared.world();
        for index in 0..300 {
            let path = format!("Drive/folder-{:02}/file-{index:03}.txt", index % 12);
            let id = world.storage.seed_file("alice", &path, b"x".to_vec(), None, 1_770_000_000);
            expected.push((id, format!("{base}/{path}")));
        }
        for index in 0..60 {
            let path = format!("Private/old-{index:02}.txt");
            ids.push(world.storage.seed_file("bob", &path, b"x".to_vec(), None, 1_770_000_000));
        }
        ids.push(world.storage.node_at("bob", "Private/diary.md").unwrap().id);
        for (owner_path, alice_path) in [
            ("Team/budget.md", "From%20Bob/budget.md"),
            ("Team/Q2/plan.txt", "From%20Bob/Q2/plan.txt"),
        ] {
            let id = world.storage.node_at("bob", owner_path).unwrap().id;
            expected.push((id, format!("{base}/{alice_path}")));
        }
    }
    ids.extend(expected.iter().map(|(id, _)| *id));
    let nonexistent_first = ids.iter().max().unwrap() + 1_000;
    ids.extend(nonexistent_first..nonexistent_first + (3000 - ids.len() as u64));
    assert_eq!(ids.len(), 3000);
    // Visible, hidden and missing ids mixed, in a fixed order.
    ids.sort_by_key(|id| id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let started = std::time::Instant::now();

    let all_at_once =
        search(&running, "alice", &search_body(&scope("alice"), &fileid_or(&ids), "")).await;
    assert_eq!(all_at_once.status(), StatusCode::BAD_REQUEST);
    let message = all_at_once.text().await.unwrap();
    assert!(
        message.contains("maximum operator limit of 100 exceeded, got 3000 operators"),
        "{message}"
    );

    let limit = "<d:limit><d:nresults>100</d:nresults></d:limit>";
    let mut found_hrefs: Vec<(u64, String)> = Vec::new();
    for batch in ids.chunks(100) {
        let body = search_body(&scope("alice"), &fileid_or(batch), limit);
        for response in found(&running, "alice", &body).await {
            let fileid = response.value("{http://owncloud.org/ns}fileid").unwrap().parse().unwrap();
            assert!(batch.contains(&fileid), "{fileid} was not asked for");
            found_hrefs.push((fileid, response.href));
        }
    }
    eprintln!("3000 ids checked in 30 SEARCH requests in {:?}", started.elapsed());
    found_hrefs.sort();
    expected.sort();
    assert_eq!(found_hrefs, expected, "exactly alice's files and bob's shared ones, at her paths");

    // An `or` of one id is an `or` all the same.
    let (one_id, one_href) = expected[0].clone();
    let single =
        found(&running, "alice", &search_body(&scope("alice"), &fileid_or(&[one_id]), "")).await;
    assert_eq!(single.into_iter().map(|response| response.href).collect::<Vec<_>>(), [one_href]);
}
