//! The client's wire, against a stand-in endpoint that answers what a test
//! tells it to (the real model is exercised in `tests/embeddings.rs`).

use super::*;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A request as the stand-in saw it: its Authorization header and body.
type Seen = (Option<String>, Value);

/// What the stand-in saw and what it answers.
#[derive(Clone, Default)]
struct Endpoint {
    seen: Arc<Mutex<Vec<Seen>>>,
    answer: Arc<Mutex<Option<(StatusCode, Value)>>>,
}

async fn embeddings(
    State(endpoint): State<Endpoint>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let authorization =
        headers.get("authorization").map(|value| value.to_str().unwrap().to_string());
    endpoint.seen.lock().unwrap().push((authorization, body.clone()));
    if let Some((status, answer)) = endpoint.answer.lock().unwrap().clone() {
        return (status, Json(answer));
    }
    // In reverse order, as the API allows: the client must sort by index.
    let inputs = body["input"].as_array().unwrap().clone();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| {
            let length = text.as_str().unwrap().chars().count() as f32;
            json!({"object": "embedding", "index": index, "embedding": [length, 1.0]})
        })
        .collect();
    (StatusCode::OK, Json(json!({"object": "list", "data": data, "model": body["model"]})))
}

async fn serve(endpoint: Endpoint) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().route("/v1/embeddings", post(embeddings)).with_state(endpoint);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}/v1")
}

fn embedder(url: &str, key: Option<&str>) -> Embedder {
    let config = EmbeddingsConfig {
        url: url.to_string(),
        model: "small-model".to_string(),
        key: key.map(str::to_string),
        ..EmbeddingsConfig::default()
    };
    Embedder::new(config, reqwest::Client::new())
}

fn texts(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|text| text.to_string()).collect()
}

#[tokio::test]
async fn vectors_come_back_in_input_order_with_the_model_and_key_sent() {
    let endpoint = Endpoint::default();
    let url = serve(endpoint.clone()).await;
    let vectors = embedder(&format!("{url}/"), Some("sk-local"))
        .embed(&texts(&["a", "bbb", "cc"]))
        .await
        .unwrap();
    assert_eq!(vectors, vec![vec![1.0, 1.0], vec![3.0, 1.0], vec![2.0, 1.0]]);
    let seen = endpoint.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0.as_deref(), Some("Bearer sk-local"));
    assert_eq!(
        seen[0].1,
        json!({"model": "small-model", "input": ["a", "bbb", "cc"], "encoding_format": "float"})
    );
}

#[tokio::test]
async fn no_key_sends_no_authorization_and_long_passages_are_cut_on_a_character() {
    let endpoint = Endpoint::default();
    let url = serve(endpoint.clone()).await;
    let long = "é".repeat(INPUT_CHARS_MAX + 10);
    let vectors = embedder(&url, None).embed(&[long]).await.unwrap();
    assert_eq!(vectors, vec![vec![INPUT_CHARS_MAX as f32, 1.0]]);
    assert_eq!(endpoint.seen.lock().unwrap()[0].0, None);
}

#[tokio::test]
async fn an_openai_error_is_reported_with_its_status_and_message() {
    let endpoint = Endpoint::default();
    *endpoint.answer.lock().unwrap() = Some((
        StatusCode::NOT_FOUND,
        json!({"error": {"message": "The model `small-model` does not exist.", "type": "invalid_request_error"}}),
    ));
    let url = serve(endpoint).await;
    let error = embedder(&url, None).embed(&texts(&["a"])).await.unwrap_err();
    assert_eq!(
        error,
        EmbedError::Refused {
            status: 404,
            message: "The model `small-model` does not exist.".to_string()
        }
    );
}

#[tokio::test]
async fn answers_that_do_not_match_the_inputs_are_malformed() {
    let cases = [
        (json!({"data": []}), "0 vectors for 2 inputs"),
        (
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}),
            "index 0 twice",
        ),
        (
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}),
            "index 5 out of range",
        ),
        (
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
            "vectors of 1 and 2 dimensions in one answer",
        ),
        (
            json!({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}]}),
            "an empty vector",
        ),
    ];
    for (answer, expected) in cases {
        let endpoint = Endpoint::default();
        *endpoint.answer.lock().unwrap() = Some((StatusCode::OK, answer));
        let url = serve(endpoint).await;
        let error = embedder(&url, None).embed(&texts(&["a", "b"])).await.unwrap_err();
        assert_eq!(error, EmbedError::Malformed(expected.to_string()));
    }
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let error = embedder(&url, None).embed(&texts(&["a"])).await.unwrap_err();
    assert!(matches!(error, EmbedError::Unreachable(_)), "{error:?}");
}

#[test]
fn the_key_is_not_in_debug_output() {
    let config = EmbeddingsConfig {
        url: "http://embeddings/v1".to_string(),
        model: "m".to_string(),
        key: Some("sk-secret".to_string()),
        ..EmbeddingsConfig::default()
    };
    let debug = format!("{config:?}");
    assert!(!debug.contains("sk-secret") && debug.contains("<set>"), "{debug}");
}
