//! `POST /v1/embeddings` (and `/embeddings`), shaped like OpenAI's
//! embeddings API, so an embeddings client runs against the fake unchanged.
//!
//! The vectors are deterministic and NOT semantic. They are a hashed bag of
//! words: equal texts give equal vectors, texts sharing words are closer; it
//! knows nothing of meaning — never use it to measure retrieval quality.
//! A text is lower-cased and split on every character that is not
//! alphanumeric; each word is hashed with FNV-1a 64 (fixed, unlike std's
//! randomised hasher, so a vector is the same on every run and machine)
//! into one of `dimensions` buckets (default [`DIMENSIONS_DEFAULT`]), the
//! hash's top bit giving the sign; the counts are summed and L2-normalised.
//! A text with no words, or whose words cancel out, gets a fixed unit
//! vector: 1.0 on the first axis. `prompt_tokens` counts the words.
//!
//! We rejected serving a small real model: it is semantic but large, slow
//! to start, and its floats differ between machines, while a test of a
//! client needs the answer's shape and repeatable vectors, not meaning.
//!
//! Faults: only the global ones that mean the same for any request apply
//! (`error`, `cut` — half the JSON body, then the connection breaks — and
//! `delta_delay_ms`, waited once per input), and an embeddings request
//! counts against their `times`. `refuse_streaming_with_tools` and
//! `refuse_unparsable_arguments` are about chat messages and are ignored;
//! script rules match conversations and are never consulted. Requests are
//! recorded in their own log ([`crate::record::RecordedEmbeddings`]).

use crate::chat::{answer_fault, body_refused, check_key, json_response, status_fault};
use crate::error::ApiError;
use crate::faults::Faults;
use crate::record::RecordedEmbeddings;
use crate::{AppState, State as ServerState, request};
use axum::Router;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::Response;
use axum::routing::post;
use bytes::Bytes;
use http::HeaderMap;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// The length of a vector when the request names no `dimensions`.
pub const DIMENSIONS_DEFAULT: usize = 384;
/// The longest vector this fake makes.
pub const DIMENSIONS_MAX: usize = 4096;
/// The most texts one request may hold, as OpenAI allows.
pub const INPUTS_MAX: usize = 2048;

/// A request that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsRequest {
    /// The body exactly as received, for the recorder.
    pub body: Value,
    pub model: Option<String>,
    /// The texts, in order; `input` as a string is one text.
    pub inputs: Vec<String>,
    pub encoding: Encoding,
    pub dimensions: usize,
}

/// `encoding_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// A JSON array of numbers.
    Float,
    /// The base64 of the little-endian f32s.
    Base64,
}

/// One text's vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Unit length.
    pub vector: Vec<f32>,
    /// The words counted (the text's `prompt_tokens`).
    pub words: usize,
}

pub fn routes() -> Router<AppState> {
    // Without `/v1` too, like the chat routes.
    Router::new().route("/v1/embeddings", post(embeddings)).route("/embeddings", post(embeddings))
}

/// The hashed bag of words of `text` (see the module doc).
pub fn embed(text: &str, dimensions: usize) -> Embedding {
    assert!(dimensions >= 1, "a vector has at least one dimension");
    let words = words(text);
    let mut vector = vec![0.0_f32; dimensions];
    let buckets = u64::try_from(dimensions).expect("a usize fits in a u64");
    for word in &words {
        let hash = fnv1a_64(word.as_bytes());
        let bucket = usize::try_from(hash % buckets).expect("below dimensions");
        vector[bucket] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = vector.iter().map(|component| f64::from(*component).powi(2)).sum::<f64>().sqrt();
    if norm == 0.0 {
        vector.fill(0.0);
        vector[0] = 1.0;
    } else {
        for component in &mut vector {
            *component = (f64::from(*component) / norm) as f32;
        }
    }
    Embedding { vector, words: words.len() }
}

/// The words of `text`: lower-cased, split on every character that is not
/// alphanumeric.
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// FNV-1a, 64 bits.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(PRIME))
}

/// What `encoding_format: "base64"` sends: the base64 (standard alphabet,
/// padded) of the components as little-endian f32s.
pub fn base64_le(vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|component| component.to_le_bytes()).collect();
    base64(&bytes)
}

impl EmbeddingsRequest {
    /// Parses and validates a body; every refusal is a 400 that says what
    /// to send instead.
    pub fn parse(bytes: &[u8]) -> Result<EmbeddingsRequest, ApiError> {
        let body = request::json_object(bytes)?;
        let model = match body.get("model") {
            None | Some(Value::Null) => None,
            Some(Value::String(model)) => Some(model.clone()),
            Some(_) => {
                return Err(ApiError::invalid(
                    "Invalid type for 'model': expected a string, the name of the embeddings model.",
                    Some("model"),
                    Some("invalid_type"),
                ));
            }
        };
        let inputs = inputs(body.get("input"))?;
        let encoding = encoding(body.get("encoding_format"))?;
        let dimensions = dimensions(body.get("dimensions"))?;
        Ok(EmbeddingsRequest { body, model, inputs, encoding, dimensions })
    }
}

/// What the answer's JSON is made of: OpenAI's fields, in its order.
#[derive(Serialize)]
struct Answer<'a> {
    object: &'static str,
    data: Vec<Datum>,
    model: &'a str,
    usage: AnswerUsage,
}

#[derive(Serialize)]
struct Datum {
    object: &'static str,
    index: usize,
    embedding: Encoded,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Encoded {
    Float(Vec<f32>),
    Base64(String),
}

#[derive(Serialize)]
struct AnswerUsage {
    prompt_tokens: usize,
    total_tokens: usize,
}

async fn embeddings(
    State(shared): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    check_key(&shared, &headers)?;
    let body = body.map_err(body_refused)?;
    let request = EmbeddingsRequest::parse(&body)?;
    let faults = decide(&mut shared.state(), &request)?;
    let model = request.model.as_deref().unwrap_or(&shared.model);
    let text = answer_text(&request, model);
    let inputs = u32::try_from(request.inputs.len()).expect("at most INPUTS_MAX inputs");
    let delay = faults.delta_delay().checked_mul(inputs).unwrap_or(Duration::MAX);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    Ok(json_response(text, faults.cut.is_some()))
}

/// The global faults for this request, or the error one of them answers
/// with. Records the request.
fn decide(state: &mut ServerState, request: &EmbeddingsRequest) -> Result<Faults, ApiError> {
    state.requests_seen += 1;
    let faults = state.faults.take_for_request();
    let mut record = RecordedEmbeddings {
        seq: state.requests_seen,
        inputs: request.inputs.len(),
        fault: None,
        body: request.body.clone(),
    };
    let decision = match status_fault(&faults) {
        Some((name, error)) => {
            record.fault = Some(name);
            Err(error)
        }
        None => {
            record.fault = answer_fault(&faults);
            Ok(faults)
        }
    };
    state.embeddings_log.push(record);
    decision
}

/// The answer's JSON text.
fn answer_text(request: &EmbeddingsRequest, model: &str) -> String {
    let mut words = 0;
    let data = request
        .inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let embedding = embed(text, request.dimensions);
            words += embedding.words;
            let embedding = match request.encoding {
                Encoding::Float => Encoded::Float(embedding.vector),
                Encoding::Base64 => Encoded::Base64(base64_le(&embedding.vector)),
            };
            Datum { object: "embedding", index, embedding }
        })
        .collect();
    let answer = Answer {
        object: "list",
        data,
        model,
        usage: AnswerUsage { prompt_tokens: words, total_tokens: words },
    };
    // Serialized directly, not through a `Value`, so each f32 is written
    // as the shortest text that reads back as that f32.
    serde_json::to_string(&answer).expect("an answer serializes")
}

/// `input`: a string, or an array of 1 to [`INPUTS_MAX`] strings, none
/// empty.
fn inputs(input: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let refused = |message: String, code: Option<&'static str>| {
        ApiError::invalid(message, Some("input"), code)
    };
    let items = match input {
        None | Some(Value::Null) => {
            return Err(refused(
                "Missing required parameter: 'input'. Send the text to embed: a string, or an array of strings (one vector each).".to_string(),
                Some("missing_required_parameter"),
            ));
        }
        Some(Value::String(text)) => return text_of(text, "input").map(|text| vec![text]),
        Some(Value::Array(items)) => items,
        Some(Value::Number(_)) => return Err(refused(tokens_refused("input"), None)),
        Some(other) => {
            return Err(refused(
                format!(
                    "Invalid type for 'input': expected a string or an array of strings, got {}.",
                    kind(other)
                ),
                Some("invalid_type"),
            ));
        }
    };
    if items.is_empty() {
        return Err(refused(
            "Invalid 'input': empty array. Send at least one text: a string, or an array of 1 to 2048 strings.".to_string(),
            Some("empty_array"),
        ));
    }
    if items.len() > INPUTS_MAX {
        return Err(refused(
            format!(
                "Invalid 'input': {} texts, more than the {INPUTS_MAX} one request may hold. Send at most {INPUTS_MAX} strings per request and the rest in further requests.",
                items.len()
            ),
            None,
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let name = format!("input[{index}]");
            match item {
                Value::String(text) => text_of(text, &name),
                Value::Number(_) => Err(refused(tokens_refused("input"), None)),
                Value::Array(tokens) if tokens.iter().all(Value::is_number) => {
                    Err(refused(tokens_refused(&name), None))
                }
                other => Err(refused(
                    format!("Invalid type for '{name}': expected a string, got {}.", kind(other)),
                    Some("invalid_type"),
                )),
            }
        })
        .collect()
}

/// One text, refused when empty.
fn text_of(text: &str, name: &str) -> Result<String, ApiError> {
    if text.is_empty() {
        return Err(ApiError::invalid(
            format!(
                "Invalid '{name}': an empty string. Send text of at least one character, and leave empty texts out of the request."
            ),
            Some("input"),
            None,
        ));
    }
    Ok(text.to_string())
}

fn tokens_refused(name: &str) -> String {
    format!(
        "Invalid '{name}': token ids. This fake model embeds text only: send 'input' as a string or an array of strings, not as token ids."
    )
}

fn encoding(encoding_format: Option<&Value>) -> Result<Encoding, ApiError> {
    match encoding_format {
        None | Some(Value::Null) => Ok(Encoding::Float),
        Some(Value::String(format)) if format == "float" => Ok(Encoding::Float),
        Some(Value::String(format)) if format == "base64" => Ok(Encoding::Base64),
        Some(other) => Err(ApiError::invalid(
            format!(
                "Invalid 'encoding_format': {other}. Send \"float\" (the default) or \"base64\"."
            ),
            Some("encoding_format"),
            None,
        )),
    }
}

fn dimensions(dimensions: Option<&Value>) -> Result<usize, ApiError> {
    let refused = |message: String| Err(ApiError::invalid(message, Some("dimensions"), None));
    let Some(dimensions) = dimensions.filter(|value| !value.is_null()) else {
        return Ok(DIMENSIONS_DEFAULT);
    };
    match dimensions.as_i64() {
        Some(count) if count < 1 => refused(format!(
            "Invalid 'dimensions': {count}. Send a whole number of at least 1, or leave it out for {DIMENSIONS_DEFAULT}."
        )),
        Some(count) if count <= DIMENSIONS_MAX as i64 => {
            Ok(usize::try_from(count).expect("between 1 and DIMENSIONS_MAX"))
        }
        _ if dimensions.is_u64() || dimensions.is_i64() => refused(format!(
            "Invalid 'dimensions': {dimensions}, more than this fake's {DIMENSIONS_MAX}. Send at most {DIMENSIONS_MAX}, or leave it out for {DIMENSIONS_DEFAULT}."
        )),
        _ => refused(format!(
            "Invalid 'dimensions': {dimensions}. Send a whole number of at least 1, or leave it out for {DIMENSIONS_DEFAULT}."
        )),
    }
}

/// A JSON value's kind, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Base64, standard alphabet, padded (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    use ::base64::Engine;
    ::base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_published_function() {
        // The FNV test vectors (draft-eastlake-fnv, FNV-1a 64).
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn base64_is_rfc_4648() {
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(bytes), text);
        }
        // 1.0f32 is 00 00 80 3f little-endian.
        assert_eq!(base64_le(&[1.0]), "AACAPw==");
    }

    #[test]
    fn words_are_lower_cased_and_split_on_what_is_not_alphanumeric() {
        assert_eq!(
            words("Budget prévisionnel d'Apollo, 2024!"),
            ["budget", "prévisionnel", "d", "apollo", "2024"]
        );
        assert!(words(" -- ?! ").is_empty());
    }

    #[test]
    fn a_text_without_words_is_the_first_axis() {
        let embedding = embed("?!", 4);
        assert_eq!(embedding.vector, [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(embedding.words, 0);
    }

    #[test]
    fn words_that_cancel_out_give_the_first_axis_too() {
        // One dimension: every word lands in it, with its hash's sign.
        let sign = |word: &str| fnv1a_64(word.as_bytes()) >> 63;
        let candidates = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
        let positive = candidates.iter().find(|word| sign(word) == 0).unwrap();
        let negative = candidates.iter().find(|word| sign(word) == 1).unwrap();
        let embedding = embed(&format!("{positive} {negative}"), 1);
        assert_eq!(embedding.words, 2);
        assert_eq!(embedding.vector, [1.0]);
    }

    #[test]
    fn a_repeated_word_points_the_same_way() {
        assert_eq!(embed("apollo", 16).vector, embed("Apollo apollo APOLLO", 16).vector);
    }

    #[test]
    fn defaults_when_only_input_is_sent() {
        let request = EmbeddingsRequest::parse(br#"{"input": "hello"}"#).unwrap();
        assert_eq!(request.model, None);
        assert_eq!(request.inputs, ["hello"]);
        assert_eq!(request.encoding, Encoding::Float);
        assert_eq!(request.dimensions, DIMENSIONS_DEFAULT);
    }

    #[test]
    fn dimensions_are_bounded() {
        let parse = |dimensions: &str| {
            EmbeddingsRequest::parse(
                format!(r#"{{"input": "x", "dimensions": {dimensions}}}"#).as_bytes(),
            )
            .map(|request| request.dimensions)
        };
        assert_eq!(parse("1"), Ok(1));
        assert_eq!(parse("4096"), Ok(DIMENSIONS_MAX));
        assert!(parse("4097").is_err());
        assert!(parse("18446744073709551615").is_err());
        assert!(parse("0").is_err());
        assert!(parse("-3").is_err());
        assert!(parse("1.5").is_err());
        assert!(parse("\"8\"").is_err());
    }
}
