//! The `files_grep` passage index: the card catalogue of passages
//! (extracted text cut by structure, each with its heading and byte offset)
//! that proposes candidate files, while Nextcloud, asked as the user, decides
//! which of them the user may see. The catalogue proposes; Nextcloud
//! disposes.
//!
//! It holds no user column and no credential. It is filled two ways:
//! webhooks mark rows dirty (they carry no token, so they never read), and
//! every `files_grep` starts a bounded, fire-and-forget pass with the
//! searching user's own credential — discovery (metadata only, from a
//! watermark) then reading (at most [`Limits::pass_documents`] documents,
//! [`Limits::concurrency`] at a time, newest first). A file nobody can open
//! is never read, because nobody opens it.
//!
//! The only per-user state is in memory: each user's discovery watermark
//! and whether their last pass left readable documents waiting (what makes
//! "the index is still being built" an honest sentence). It is a pair of
//! numbers, never a list of files, and it is gone with the process.

pub mod chunk;
pub mod dense;
pub mod embed;
pub mod fill;
pub mod query;
pub mod report;
pub mod search;
pub mod snippet;
pub mod store;
pub mod visible;
pub mod webhook;
pub mod words;

use crate::convert::Converter;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use store::{Store, StoreError};

/// How the index is configured.
#[derive(Clone, Default)]
pub struct IndexConfig {
    /// `index.db`; `None` keeps the index in memory (tests, demos).
    pub path: Option<PathBuf>,
    /// The shared secret webhook_listeners sends in [`webhook::SECRET_HEADER`];
    /// `None` disables `POST /webhooks/nextcloud`.
    pub webhook_secret: Option<String>,
    pub limits: Limits,
    /// The embeddings endpoint; `None` (the default) keeps files_grep
    /// lexical only.
    pub embeddings: Option<embed::EmbeddingsConfig>,
    /// How words and meaning combine when embeddings are on.
    pub fusion: search::Fusion,
}

impl std::fmt::Debug for IndexConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("IndexConfig")
            .field("path", &self.path)
            .field("webhook_secret", &self.webhook_secret.as_ref().map(|_| "<set>"))
            .field("limits", &self.limits)
            .field("embeddings", &self.embeddings)
            .field("fusion", &self.fusion)
            .finish()
    }
}

/// The bounds of one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Documents read per pass.
    pub pass_documents: usize,
    /// Documents read at once, across all users (the document server is a
    /// single instance and a large PDF takes seconds).
    pub concurrency: usize,
    /// Files per discovery page, and pages per pass.
    pub discovery_page: usize,
    pub discovery_pages: usize,
    /// Queue rows looked at per pass to find documents this user can read.
    pub queue_scan: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            pass_documents: 20,
            concurrency: 2,
            discovery_page: 500,
            discovery_pages: 4,
            queue_scan: 400,
        }
    }
}

/// The most users whose discovery state is remembered; past it the least
/// recently seen is forgotten (their next pass rediscovers from zero, which
/// costs metadata requests and changes nothing in the index).
pub const USERS_MAX: usize = 10_000;

/// The index, shared by the tools and the webhook endpoint.
#[derive(Clone)]
pub struct Index {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    converter: Option<Converter>,
    limits: Limits,
    users: Mutex<HashMap<String, UserState>>,
    /// File ids being read now, so two users' passes never read one file twice.
    reading: Mutex<HashSet<u64>>,
    readers: tokio::sync::Semaphore,
    /// Passes running; `idle` waits for zero.
    running: tokio::sync::watch::Sender<usize>,
    /// Until when converter-bound documents are skipped after a
    /// configuration fault (they stay dirty, uncounted).
    converter_fault_until: Mutex<Option<Instant>>,
    embedder: Option<embed::Embedder>,
    fusion: search::Fusion,
    /// An embedding pass is running (one at a time, for all users).
    embedding: AtomicBool,
    /// Asks a running embedding pass to stop after its batch (clear).
    embedding_stop: AtomicBool,
    /// A kick found embedding running: the running one goes on once more
    /// rather than end past passages it did not see.
    embedding_again: AtomicBool,
    /// The configured model's vectors in memory, once a search loaded them.
    dense: RwLock<Option<dense::Vectors>>,
}

/// What is remembered of one user between their searches.
#[derive(Debug, Clone, Default)]
struct UserState {
    running: bool,
    /// Discovery has seen every file modified before this (unix seconds)...
    watermark: i64,
    /// ...and this many files modified exactly at it.
    seen_at_watermark: usize,
    /// The last discovery page was not full.
    caught_up: bool,
    /// Readable documents the last pass left unread.
    waiting: usize,
    last_seen: Option<Instant>,
}

/// Whether the index has finished reading what a user can open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// Discovery has not caught up, or readable documents wait.
    Building {
        waiting: usize,
    },
}

impl Index {
    pub fn open(config: &IndexConfig, converter: Option<Converter>) -> Result<Index, StoreError> {
        let store = Store::open(config.path.as_deref())?;
        let model = config.embeddings.as_ref().map(|embeddings| embeddings.stored_model());
        store.run_blocking(|connection| store::vectors::set_model(connection, model.as_deref()))?;
        let embedder = config.embeddings.clone().map(|embeddings| {
            embed::Embedder::new(embeddings, mcp_kit::http::upstream_client(embed::REQUEST_TIMEOUT))
        });
        Ok(Index {
            inner: Arc::new(Inner {
                store,
                converter,
                limits: config.limits,
                users: Mutex::new(HashMap::new()),
                reading: Mutex::new(HashSet::new()),
                readers: tokio::sync::Semaphore::new(config.limits.concurrency.max(1)),
                running: tokio::sync::watch::channel(0).0,
                converter_fault_until: Mutex::new(None),
                embedder,
                fusion: config.fusion,
                embedding: AtomicBool::new(false),
                embedding_stop: AtomicBool::new(false),
                embedding_again: AtomicBool::new(false),
                dense: RwLock::new(None),
            }),
        })
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn converter(&self) -> Option<&Converter> {
        self.inner.converter.as_ref()
    }

    /// Starts a pass for the caller unless one of theirs is running;
    /// returns at once.
    pub fn kick(&self, nextcloud: crate::nextcloud::Nextcloud) {
        if !self.begin_pass(&nextcloud.uid) {
            return;
        }
        let index = self.clone();
        tokio::spawn(async move {
            let uid = nextcloud.uid.clone();
            let outcome = fill::pass(&index, &nextcloud).await;
            // Embedding is counted as running before this pass stops being
            // counted, so `idle` never sees a gap between the two.
            index.kick_embedding();
            index.end_pass(&uid, outcome);
        });
    }

    /// Starts embedding unless embeddings are off or it runs already;
    /// returns at once. It goes on, [`embed::PASS_PASSAGES`] at a time,
    /// until nothing is pending or the endpoint fails (the next search
    /// starts it again). [`Index::idle`] waits for it too.
    pub fn kick_embedding(&self) {
        let Some(embedder) = self.inner.embedder.clone() else {
            return;
        };
        let inner = &self.inner;
        if inner.embedding.swap(true, Ordering::AcqRel) {
            inner.embedding_again.store(true, Ordering::Release);
            return;
        }
        inner.running.send_modify(|count| *count += 1);
        let index = self.clone();
        tokio::spawn(async move {
            let inner = &index.inner;
            loop {
                let outcome = embed::pass(&index, &embedder).await;
                tracing::debug!(
                    embedded = outcome.embedded,
                    failed = outcome.failed,
                    "embedding pass"
                );
                let stopped = outcome.failed || inner.embedding_stop.load(Ordering::Acquire);
                if !stopped && outcome.embedded > 0 && outcome.pending == embed::PASS_PASSAGES {
                    continue;
                }
                inner.embedding.store(false, Ordering::Release);
                // A kick while this one was finishing left the new passages
                // to it: go on, unless a fresh one has started since.
                if stopped
                    || !inner.embedding_again.swap(false, Ordering::AcqRel)
                    || inner.embedding.swap(true, Ordering::AcqRel)
                {
                    break;
                }
            }
            inner.running.send_modify(|count| *count -= 1);
        });
    }

    /// How files_grep combines words and meaning.
    pub fn fusion(&self) -> search::Fusion {
        self.inner.fusion
    }

    /// The embeddings client, when embeddings are configured.
    pub fn embedder(&self) -> Option<&embed::Embedder> {
        self.inner.embedder.as_ref()
    }

    /// The `limit` passages nearest `query` by the configured model's
    /// vectors, nearest first (empty when embeddings are off). Loads the
    /// in-memory copy on first use.
    pub async fn nearest(
        &self,
        query: Vec<f32>,
        limit: usize,
    ) -> Result<Vec<store::Candidate>, StoreError> {
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        let loaded = self.inner.dense.read().expect("dense lock").is_some();
        if !loaded {
            let model = embedder.model();
            let copy = self
                .store()
                .run(move |connection| dense::Vectors::load(connection, &model))
                .await?;
            let mut dense = self.inner.dense.write().expect("dense lock");
            if dense.is_none() {
                *dense = Some(copy);
            }
        }
        let index = self.clone();
        let nearest = tokio::task::spawn_blocking(move || {
            let dense = index.inner.dense.read().expect("dense lock");
            dense.as_ref().map(|copy| copy.nearest(&query, limit)).unwrap_or_default()
        })
        .await
        .unwrap_or_default();
        Ok(nearest)
    }

    /// Vectors just written to `index.db`, into the in-memory copy (if
    /// loaded).
    pub(crate) fn remember_vectors(&self, rows: &[(i64, Vec<f32>)]) {
        let mut dense = self.inner.dense.write().expect("dense lock");
        if let Some(copy) = dense.as_mut() {
            for (rowid, vector) in rows {
                copy.upsert(*rowid, vector);
            }
        }
    }

    /// A search found `count` proposed passages without their vector in
    /// `index.db`; past half the copy, it is loaded again next time.
    pub(crate) fn stale_vectors(&self, count: usize) {
        if count == 0 {
            return;
        }
        let mut dense = self.inner.dense.write().expect("dense lock");
        if dense.as_mut().is_some_and(|copy| copy.mark_stale(count)) {
            *dense = None;
        }
    }

    /// Waits until no pass runs.
    pub async fn idle(&self) {
        let mut running = self.inner.running.subscribe();
        let _ = running.wait_for(|count| *count == 0).await;
    }

    /// Empties the index and forgets every user's discovery state, once no
    /// pass runs: the next searches rebuild it from scratch.
    pub async fn clear(&self) -> Result<(), StoreError> {
        self.inner.embedding_stop.store(true, Ordering::Release);
        self.idle().await;
        self.inner.embedding_stop.store(false, Ordering::Release);
        self.inner.users.lock().expect("users lock").clear();
        *self.inner.dense.write().expect("dense lock") = None;
        self.store().run(|connection| store::clear(connection)).await
    }

    pub fn readiness(&self, uid: &str) -> Readiness {
        let users = self.inner.users.lock().expect("users lock");
        match users.get(uid) {
            Some(state) if state.caught_up && state.waiting == 0 => Readiness::Ready,
            Some(state) => Readiness::Building { waiting: state.waiting },
            None => Readiness::Building { waiting: 0 },
        }
    }

    fn begin_pass(&self, uid: &str) -> bool {
        let mut users = self.inner.users.lock().expect("users lock");
        if !users.contains_key(uid) && users.len() >= USERS_MAX {
            let oldest = users
                .iter()
                .filter(|(_, state)| !state.running)
                .min_by_key(|(_, state)| state.last_seen)
                .map(|(uid, _)| uid.clone());
            if let Some(oldest) = oldest {
                users.remove(&oldest);
            }
        }
        let state = users.entry(uid.to_string()).or_default();
        state.last_seen = Some(Instant::now());
        if state.running {
            return false;
        }
        state.running = true;
        self.inner.running.send_modify(|count| *count += 1);
        true
    }

    fn end_pass(&self, uid: &str, outcome: fill::PassOutcome) {
        let mut users = self.inner.users.lock().expect("users lock");
        if let Some(state) = users.get_mut(uid) {
            state.running = false;
            if let Some(discovery) = outcome.discovery {
                state.watermark = discovery.watermark;
                state.seen_at_watermark = discovery.seen_at_watermark;
                state.caught_up = discovery.caught_up;
            }
            if let Some(waiting) = outcome.waiting {
                state.waiting = waiting;
            }
        }
        drop(users);
        self.inner.running.send_modify(|count| *count -= 1);
    }

    fn discovery_start(&self, uid: &str) -> (i64, usize) {
        let users = self.inner.users.lock().expect("users lock");
        users.get(uid).map_or((0, 0), |state| (state.watermark, state.seen_at_watermark))
    }

    fn converter_usable(&self) -> bool {
        self.inner.converter.is_some()
            && self
                .inner
                .converter_fault_until
                .lock()
                .expect("fault lock")
                .is_none_or(|until| Instant::now() >= until)
    }

    fn converter_faulted(&self) {
        *self.inner.converter_fault_until.lock().expect("fault lock") =
            Some(Instant::now() + CONVERTER_FAULT_BACKOFF);
    }
}

/// How long converter-bound documents are skipped after a configuration
/// fault before the converter is tried again.
pub const CONVERTER_FAULT_BACKOFF: std::time::Duration = std::time::Duration::from_secs(60);

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or(0)
}
