//! The semantic channel's input side (issue 17 §3): passages are embedded
//! by an OpenAI-compatible `/v1/embeddings` endpoint — what Ollama,
//! llama.cpp, vLLM and TEI serve — in background passes after reading, and
//! the vectors go on the passages' rowids ([`super::store::vectors`]).
//!
//! Off by default. The endpoint receives passage text, so it is as
//! sensitive as the document converter: keep it inside the deployment
//! (docs/operating.md). Its key, when it needs one, comes from the
//! environment, never a flag.

use super::Index;
use super::store::vectors;
use serde::Deserialize;
use std::time::Duration;

/// Passages sent in one request (OpenAI accepts up to 2048 inputs; a small
/// batch keeps one request's latency and memory bounded on a CPU server).
pub const BATCH: usize = 32;
/// Passages embedded per background pass; the next search starts the next.
pub const PASS_PASSAGES: usize = 256;
/// Characters of a passage sent: small embedding models read a few hundred
/// tokens and truncate the rest themselves; this bounds the request.
pub const INPUT_CHARS_MAX: usize = 4_000;
/// How long one embeddings request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Where passages are embedded.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EmbeddingsConfig {
    /// The API base, e.g. `http://embeddings:8080/v1`; requests go to
    /// `{url}/embeddings`.
    pub url: String,
    /// The `model` sent with every request and stored with every vector.
    pub model: String,
    /// A bearer key, for endpoints that want one.
    pub key: Option<String>,
    /// Put before a search's query, and before every passage, for the
    /// models that were trained with them (E5: `query: ` and `passage: `;
    /// nomic-embed: `search_query: ` and `search_document: `). Empty: none.
    pub query_prefix: String,
    pub passage_prefix: String,
}

impl EmbeddingsConfig {
    /// The name vectors are stored under: the model's, and the passage
    /// prefix when there is one, so that changing either embeds again.
    pub fn stored_model(&self) -> String {
        if self.passage_prefix.is_empty() {
            self.model.clone()
        } else {
            format!("{} with {:?}", self.model, self.passage_prefix)
        }
    }
}

impl std::fmt::Debug for EmbeddingsConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EmbeddingsConfig")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .field("query_prefix", &self.query_prefix)
            .field("passage_prefix", &self.passage_prefix)
            .finish()
    }
}

/// Why a request for vectors got none. Logged for the operator; no user
/// ever sees it (a search without vectors is a lexical search).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EmbedError {
    #[error("the embeddings endpoint did not answer: {0}")]
    Unreachable(String),
    #[error("the embeddings endpoint answered {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("the embeddings endpoint's answer is not what the OpenAI embeddings API returns: {0}")]
    Malformed(String),
}

/// An OpenAI-compatible embeddings client.
#[derive(Clone)]
pub struct Embedder {
    config: EmbeddingsConfig,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    index: usize,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: String,
}

impl Embedder {
    pub fn new(config: EmbeddingsConfig, http: reqwest::Client) -> Embedder {
        Embedder { config, http }
    }

    /// The name its vectors are stored under
    /// ([`EmbeddingsConfig::stored_model`]).
    pub fn model(&self) -> String {
        self.config.stored_model()
    }

    /// Passages' vectors, each text behind the passage prefix.
    pub async fn embed_passages(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefix = &self.config.passage_prefix;
        if prefix.is_empty() {
            return self.embed(texts).await;
        }
        let prefixed: Vec<String> = texts.iter().map(|text| format!("{prefix}{text}")).collect();
        self.embed(&prefixed).await
    }

    /// A search query's vector, behind the query prefix.
    pub async fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let prefixed = format!("{}{text}", self.config.query_prefix);
        let mut vectors = self.embed(&[prefixed]).await?;
        vectors.pop().ok_or_else(|| EmbedError::Malformed("no vector for the query".to_string()))
    }

    /// One vector per text, in order, all of one dimension.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<&str> = texts.iter().map(|text| truncated(text)).collect();
        let url = format!("{}/embeddings", self.config.url.trim_end_matches('/'));
        let mut request = self.http.post(url).timeout(REQUEST_TIMEOUT).json(&serde_json::json!({
            "model": self.config.model,
            "input": inputs,
            "encoding_format": "float",
        }));
        if let Some(key) = &self.config.key {
            request = request.bearer_auth(key);
        }
        let response =
            request.send().await.map_err(|error| EmbedError::Unreachable(error.to_string()))?;
        let status = response.status();
        let body =
            response.bytes().await.map_err(|error| EmbedError::Unreachable(error.to_string()))?;
        if !status.is_success() {
            let message = serde_json::from_slice::<ErrorAnswer>(&body)
                .map(|answer| answer.error.message)
                .unwrap_or_else(|_| String::from_utf8_lossy(&body).chars().take(200).collect());
            return Err(EmbedError::Refused { status: status.as_u16(), message });
        }
        let answer: Answer = serde_json::from_slice(&body)
            .map_err(|error| EmbedError::Malformed(error.to_string()))?;
        in_order(answer.data, texts.len())
    }
}

/// The data of an answer in input order: every index once, one dimension,
/// no empty or non-finite vector.
fn in_order(data: Vec<Datum>, expected: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    if data.len() != expected {
        return Err(EmbedError::Malformed(format!("{} vectors for {expected} inputs", data.len())));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for datum in data {
        let slot = vectors
            .get_mut(datum.index)
            .ok_or_else(|| EmbedError::Malformed(format!("index {} out of range", datum.index)))?;
        if slot.replace(datum.embedding).is_some() {
            return Err(EmbedError::Malformed(format!("index {} twice", datum.index)));
        }
    }
    let vectors: Vec<Vec<f32>> = vectors.into_iter().flatten().collect();
    let dimensions = vectors.first().map_or(0, Vec::len);
    if dimensions == 0 {
        return Err(EmbedError::Malformed("an empty vector".to_string()));
    }
    if let Some(odd) = vectors.iter().find(|vector| vector.len() != dimensions) {
        return Err(EmbedError::Malformed(format!(
            "vectors of {dimensions} and {} dimensions in one answer",
            odd.len()
        )));
    }
    if vectors.iter().flatten().any(|component| !component.is_finite()) {
        return Err(EmbedError::Malformed("a component that is not a finite number".to_string()));
    }
    Ok(vectors)
}

/// At most [`INPUT_CHARS_MAX`] characters of `text`, cut on a character.
fn truncated(text: &str) -> &str {
    match text.char_indices().nth(INPUT_CHARS_MAX) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// What one background pass embedded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedOutcome {
    /// Pending passages the pass found (at most [`PASS_PASSAGES`]).
    pub pending: usize,
    pub embedded: usize,
    /// The pass stopped on an endpoint failure (the passages stay pending).
    pub failed: bool,
}

/// Embeds up to [`PASS_PASSAGES`] passages without a vector of the
/// configured model, [`BATCH`] per request. A failure stops the pass and
/// leaves the rest pending for the next one.
pub async fn pass(index: &Index, embedder: &Embedder) -> EmbedOutcome {
    let mut outcome = EmbedOutcome::default();
    let model = embedder.model();
    let pending = {
        let model = model.clone();
        index.store().run(move |connection| vectors::pending(connection, &model, PASS_PASSAGES))
    };
    let pending = match pending.await {
        Ok(pending) => pending,
        Err(error) => {
            tracing::warn!(error = %error, "embedding pass could not read the index");
            outcome.failed = true;
            return outcome;
        }
    };
    outcome.pending = pending.len();
    for batch in pending.chunks(BATCH) {
        let texts: Vec<String> = batch.iter().map(|(_, text)| text.clone()).collect();
        let vectors = match embedder.embed_passages(&texts).await {
            Ok(vectors) => vectors,
            Err(error) => {
                tracing::warn!(error = %error, "embedding pass stopped");
                outcome.failed = true;
                return outcome;
            }
        };
        let rows: Vec<(i64, String, Vec<f32>)> = batch
            .iter()
            .zip(vectors)
            .map(|((rowid, text), vector)| (*rowid, text.clone(), vector))
            .collect();
        let model = model.clone();
        let written = index.store().run(move |connection| {
            let written = vectors::record(connection, &model, &rows)?;
            Ok(rows
                .into_iter()
                .zip(written)
                .filter(|(_, written)| *written)
                .map(|((rowid, _, vector), _)| (rowid, vector))
                .collect::<Vec<_>>())
        });
        match written.await {
            Ok(written) => {
                outcome.embedded += written.len();
                index.remember_vectors(&written);
            }
            Err(error) => {
                tracing::warn!(error = %error, "embedding pass could not write the index");
                outcome.failed = true;
                return outcome;
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests;
