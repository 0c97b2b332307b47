//! `POST /v1/embeddings` over a real socket: OpenAI's answer shape, the
//! hashed bag of words' properties (deterministic, unit length, shared
//! words closer — never meaning), base64, `dimensions`, every 400 with what
//! to send instead, faults and the request log.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{admin_json, http, start, start_with};
use fake_model::embeddings::DIMENSIONS_DEFAULT;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn post_embeddings(fake: &fake_model::FakeModel, body: &Value) -> reqwest::Response {
    http().post(format!("{}/v1/embeddings", fake.url())).json(body).send().await.unwrap()
}

/// The answer to `body`, which must be a 200.
async fn embeddings(fake: &fake_model::FakeModel, body: &Value) -> Value {
    let response = post_embeddings(fake, body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The float vectors of an answer, in `data` order.
fn vectors(answer: &Value) -> Vec<Vec<f32>> {
    answer["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|datum| {
            datum["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|component| component.as_f64().unwrap() as f32)
                .collect()
        })
        .collect()
}

/// The vectors of `texts` in one request.
async fn embed(fake: &fake_model::FakeModel, texts: &[&str]) -> Vec<Vec<f32>> {
    vectors(&embeddings(fake, &json!({"model": "m", "input": texts})).await)
}

fn dot(left: &[f32], right: &[f32]) -> f64 {
    assert_eq!(left.len(), right.len());
    left.iter().zip(right).map(|(l, r)| f64::from(*l) * f64::from(*r)).sum()
}

fn cosine(left: &[f32], right: &[f32]) -> f64 {
    dot(left, right) / (dot(left, left).sqrt() * dot(right, right).sqrt())
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

/// Standard padded base64, decoded independently of the server's encoder.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |character: u8| -> u32 {
        match character {
            b'A'..=b'Z' => u32::from(character - b'A'),
            b'a'..=b'z' => u32::from(character - b'a') + 26,
            b'0'..=b'9' => u32::from(character - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            other => panic!("{other} is not base64"),
        }
    };
    assert_eq!(text.len() % 4, 0, "padded");
    let mut bytes = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let kept = quad.iter().take_while(|character| **character != b'=').count();
        let group = quad[..kept].iter().enumerate().fold(0, |group, (position, character)| {
            group | value(*character) << (18 - 6 * position)
        });
        bytes.extend(group.to_be_bytes()[1..kept].iter());
    }
    bytes
}

#[tokio::test]
async fn the_answer_has_openai_shape() {
    let fake = start("").await;
    let answer = embeddings(
        &fake,
        &json!({"model": "text-embedding-3-small", "input": ["Budget d'Apollo", "kickoff", "one two three"]}),
    )
    .await;
    assert_eq!(keys(&answer), ["data", "model", "object", "usage"]);
    assert_eq!(answer["object"], "list");
    assert_eq!(answer["model"], "text-embedding-3-small", "the requested model, echoed");
    let data = answer["data"].as_array().unwrap();
    assert_eq!(data.len(), 3);
    for (index, datum) in data.iter().enumerate() {
        assert_eq!(keys(datum), ["embedding", "index", "object"]);
        assert_eq!(datum["object"], "embedding");
        assert_eq!(datum["index"], index, "in input order");
        assert_eq!(datum["embedding"].as_array().unwrap().len(), DIMENSIONS_DEFAULT);
    }
    // Words: budget, d, apollo; kickoff; one, two, three.
    assert_eq!(answer["usage"], json!({"prompt_tokens": 7, "total_tokens": 7}));
    let vectors = vectors(&answer);
    assert_eq!(vectors[1], embed(&fake, &["kickoff"]).await[0], "each input on its own");
    fake.shutdown().await;
}

#[tokio::test]
async fn a_string_input_is_one_text() {
    let fake = start("").await;
    let answer = embeddings(&fake, &json!({"model": "m", "input": "Budget prévisionnel"})).await;
    assert_eq!(answer["data"].as_array().unwrap().len(), 1);
    assert_eq!(answer["data"][0]["index"], 0);
    assert_eq!(answer["usage"]["prompt_tokens"], 2);
    assert_eq!(vectors(&answer)[0], embed(&fake, &["Budget prévisionnel"]).await[0]);
    // Without a model the server's own name is answered, as chat does.
    let answer = embeddings(&fake, &json!({"input": "x"})).await;
    assert_eq!(answer["model"], fake_model::MODEL_DEFAULT);
    fake.shutdown().await;
}

#[tokio::test]
async fn vectors_are_deterministic() {
    let texts = ["Le budget prévisionnel d'Apollo", "kickoff meeting", "?!"];
    let fake = start("").await;
    let first = embed(&fake, &texts).await;
    assert_eq!(first, embed(&fake, &texts).await);
    fake.shutdown().await;
    // Another server (another process's hasher seed) gives the same floats.
    let other = start("").await;
    assert_eq!(first, embed(&other, &texts).await);
    // Equal texts and texts equal but for case and punctuation: cosine 1.
    let same = embed(&other, &["Apollo budget", "Apollo budget", "apollo, BUDGET!"]).await;
    assert_eq!(same[0], same[1]);
    assert!((cosine(&same[0], &same[1]) - 1.0).abs() < 1e-6);
    assert!((cosine(&same[0], &same[2]) - 1.0).abs() < 1e-6);
    other.shutdown().await;
}

#[tokio::test]
async fn texts_sharing_words_are_closer_than_unrelated_ones() {
    let fake = start("").await;
    let vectors = embed(
        &fake,
        &[
            "budget prévisionnel du projet apollo",
            "le budget du projet apollo en mars",
            "recette de la tarte aux pommes",
        ],
    )
    .await;
    let related = cosine(&vectors[0], &vectors[1]);
    let unrelated = cosine(&vectors[0], &vectors[2]);
    assert!(related > 0.5, "{related}");
    assert!(unrelated < 0.2, "{unrelated}");
    assert!(related > unrelated);
    fake.shutdown().await;
}

#[tokio::test]
async fn vectors_have_unit_length() {
    let fake = start("").await;
    let texts =
        ["one", "a longer text with several words, some of them repeated: words words", "?!"];
    for vector in embed(&fake, &texts).await {
        assert!((dot(&vector, &vector) - 1.0).abs() < 1e-5);
    }
    // No words: the fixed vector along the first axis, no tokens.
    let answer = embeddings(&fake, &json!({"model": "m", "input": " -- ?! "})).await;
    let vector = &vectors(&answer)[0];
    assert_eq!(vector[0], 1.0);
    assert!(vector[1..].iter().all(|component| *component == 0.0));
    assert_eq!(answer["usage"]["prompt_tokens"], 0);
    fake.shutdown().await;
}

#[tokio::test]
async fn base64_decodes_to_the_same_floats() {
    let fake = start("").await;
    let texts = ["Budget d'Apollo", "?!"];
    let floats = embed(&fake, &texts).await;
    let answer =
        embeddings(&fake, &json!({"model": "m", "input": texts, "encoding_format": "base64"}))
            .await;
    for (datum, floats) in answer["data"].as_array().unwrap().iter().zip(&floats) {
        let bytes = base64_decode(datum["embedding"].as_str().unwrap());
        let decoded: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|four| f32::from_le_bytes(four.try_into().unwrap()))
            .collect();
        assert_eq!(&decoded, floats);
    }
    let explicit =
        embeddings(&fake, &json!({"model": "m", "input": texts, "encoding_format": "float"})).await;
    assert_eq!(vectors(&explicit), floats);
    fake.shutdown().await;
}

#[tokio::test]
async fn dimensions_are_honoured() {
    let fake = start("").await;
    for dimensions in [1, 8, 3072] {
        let answer = embeddings(
            &fake,
            &json!({"model": "m", "input": ["budget apollo", "?!"], "dimensions": dimensions}),
        )
        .await;
        for vector in vectors(&answer) {
            assert_eq!(vector.len(), dimensions);
            assert!((dot(&vector, &vector) - 1.0).abs() < 1e-5);
        }
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn every_refusal_is_a_400_saying_what_to_send() {
    let fake = start("").await;
    let too_many: Vec<String> = (0..2049).map(|index| format!("text {index}")).collect();
    let cases = [
        (json!({"model": "m", "input": [[1, 2, 3]]}), "input", "not as token ids"),
        (json!({"model": "m", "input": [1, 2, 3]}), "input", "not as token ids"),
        (json!({"model": "m", "input": []}), "input", "Send at least one text"),
        (json!({"model": "m", "input": ""}), "input", "Send text of at least one character"),
        (json!({"model": "m", "input": ["a", ""]}), "input", "Invalid 'input[1]': an empty string"),
        (
            json!({"model": "m", "input": too_many}),
            "input",
            "Send at most 2048 strings per request",
        ),
        (json!({"model": "m", "input": [{"text": "a"}]}), "input", "expected a string"),
        (json!({"model": "m"}), "input", "Missing required parameter: 'input'"),
        (
            json!({"model": "m", "input": "a", "encoding_format": "binary"}),
            "encoding_format",
            "Send \"float\" (the default) or \"base64\"",
        ),
        (json!({"model": "m", "input": "a", "dimensions": 0}), "dimensions", "at least 1"),
        (json!({"model": "m", "input": "a", "dimensions": -4}), "dimensions", "at least 1"),
        (json!({"model": "m", "input": "a", "dimensions": 5000}), "dimensions", "at most 4096"),
        (json!({"model": 7, "input": "a"}), "model", "expected a string"),
    ];
    for (body, param, says) in cases {
        let response = post_embeddings(&fake, &body).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(keys(&error["error"]), ["code", "message", "param", "type"]);
        assert_eq!(error["error"]["type"], "invalid_request_error");
        assert_eq!(error["error"]["param"], param, "{body}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    let tokens = post_embeddings(&fake, &json!({"model": "m", "input": [[1, 2]]})).await;
    let error: Value = tokens.json().await.unwrap();
    assert_eq!(error["error"]["code"], Value::Null);
    let not_json = http()
        .post(format!("{}/v1/embeddings", fake.url()))
        .header("content-type", "application/json")
        .body("{input")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), 400);
    assert!(fake.embeddings_requests().is_empty(), "refused requests are not recorded");
    fake.shutdown().await;
}

#[tokio::test]
async fn embeddings_are_recorded_apart_from_chat() {
    let fake = start("[[rules]]\ntext = \"hi\"").await;
    common::post(&fake, &common::ask("hello", &[], false)).await;
    let body = json!({"model": "m", "input": ["a", "b"], "user": "ignored"});
    embeddings(&fake, &body).await;
    let log = admin_json(&fake, reqwest::Method::GET, "/__fake/requests").await;
    assert_eq!(log["requests"].as_array().unwrap().len(), 1, "the chat log holds only chat");
    assert_eq!(
        log["embeddings"],
        json!([{"seq": 2, "inputs": 2, "fault": null, "body": body}]),
        "one seq for both logs; the body as sent"
    );
    assert_eq!(log["embeddings_dropped"], 0);
    assert_eq!(fake.embeddings_requests().len(), 1, "the library sees the same log");
    assert_eq!(fake.requests().len(), 1);
    let cleared = admin_json(&fake, reqwest::Method::DELETE, "/__fake/requests").await;
    assert_eq!(cleared, json!({"cleared": 2}), "both logs");
    assert!(fake.embeddings_requests().is_empty());
    fake.shutdown().await;
}

#[tokio::test]
async fn generic_faults_apply_and_chat_only_ones_do_not() {
    let fake =
        start("[faults]\nrefuse_streaming_with_tools = true\nrefuse_unparsable_arguments = true")
            .await;
    let body = json!({"model": "m", "input": ["a", "b", "c", "d"]});
    embeddings(&fake, &body).await;

    let put = |faults: Value| {
        let fake = &fake;
        async move {
            let response = common::admin_put(fake, "/__fake/faults", &faults).await;
            assert_eq!(response.status(), 200);
        }
    };
    put(json!({"error": "server_error", "times": 1})).await;
    let response = post_embeddings(&fake, &body).await;
    assert_eq!(response.status(), 500);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["type"], "server_error");
    embeddings(&fake, &body).await; // `times = 1` was used by the request above.

    put(json!({"error": "rate_limit", "retry_after_seconds": 4})).await;
    let response = post_embeddings(&fake, &body).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "4");

    put(json!({"cut": "mid_text"})).await;
    let response = post_embeddings(&fake, &body).await;
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.is_err(), "the body breaks off");

    put(json!({"delta_delay_ms": 50})).await;
    let started = Instant::now();
    embeddings(&fake, &body).await;
    assert!(started.elapsed() >= Duration::from_millis(200), "50 ms for each of 4 inputs");

    let faults: Vec<Value> =
        fake.embeddings_requests().iter().map(|record| json!(record.fault)).collect();
    assert_eq!(
        faults,
        [
            Value::Null,
            json!("server_error"),
            Value::Null,
            json!("rate_limit"),
            json!("cut_mid_text"),
            json!("slow_deltas"),
        ]
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn without_v1_and_behind_the_api_key() {
    let fake =
        start_with(fake_model::Config { api_key: Some("sk-test".into()), ..Default::default() })
            .await;
    let body = json!({"model": "m", "input": "a"});
    for path in ["/v1/embeddings", "/embeddings"] {
        let url = format!("{}{path}", fake.url());
        let refused = http().post(&url).json(&body).send().await.unwrap();
        assert_eq!(refused.status(), 401, "{path}");
        let answered = http().post(&url).bearer_auth("sk-test").json(&body).send().await.unwrap();
        assert_eq!(answered.status(), 200, "{path}");
        let answer: Value = answered.json().await.unwrap();
        assert_eq!(answer["object"], "list");
    }
    // The models list is unchanged.
    let models: Value = http()
        .get(format!("{}/v1/models", fake.url()))
        .bearer_auth("sk-test")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], fake_model::MODEL_DEFAULT);
    fake.shutdown().await;
}
