//! The OnlyOffice-style converter over real sockets: the JWT secret (and the
//! seeds' missing-secret bug), error codes, JSON and XML answers, and the
//! result URL.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Running, start};
use fake_nextcloud::converter::sign_hs256;
use serde_json::{Value, json};

const SECRET: &str = "test-converter-secret";

fn fixture() -> String {
    format!(
        "[server]\noverwritehost = \"self\"\nconverter_secret = \"{SECRET}\"\n\n[[users]]\nuid = \"alice\"\npassword = \"alice-pw\"\n"
    )
}

/// The fake with the converter's secret, and the documents it fetches: how
/// most tests here begin.
async fn start_converter() -> (Running, Documents) {
    (start(&fixture()).await, document_server().await)
}

/// Where [`document_server`] serves.
struct Documents {
    base: String,
}

impl Documents {
    /// A conversion request for the document `name`, of the type its
    /// extension says.
    fn body(&self, name: &str) -> Value {
        let filetype = name.rsplit_once('.').map_or("", |(_, extension)| extension);
        self.body_as(name, filetype)
    }

    /// A conversion request for the document `name` declared as `filetype`.
    fn body_as(&self, name: &str, filetype: &str) -> Value {
        request_body(&format!("{}/{name}", self.base), filetype)
    }
}

/// Serves documents on loopback, as the MCP server's one-shot URLs do.
async fn document_server() -> Documents {
    let app = axum::Router::new()
        .route(
            "/notes.md",
            axum::routing::get(|| async { "\u{feff}# Notes\n\nBudget: 40 000 €\n" }),
        )
        .route("/table.csv", axum::routing::get(|| async { "a,b\n1,2\n" }))
        .route("/accents.rtf", axum::routing::get(|| async { ACCENTS_RTF }))
        .route("/unbalanced.rtf", axum::routing::get(|| async { "{\\rtf1\\ansi {Caf\\'e9}" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Documents { base }
}

/// A WordPad-like RTF document: é once as `\'e9` and once as `\u233?`.
const ACCENTS_RTF: &str = concat!(
    r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fnil\fcharset0 Calibri;}}",
    r"{\*\generator Riched20 10.0.19041}\viewkind4\uc1",
    "\r\n",
    r"\pard\f0\fs22 Caf\'e9 au lait, d\u233?j\'e0 vu\par",
    "\r\n",
    r"Na\'efve \ldblquote r\u233?sum\'e9\rdblquote\par",
    "\r\n}",
);

fn request_body(url: &str, filetype: &str) -> Value {
    json!({"async": false, "filetype": filetype, "key": format!("key-{url}"), "outputtype": "txt", "title": format!("doc.{filetype}"), "url": url})
}

fn signed(mut body: Value, secret: &str) -> Value {
    let token = sign_hs256(secret, &body);
    body["token"] = json!(token);
    body
}

async fn convert(running: &Running, path: &str, body: &Value, accept_json: bool) -> (u16, String) {
    let mut request =
        running.http.post(format!("{}{path}", running.fake.converter_url())).json(body);
    if accept_json {
        request = request.header("Accept", "application/json");
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn convert_json(running: &Running, body: &Value) -> Value {
    let (status, text) = convert(running, "/converter", body, true).await;
    assert_eq!(status, 200, "errors travel in a 200, as OnlyOffice sends them");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_signed_request_converts_and_the_result_can_be_fetched() {
    let (running, documents) = start_converter().await;
    let answer = convert_json(&running, &signed(documents.body("notes.md"), SECRET)).await;
    assert_eq!(answer["endConvert"], true);
    assert_eq!(answer["percent"], 100);
    let file_url = answer["fileUrl"].as_str().unwrap();
    assert!(
        file_url.starts_with(&format!("{}/cache/", running.fake.converter_url())),
        "{file_url}"
    );
    assert!(file_url.ends_with("/output.txt"));
    let text = running.http.get(file_url).send().await.unwrap().text().await.unwrap();
    assert_eq!(text, "# Notes\n\nBudget: 40 000 €\n", "the byte-order mark is dropped");
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_minus_8() {
    let (running, documents) = start_converter().await;
    let body = documents.body("notes.md");
    assert_eq!(
        convert_json(&running, &body).await,
        json!({"error": -8}),
        "the seeds' bug: client without the secret"
    );
    assert_eq!(convert_json(&running, &signed(body.clone(), "wrong")).await, json!({"error": -8}));
    // A token whose payload differs from the body: the token's fields win.
    let mut tampered = signed(body.clone(), SECRET);
    tampered["url"] = json!("http://127.0.0.1:9/elsewhere.md");
    assert_eq!(convert_json(&running, &tampered).await["endConvert"], true);
}

#[tokio::test]
async fn a_header_token_carries_the_request_under_payload() {
    let (running, documents) = start_converter().await;
    let body = documents.body("table.csv");
    let token = sign_hs256(SECRET, &json!({ "payload": body }));
    let response = running
        .http
        .post(format!("{}/ConvertService.ashx", running.fake.converter_url()))
        .header("Accept", "application/json")
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["endConvert"], true, "{answer}");
}

#[tokio::test]
async fn the_secret_missing_fault_makes_the_converter_ignore_tokens() {
    let fixture = format!("{}\n[faults]\nconverter_secret_missing = true\n", fixture());
    let running = start(&fixture).await;
    let documents = document_server().await;
    let body = documents.body("notes.md");
    assert_eq!(convert_json(&running, &body).await["endConvert"], true, "no token needed");
    let mut other = signed(documents.body("table.csv"), "any-secret");
    other["key"] = json!("other");
    assert_eq!(convert_json(&running, &other).await["endConvert"], true, "a token is not checked");
}

#[tokio::test]
async fn clearing_the_secret_at_run_time_fixes_unsigned_clients() {
    let (running, documents) = start_converter().await;
    let body = documents.body("notes.md");
    assert_eq!(convert_json(&running, &body).await["error"], -8);
    let response = running
        .admin_send(
            reqwest::Method::POST,
            "/__fake/server",
            Some(json!({"converter_secret": null})),
        )
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(convert_json(&running, &body).await["endConvert"], true);
}

#[tokio::test]
async fn error_codes_follow_onlyoffice() {
    let (running, documents) = start_converter().await;
    let cases = [
        (documents.body("missing.md"), -4),
        (request_body("file:///etc/passwd", "txt"), -4),
        (request_body("http://127.0.0.1:9/closed.md", "md"), -4),
        (documents.body_as("notes.md", "docx"), -3),
        (documents.body_as("notes.md", "xyz"), -9),
        (json!({"async": false, "filetype": "md", "key": "k", "outputtype": "txt"}), -7),
        (
            {
                let mut body = documents.body("notes.md");
                body["outputtype"] = json!("pdf");
                body
            },
            -3,
        ),
    ];
    for (body, code) in cases {
        let answer = convert_json(&running, &signed(body.clone(), SECRET)).await;
        assert_eq!(answer, json!({"error": code}), "{body}");
    }
    let (_, text) = convert(&running, "/converter", &json!("not an object"), true).await;
    assert_eq!(text, r#"{"error":-7}"#);
}

#[tokio::test]
async fn xml_is_the_default_answer() {
    let (running, documents) = start_converter().await;
    let (status, text) =
        convert(&running, "/converter", &signed(documents.body("notes.md"), SECRET), false).await;
    assert_eq!(status, 200);
    assert!(text.contains("<FileResult><FileUrl>http://"), "{text}");
    assert!(text.contains("<EndConvert>True</EndConvert>"), "{text}");
    assert!(text.contains("<Percent>100</Percent>"), "{text}");
    let (_, text) =
        convert(&running, "/converter", &request_body("http://x/a.md", "md"), false).await;
    assert_eq!(
        text,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><FileResult><Error>-8</Error></FileResult>"
    );
}

/// A GET to the converter's own listener.
async fn converter_get(running: &Running, path: &str) -> reqwest::Response {
    running.http.get(format!("{}{path}", running.fake.converter_url())).send().await.unwrap()
}

#[tokio::test]
async fn the_converter_is_not_on_the_main_listener() {
    let running = start(&fixture()).await;
    let response =
        running.http.post(running.url("/converter")).json(&json!({})).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let response = converter_get(&running, "/__fake/state").await;
    assert_eq!(response.status(), 404, "the admin endpoint lives only on the main listener");
    let response = converter_get(&running, "/cache/nope/output.txt").await;
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn an_rtf_document_converts_to_its_text() {
    let (running, documents) = start_converter().await;
    let answer = convert_json(&running, &signed(documents.body("accents.rtf"), SECRET)).await;
    assert_eq!(answer["endConvert"], true, "{answer}");
    let file_url = answer["fileUrl"].as_str().unwrap();
    let response = running.http.get(file_url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.text().await.unwrap(),
        "Café au lait, déjà vu\n\nNaïve “résumé”\n",
        "\\'e9 and \\u233? are both é; \\par separates paragraphs"
    );
    // Not RTF, or broken RTF: a conversion error, as OnlyOffice answers.
    for (path, key) in [("notes.md", "rtf-not-rtf"), ("unbalanced.rtf", "rtf-unbalanced")] {
        let mut body = documents.body_as(path, "rtf");
        body["key"] = json!(key);
        assert_eq!(
            convert_json(&running, &signed(body, SECRET)).await,
            json!({"error": -3}),
            "{path}"
        );
    }
}
