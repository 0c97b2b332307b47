//! The converter path over real sockets: the fake-nextcloud converter (its
//! JWT secret, the missing-secret bug, its download of our loans), our lend
//! listener, and small stub converters for the answers the fake never gives
//! (HTTP errors, a conversion still running, a result too long, silence).

use super::*;
use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse as _;
use axum::routing::{get, post};
use fake_nextcloud::{FakeNextcloud, Fixture};
use std::sync::atomic::{AtomicUsize, Ordering};

const SECRET: &str = "test-converter-secret";

/// A fake Nextcloud whose converter requires `secret` (none: JWT disabled).
async fn fake(secret: Option<&str>) -> FakeNextcloud {
    let server = match secret {
        Some(secret) => format!("[server]\nconverter_secret = \"{secret}\"\n\n"),
        None => String::new(),
    };
    let fixture = format!("{server}[[users]]\nuid = \"alice\"\npassword = \"alice-pw\"\n");
    let fixture = Fixture::parse(&fixture).unwrap();
    FakeNextcloud::start(&fixture, fake_nextcloud::Config::default()).await.unwrap()
}

/// A fake Nextcloud whose converter requires [`SECRET`], and our converter
/// sending `secret` to it.
async fn fake_and_converter(secret: Option<&str>) -> (FakeNextcloud, Converter) {
    let fake = fake(Some(SECRET)).await;
    let converter = converter(fake.converter_url(), secret).await;
    (fake, converter)
}

async fn stop(converter: Converter, fake: FakeNextcloud) {
    converter.shutdown().await;
    fake.shutdown().await;
}

/// Tight enough that a hang fails the test quickly, loose enough for a
/// loaded CI machine.
fn test_limits() -> ConverterLimits {
    ConverterLimits {
        conversion_time_max: Duration::from_secs(20),
        poll_interval: Duration::from_millis(10),
        ..ConverterLimits::default()
    }
}

fn config(converter_url: &str, secret: Option<&str>) -> ConverterConfig {
    ConverterConfig {
        url: converter_url.to_string(),
        secret: secret.map(str::to_string),
        lend_listen: "127.0.0.1:0".parse().unwrap(),
        lend_url: None,
    }
}

async fn converter_with(config: ConverterConfig, limits: ConverterLimits) -> Converter {
    Converter::start_with_limits(config, reqwest::Client::new(), limits).await.unwrap()
}

async fn converter(converter_url: &str, secret: Option<&str>) -> Converter {
    converter_with(config(converter_url, secret), test_limits()).await
}

/// An address nothing listens on.
async fn closed_address() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    address
}

const NOTES: &str = "\u{feff}Budget 2026\r\n\r\nCoffee: 40 000 €\r\nend";

/// Converts [`NOTES`] as `notes.txt`.
async fn convert_notes(converter: &Converter) -> Result<String, ConvertError> {
    converter.convert(Bytes::from_static(NOTES.as_bytes()), "notes.txt").await
}

#[tokio::test]
async fn a_text_file_converts_with_the_right_secret() {
    let (fake, converter) = fake_and_converter(Some(SECRET)).await;
    let text = convert_notes(&converter).await.unwrap();
    assert_eq!(text, "Budget 2026\n\nCoffee: 40 000 €\nend");
    // What the in-process extractor makes of the same bytes, so offsets
    // agree whichever path read a document.
    let extracted = extract::extract(NOTES.as_bytes(), extract::DocumentKind::PlainText).unwrap();
    assert_eq!(text, extracted.text);
    assert_eq!(converter.loans().outstanding(), 0, "the converter spent the loan");
    stop(converter, fake).await;
}

#[tokio::test]
async fn without_our_secret_the_converter_refuses() {
    let (fake, converter) = fake_and_converter(None).await;
    let error = convert_notes(&converter).await.unwrap_err();
    assert_eq!(error, ConvertError::Refused);
    assert!(error.is_configuration_fault(), "the seeds' bug: not the document's fault");
    assert_eq!(converter.loans().outstanding(), 0, "a failed conversion ends its loan");
    stop(converter, fake).await;
}

#[tokio::test]
async fn a_wrong_secret_is_refused() {
    let (fake, converter) = fake_and_converter(Some("not-the-secret")).await;
    assert_eq!(convert_notes(&converter).await, Err(ConvertError::Refused));
    stop(converter, fake).await;
}

#[tokio::test]
async fn fixing_the_secret_at_run_time_heals_conversions() {
    let (fake, converter) = fake_and_converter(None).await;
    assert_eq!(convert_notes(&converter).await, Err(ConvertError::Refused));
    let response = reqwest::Client::new()
        .post(format!("{}/__fake/server", fake.base_url()))
        .header(fake_nextcloud::admin::TOKEN_HEADER, fake.admin_token().unwrap())
        .json(&json!({"converter_secret": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(convert_notes(&converter).await.is_ok(), "JWT now disabled on the converter");
    stop(converter, fake).await;
}

#[tokio::test]
async fn a_document_server_with_jwt_disabled_ignores_our_token() {
    let fake = fake(Some(SECRET)).await;
    fake.shared.world().faults.converter_secret_missing = true;
    let converter = converter(fake.converter_url(), Some("any-secret")).await;
    assert_eq!(convert_notes(&converter).await.unwrap(), "Budget 2026\n\nCoffee: 40 000 €\nend");
    stop(converter, fake).await;
}

#[tokio::test]
async fn an_office_type_the_fake_cannot_read_is_unconvertible() {
    // The fake answers -3 for office formats it has no extractor for (XLS
    // today), which must read as the document's fault, not the
    // configuration's.
    let (fake, converter) = fake_and_converter(Some(SECRET)).await;
    let error = converter.convert(Bytes::from_static(b"\xD0\xCF\x11\xE0"), "Budget.XLS").await;
    assert_eq!(error, Err(ConvertError::Unconvertible));
    assert!(!ConvertError::Unconvertible.is_configuration_fault());
    let error = converter.convert(Bytes::from_static(b"?"), "unknown.zzz").await;
    assert_eq!(error, Err(ConvertError::Unconvertible), "-9, undetectable format");
    let error = converter.convert(Bytes::from_static(b"?"), "no-extension").await;
    assert_eq!(error, Err(ConvertError::Unconvertible));
    stop(converter, fake).await;
}

#[tokio::test]
async fn a_lend_url_the_converter_cannot_reach_is_a_download_fault() {
    let fake = fake(Some(SECRET)).await;
    let closed = closed_address().await;
    let config = ConverterConfig {
        lend_url: Some(format!("http://{closed}/")),
        ..config(fake.converter_url(), Some(SECRET))
    };
    let converter = converter_with(config, test_limits()).await;
    assert_eq!(converter.lend_url(), format!("http://{closed}"), "trailing slash trimmed");
    let error = convert_notes(&converter).await.unwrap_err();
    assert_eq!(error, ConvertError::Download);
    assert!(error.is_configuration_fault());
    stop(converter, fake).await;
}

#[tokio::test]
async fn a_converter_that_is_not_listening_is_unreachable() {
    let closed = closed_address().await;
    let converter = converter(&format!("http://{closed}"), Some(SECRET)).await;
    let error = convert_notes(&converter).await.unwrap_err();
    assert_eq!(error, ConvertError::Unreachable);
    assert!(error.is_configuration_fault());
    assert_eq!(converter.loans().outstanding(), 0);
    converter.shutdown().await;
}

// ---- the lend listener ----

/// Lends `bytes` directly and returns the loan with its URL.
fn lend(converter: &Converter, bytes: &'static [u8]) -> (lend::Loan, String) {
    let loan = converter.loans().lend(Bytes::from_static(bytes), Instant::now()).unwrap();
    let url = format!("{}/lend/{}", converter.lend_url(), loan.token());
    (loan, url)
}

#[tokio::test]
async fn a_loan_url_is_single_use() {
    let converter = converter("http://127.0.0.1:9", None).await;
    assert_eq!(converter.lend_url(), format!("http://{}", converter.lend_address()));
    let (_loan, url) = lend(&converter, b"the document");
    let http = reqwest::Client::new();

    let head = http.head(&url).send().await.unwrap();
    assert_eq!(head.status(), 405, "HEAD must not spend the loan");

    let first = http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["content-type"], "application/octet-stream");
    assert_eq!(first.headers()["cache-control"], "no-store");
    assert_eq!(first.bytes().await.unwrap(), Bytes::from_static(b"the document"));
    assert_eq!(converter.loans().outstanding(), 0);

    let second = http.get(&url).send().await.unwrap();
    assert_eq!(second.status(), 404);
    let unknown = http.get(format!("{}/lend/guess", converter.lend_url())).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
    let elsewhere = http.get(converter.lend_url()).send().await.unwrap();
    assert_eq!(elsewhere.status(), 404, "the listener serves loans and nothing else");
    converter.shutdown().await;
}

#[tokio::test]
async fn a_loan_url_expires() {
    assert_eq!(LOAN_LIFETIME, Duration::from_secs(60));
    let limits = ConverterLimits { loan_lifetime: Duration::from_millis(200), ..test_limits() };
    let converter = converter_with(config("http://127.0.0.1:9", None), limits).await;
    let (_loan, url) = lend(&converter, b"the document");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = reqwest::get(&url).await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(converter.loans().outstanding(), 0, "the expired loan is gone");
    converter.shutdown().await;
}

#[tokio::test]
async fn the_loan_bound_gives_busy() {
    assert_eq!(LOAN_COUNT_MAX, 64);
    let fake = fake(Some(SECRET)).await;
    let limits = ConverterLimits { loan_count_max: 2, ..test_limits() };
    let converter = converter_with(config(fake.converter_url(), Some(SECRET)), limits).await;
    let (_first, _) = lend(&converter, b"one");
    let (second, _) = lend(&converter, b"two");
    let error = convert_notes(&converter).await.unwrap_err();
    assert_eq!(error, ConvertError::Busy);
    assert!(!error.is_configuration_fault());
    assert_eq!(converter.loans().outstanding(), 2, "refused, not grown");
    drop(second);
    assert!(convert_notes(&converter).await.is_ok(), "room again once a loan ends");
    stop(converter, fake).await;
}

#[tokio::test]
async fn a_document_past_the_input_bound_is_too_large_before_it_is_lent() {
    let limits = ConverterLimits { input_length_max: 8, ..test_limits() };
    let converter = converter_with(config("http://127.0.0.1:9", None), limits).await;
    let error = converter.convert(Bytes::from_static(b"nine bytes"), "a.doc").await;
    assert_eq!(error, Err(ConvertError::TooLarge));
    assert_eq!(converter.loans().outstanding(), 0);
    converter.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_the_lend_listener() {
    let converter = converter("http://127.0.0.1:9", None).await;
    let address = converter.lend_address();
    let clone = converter.clone();
    converter.shutdown().await;
    assert!(tokio::net::TcpStream::connect(address).await.is_err(), "nobody listens");
    drop(clone);
}

#[tokio::test]
async fn dropping_the_last_clone_stops_the_lend_listener() {
    let converter = converter("http://127.0.0.1:9", None).await;
    let address = converter.lend_address();
    drop(converter);
    let mut attempts = 0;
    while tokio::net::TcpStream::connect(address).await.is_ok() {
        attempts += 1;
        assert!(attempts < 100, "the listener is still serving");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---- stub converters ----

/// A converter stand-in on loopback; aborted on drop.
struct Stub {
    url: String,
    task: JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves the router `build` makes from the stub's own base URL.
async fn stub(build: impl FnOnce(String) -> Router) -> Stub {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = build(url.clone());
    let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Stub { url, task }
}

/// A stub whose `POST /converter` always answers `status` and `body`.
async fn stub_answering(status: u16, body: &'static str) -> Stub {
    stub(move |_| {
        Router::new().route(
            "/converter",
            post(move || async move {
                (http::StatusCode::from_u16(status).unwrap(), body).into_response()
            }),
        )
    })
    .await
}

#[tokio::test]
async fn http_errors_and_foreign_answers_are_unreachable() {
    let cases: &[(u16, &str)] = &[
        (500, "{\"error\": -3}"),
        (502, "Bad gateway"),
        (404, "Not found"),
        (200, "<html>Welcome to nginx</html>"),
        (200, "<?xml version=\"1.0\"?><FileResult><Error>-8</Error></FileResult>"),
        (200, "{\"endConvert\": true}"),
        (200, "{\"error\": \"-8\"}"),
        (200, "[]"),
    ];
    for &(status, body) in cases {
        let stub = stub_answering(status, body).await;
        let converter = converter(&stub.url, None).await;
        assert_eq!(
            convert_notes(&converter).await,
            Err(ConvertError::Unreachable),
            "{status} {body}"
        );
        converter.shutdown().await;
    }
}

#[tokio::test]
async fn an_error_code_over_the_wire_is_mapped() {
    let stub = stub_answering(200, "{\"error\": -5}").await;
    let converter = converter(&stub.url, None).await;
    assert_eq!(convert_notes(&converter).await, Err(ConvertError::Unconvertible));
    converter.shutdown().await;
}

fn check_answer(body: &str, expect: Result<Answer, ConvertError>) {
    assert_eq!(parse_answer(body.as_bytes()), expect, "{body}");
}

#[test]
fn answers_map_to_results() {
    use ConvertError::*;
    for (code, kind) in [
        (-1, Unconvertible),
        (-2, Timeout),
        (-3, Unconvertible),
        (-4, Download),
        (-5, Unconvertible),
        (-6, Unconvertible),
        (-7, Unconvertible),
        (-8, Refused),
        (-9, Unconvertible),
        (-10, TooLarge),
        (-99, Unconvertible),
    ] {
        check_answer(&format!("{{\"error\": {code}}}"), Err(kind));
    }
    check_answer(
        r#"{"endConvert": true, "fileType": "txt", "fileUrl": "http://c/cache/1/output.txt", "percent": 100}"#,
        Ok(Answer::Done { file_url: "http://c/cache/1/output.txt".into() }),
    );
    check_answer(r#"{"endConvert": false, "percent": 40}"#, Ok(Answer::Running));
    check_answer(r#"{"endConvert": true}"#, Err(Unreachable));
    check_answer(r#"{"error": 0}"#, Err(Unreachable));
    check_answer("not json", Err(Unreachable));
}

#[test]
fn errors_are_named_and_classified() {
    use ConvertError::*;
    for (error, name, configuration_fault) in [
        (Refused, "refused", true),
        (Download, "download", true),
        (Unconvertible, "unconvertible", false),
        (Timeout, "timeout", false),
        (TooLarge, "too_large", false),
        (Unreachable, "unreachable", true),
        (Busy, "busy", false),
    ] {
        assert_eq!(error.as_str(), name);
        assert_eq!(error.is_configuration_fault(), configuration_fault, "{name}");
    }
}

#[test]
fn takes_routes_by_extension() {
    for (name, expect) in [
        ("report.doc", true),
        ("Report.DOC", true),
        ("letter.rtf", true),
        ("budget.xlsx", true),
        ("budget.xls", true),
        ("slides.pptx", true),
        ("slides.PPT", true),
        ("book.epub", true),
        ("/Documents/old/report.doc", true),
        ("report.docx", false),
        ("notes.txt", false),
        ("scan.pdf", false),
        ("doc", false),
        ("archive.doc.zip", false),
        ("folder.doc/readme", false),
        ("", false),
    ] {
        assert_eq!(Converter::takes(name), expect, "{name}");
    }
}

#[test]
fn text_is_normalised_like_the_extractor_does() {
    assert_eq!(normalise_text(b"\xEF\xBB\xBFa\r\nb\rc\n"), "a\nb\nc\n");
    assert_eq!(normalise_text(b"no bom\n"), "no bom\n");
    assert_eq!(normalise_text(b"bad \xFF byte"), "bad \u{FFFD} byte");
}

/// A converter stub that records request bodies, says "still running"
/// `running_count` times, then serves `result` as the text.
async fn recording_stub(
    running_count: usize,
    result: &'static [u8],
) -> (Stub, Arc<std::sync::Mutex<Vec<Value>>>) {
    #[derive(Clone)]
    struct StubState {
        base_url: String,
        requests: Arc<std::sync::Mutex<Vec<Value>>>,
        posts: Arc<AtomicUsize>,
        running_count: usize,
    }
    async fn answer(
        State(state): State<StubState>,
        axum::Json(body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        state.requests.lock().unwrap().push(body);
        if state.posts.fetch_add(1, Ordering::SeqCst) < state.running_count {
            return axum::Json(json!({"endConvert": false, "percent": 50}));
        }
        axum::Json(json!({
            "endConvert": true,
            "fileUrl": format!("{}/cache/abc/output.txt", state.base_url),
            "percent": 100,
        }))
    }
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorded = requests.clone();
    let stub = stub(move |base_url| {
        let state =
            StubState { base_url, requests, posts: Arc::new(AtomicUsize::new(0)), running_count };
        Router::new()
            .route("/converter", post(answer))
            .route("/cache/abc/output.txt", get(move || async move { result }))
            .with_state(state)
    })
    .await;
    (stub, recorded)
}

#[tokio::test]
async fn the_request_is_the_conversion_api_signed_with_the_secret() {
    let (stub, requests) = recording_stub(0, b"text").await;
    let converter = converter(&format!("{}/", stub.url), Some(SECRET)).await;
    let text = converter.convert(Bytes::from_static(b"doc"), "/Documents/Old Report.DOC").await;
    assert_eq!(text.unwrap(), "text");
    let mut request = requests.lock().unwrap()[0].clone();
    let token = request.as_object_mut().unwrap().remove("token").unwrap();
    let url = request["url"].as_str().unwrap().to_string();
    let token_part = url.strip_prefix(&format!("{}/lend/", converter.lend_url())).unwrap();
    assert_eq!(URL_SAFE_NO_PAD.decode(token_part).unwrap().len(), 32, "256-bit loan token");
    let key = request["key"].as_str().unwrap().to_string();
    assert!(key.len() <= 128);
    assert!(key.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_.=".contains(&byte)));
    assert_eq!(
        request,
        json!({
            "async": false,
            "filetype": "doc",
            "key": key,
            "outputtype": "txt",
            "title": "Old Report.DOC",
            "url": url,
        })
    );
    let payload =
        fake_nextcloud::converter::verify_hs256(SECRET, token.as_str().unwrap(), 0).unwrap();
    assert_eq!(Value::Object(payload), request, "the token signs the same fields");
    assert_eq!(converter.loans().outstanding(), 0, "the unfetched loan ended with the conversion");
    converter.shutdown().await;
}

#[tokio::test]
async fn without_a_secret_no_token_is_sent() {
    let (stub, requests) = recording_stub(0, b"text").await;
    let converter = converter(&stub.url, None).await;
    assert!(converter.convert(Bytes::from_static(b"doc"), "a.rtf").await.is_ok());
    assert!(requests.lock().unwrap()[0].get("token").is_none());
    converter.shutdown().await;
}

#[tokio::test]
async fn a_running_conversion_is_asked_again_with_the_same_key() {
    let (stub, requests) = recording_stub(2, b"\xEF\xBB\xBFdone\r\n").await;
    let converter = converter(&stub.url, Some(SECRET)).await;
    assert_eq!(converter.convert(Bytes::from_static(b"doc"), "a.ppt").await.unwrap(), "done\n");
    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|request| request == &requests[0]), "same key, same request");
    converter.shutdown().await;
}

#[tokio::test]
async fn polling_is_bounded() {
    let (stub, requests) = recording_stub(usize::MAX, b"never").await;
    let limits = ConverterLimits { poll_count_max: 3, ..test_limits() };
    let converter = converter_with(config(&stub.url, None), limits).await;
    let result = converter.convert(Bytes::from_static(b"doc"), "a.xls").await;
    assert_eq!(result, Err(ConvertError::Timeout));
    assert_eq!(requests.lock().unwrap().len(), 3);
    converter.shutdown().await;
}

#[tokio::test]
async fn a_result_past_its_bound_is_too_large() {
    const RESULT: &[u8] = &[b'a'; 2048];
    let (stub, _) = recording_stub(0, RESULT).await;
    let limits = ConverterLimits { result_length_max: 1024, ..test_limits() };
    let converter = converter_with(config(&stub.url, None), limits).await;
    let result = converter.convert(Bytes::from_static(b"doc"), "a.epub").await;
    assert_eq!(result, Err(ConvertError::TooLarge));
    converter.shutdown().await;
}

#[tokio::test]
async fn a_silent_converter_times_out_and_the_loan_ends() {
    assert_eq!(CONVERSION_TIME_MAX, Duration::from_secs(120));
    let stub = stub(|_| {
        Router::new().route(
            "/converter",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "{}"
            }),
        )
    })
    .await;
    let limits =
        ConverterLimits { conversion_time_max: Duration::from_millis(300), ..test_limits() };
    let converter = converter_with(config(&stub.url, None), limits).await;
    let result = convert_notes(&converter).await;
    assert_eq!(result, Err(ConvertError::Timeout));
    assert_eq!(converter.loans().outstanding(), 0, "a cancelled conversion ends its loan");
    converter.shutdown().await;
}

#[test]
fn the_config_debug_hides_the_secret() {
    let config = config("http://onlyoffice", Some(SECRET));
    let debug = format!("{config:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(debug.contains("<set>"));
}
