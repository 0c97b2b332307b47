//! `index.db`: the card catalogue on disk (SQLite, FTS5).
//!
//! Its tables, and none of them has a user column:
//! - `docs`: one row per file the index has heard of (by discovery or by
//!   webhook) — its metadata, whether it needs reading (`dirty`), how often
//!   reading failed (`attempts`), and what became of it (`status`).
//! - `passages`: each passage's text, heading, language and byte range in the
//!   text `files_read` serves; `terms`, FTS5 over the stems of its text
//!   (`body`) and heading (`title`), on the same rowid and storing nothing
//!   else ([`super::words`]). A passage's rowid is `fileid << 20 | n`, so a
//!   file's passages are one rowid range and replacing them needs no scan.
//! - `queries`: what each search found — candidates, survivors, returned,
//!   and whether the any-word fallback answered — the instrument that says
//!   whether a miss was a hole in the index, a permission boundary, or
//!   vocabulary.
//!
//! - `vectors` ([`vectors`]): each passage's embedding, on its rowid, with
//!   the model that made it, when embeddings are configured; `settings`
//!   names that model.
//!
//! Every function here is synchronous and takes a connection; [`Store`]
//! (a `sqlite-db` database) runs them on a blocking thread so no connection
//! is held across `.await`. Migrations are numbered by `PRAGMA user_version`.

use super::words;
use rusqlite::{Connection, OptionalExtension, params};
use sqlite_db::Database;
use std::path::Path;

pub mod vectors;

/// Passages per file are numbered below this; it bounds a file's text to
/// about 1.5 GB of passages, far past [`extract::TEXT_LENGTH_MAX`].
pub const PASSAGE_INDEX_BITS: u32 = 20;
/// The largest file id a rowid can carry.
pub const FILEID_MAX: u64 = (1 << (63 - PASSAGE_INDEX_BITS)) - 1;
/// Reading gives up on a document after this many failed attempts.
pub const ATTEMPTS_MAX: i64 = 3;

/// The schema, one migration per entry; entry `n` moves `user_version`
/// from `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE docs (
    fileid     INTEGER PRIMARY KEY,
    path       TEXT NOT NULL,
    mtime      INTEGER,
    etag       TEXT,
    size       INTEGER,
    mime       TEXT,
    dirty      INTEGER NOT NULL DEFAULT 1,
    attempts   INTEGER NOT NULL DEFAULT 0,
    indexed    INTEGER,
    status     TEXT NOT NULL DEFAULT 'pending',
    last_error TEXT,
    version    INTEGER NOT NULL DEFAULT 0,
    dirtied_at INTEGER
);
CREATE INDEX docs_queue ON docs (dirty, attempts, mtime);
CREATE VIRTUAL TABLE chunks USING fts5 (
    text,
    heading,
    fileid UNINDEXED,
    byte_offset UNINDEXED,
    byte_length UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE queries (
    at         INTEGER NOT NULL,
    query      TEXT NOT NULL,
    candidates INTEGER NOT NULL,
    survivors  INTEGER NOT NULL,
    returned   INTEGER NOT NULL
);
CREATE INDEX queries_at ON queries (at);
"#,
    // Which query a search's numbers belong to: the all-words query, or the
    // any-word fallback that ran because no passage with all the words was
    // readable — and then how many candidate files the all-words query had,
    // so `tamebi index report` still sees the hole or the boundary behind a
    // fallback's answer. Since embeddings, `matched` may also say `meaning`
    // (the nearest in meaning answered), with the all-words query's
    // candidates when one ran.
    r#"
ALTER TABLE queries ADD COLUMN matched TEXT NOT NULL DEFAULT 'all';
ALTER TABLE queries ADD COLUMN all_candidates INTEGER;
"#,
    // Words are matched by their stems (index::words): the passage text moves
    // to a plain table, and FTS5 indexes the stems without storing them
    // (contentless, with deletes). Every document read so far is read again
    // in the background to fill it; until then it is simply not found.
    r#"
DROP TABLE chunks;
CREATE TABLE passages (
    rowid       INTEGER PRIMARY KEY,
    text        TEXT NOT NULL,
    heading     TEXT,
    byte_offset INTEGER NOT NULL,
    byte_length INTEGER NOT NULL,
    language    TEXT NOT NULL
);
CREATE VIRTUAL TABLE terms USING fts5 (
    body,
    title,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
UPDATE docs SET dirty = 1, attempts = 0, status = 'pending', last_error = NULL,
    version = version + 1, dirtied_at = CAST(strftime('%s', 'now') AS INTEGER)
WHERE status = 'ok';
"#,
    // Embeddings (issue 17 §3): one vector per passage on its rowid, with
    // the model that made it (store::vectors), and the server's settings
    // that `tamebi index status` needs (the configured model).
    r#"
CREATE TABLE vectors (
    rowid  INTEGER PRIMARY KEY,
    model  TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"#,
];

pub use sqlite_db::DbError as StoreError;

/// The database, shared by the server's tasks: a [`sqlite_db::Database`]
/// with this schema (its `run` and `run_blocking` are what callers use).
#[derive(Clone)]
pub struct Store(Database);

impl Store {
    /// Opens (creating and migrating) `path`; `None` is an in-memory
    /// database, for tests and for servers run without a data volume.
    pub fn open(path: Option<&Path>) -> Result<Store, StoreError> {
        Database::open(path, MIGRATIONS).map(Store)
    }

    /// Opens an existing `path` read-only, for operators looking at a live
    /// server's index: nothing is created, migrated or written.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Database::open_read_only(path, MIGRATIONS).map(Store)
    }
}

impl std::ops::Deref for Store {
    type Target = Database;

    fn deref(&self) -> &Database {
        &self.0
    }
}

/// A file as discovery (or a permission check) sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenFile {
    pub fileid: u64,
    pub path: String,
    pub mtime: Option<i64>,
    pub etag: Option<String>,
    pub size: Option<u64>,
    pub mime: Option<String>,
}

/// What [`record_seen`] did with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    New,
    Changed,
    Unchanged,
}

/// Records a file seen by discovery: new rows and rows whose etag changed
/// become dirty (with fresh attempts, since a changed file deserves a new
/// chance even if the old one was parked).
pub fn record_seen(connection: &Connection, file: &SeenFile, now: i64) -> Result<Seen, StoreError> {
    let stored: Option<Option<String>> = connection
        .query_row("SELECT etag FROM docs WHERE fileid = ?1", [file.fileid as i64], |row| {
            row.get(0)
        })
        .optional()?;
    let seen = match &stored {
        None => Seen::New,
        Some(etag) if file.etag.is_some() && *etag != file.etag => Seen::Changed,
        Some(_) => Seen::Unchanged,
    };
    let sql = match seen {
        Seen::New => {
            "INSERT INTO docs (fileid, path, mtime, etag, size, mime, dirty, version, dirtied_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 1, ?7)"
        }
        Seen::Changed => {
            "UPDATE docs SET path = ?2, mtime = ?3, etag = ?4, size = ?5, mime = ?6,
                dirty = 1, attempts = 0, status = 'pending', last_error = NULL,
                version = version + 1, dirtied_at = ?7
             WHERE fileid = ?1"
        }
        // Fill what a webhook row lacked; never touch the queue state. (The
        // time, ?7, is bound for every statement, so this one names it too.)
        // Nothing is written when nothing differs: searches refresh rows often.
        Seen::Unchanged => {
            "UPDATE docs SET path = ?2, mtime = COALESCE(?3, mtime), etag = COALESCE(?4, etag),
                size = COALESCE(?5, size), mime = COALESCE(?6, mime)
             WHERE fileid = ?1 AND ?7 IS NOT NULL
               AND (path IS NOT ?2 OR mtime IS NOT COALESCE(?3, mtime)
                    OR etag IS NOT COALESCE(?4, etag) OR size IS NOT COALESCE(?5, size)
                    OR mime IS NOT COALESCE(?6, mime))"
        }
    };
    connection.execute(
        sql,
        params![
            file.fileid as i64,
            file.path,
            file.mtime,
            file.etag,
            file.size.map(|size| size as i64),
            file.mime,
            now
        ],
    )?;
    Ok(seen)
}

/// A webhook said the file was created or written: the row becomes dirty
/// with an unknown mtime ("just now") and fresh attempts. Nothing is read.
pub fn mark_dirty(
    connection: &Connection,
    fileid: u64,
    path: &str,
    now: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "INSERT INTO docs (fileid, path, mtime, dirty, version, dirtied_at)
         VALUES (?1, ?2, NULL, 1, 1, ?3)
         ON CONFLICT (fileid) DO UPDATE SET path = excluded.path, mtime = NULL, etag = NULL,
            dirty = 1, attempts = 0, status = 'pending', last_error = NULL,
            version = docs.version + 1, dirtied_at = excluded.dirtied_at",
        params![fileid as i64, path, now],
    )?;
    Ok(())
}

/// A webhook said the file was deleted: its row and passages go.
pub fn remove(connection: &Connection, fileid: u64) -> Result<(), StoreError> {
    delete_passages(connection, fileid)?;
    connection.execute("DELETE FROM docs WHERE fileid = ?1", [fileid as i64])?;
    Ok(())
}

/// A webhook said the file was renamed: the passages stay valid.
pub fn rename(connection: &Connection, fileid: u64, path: &str) -> Result<(), StoreError> {
    connection
        .execute("UPDATE docs SET path = ?2 WHERE fileid = ?1", params![fileid as i64, path])?;
    Ok(())
}

/// The row's version: it moves each time the row is marked dirty.
pub fn version(connection: &Connection, fileid: u64) -> Result<Option<i64>, StoreError> {
    Ok(connection
        .query_row("SELECT version FROM docs WHERE fileid = ?1", [fileid as i64], |row| row.get(0))
        .optional()?)
}

/// A document waiting to be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub fileid: u64,
    pub path: String,
    pub mime: Option<String>,
    pub attempts: i64,
    pub version: i64,
}

/// The reading queue, in the order it is drained: never-tried rows before
/// rows that failed before (so a few broken files cannot hold the head of
/// the queue), and within each, newest first, where an unknown mtime — a
/// row a webhook just created — counts as "just now". SQLite sorts NULL
/// last in a descending order, which put exactly the file we knew had
/// changed at the back; hence `COALESCE(mtime, 9e18)`.
pub fn queue(
    connection: &Connection,
    offset: usize,
    limit: usize,
) -> Result<Vec<Queued>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT fileid, path, mime, attempts, version FROM docs
         WHERE dirty = 1 AND status = 'pending'
         ORDER BY attempts > 0, COALESCE(mtime, 9e18) DESC, fileid DESC
         LIMIT ?1 OFFSET ?2",
    )?;
    let rows = statement.query_map(params![limit as i64, offset as i64], |row| {
        Ok(Queued {
            fileid: row.get::<_, i64>(0)? as u64,
            path: row.get(1)?,
            mime: row.get(2)?,
            attempts: row.get(3)?,
            version: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One passage to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPassage {
    pub heading: Option<String>,
    pub offset: usize,
    pub length: usize,
    pub text: String,
}

/// Replaces a file's passages after a successful read. Returns false (and
/// stores nothing) when the row changed since it was queued at `version` —
/// a webhook or discovery saw a newer file, which the next pass reads.
pub fn record_passages(
    connection: &mut Connection,
    fileid: u64,
    version: i64,
    etag: Option<&str>,
    passages: &[NewPassage],
    now: i64,
) -> Result<bool, StoreError> {
    assert!(fileid <= FILEID_MAX, "file id {fileid} does not fit a passage rowid");
    let transaction = connection.transaction()?;
    let current: Option<i64> = transaction
        .query_row("SELECT version FROM docs WHERE fileid = ?1", [fileid as i64], |row| row.get(0))
        .optional()?;
    if current != Some(version) {
        return Ok(false);
    }
    delete_passages(&transaction, fileid)?;
    let language = words::detect_in(passages.iter().map(|passage| passage.text.as_str()));
    {
        let mut insert = transaction.prepare_cached(
            "INSERT INTO passages (rowid, text, heading, byte_offset, byte_length, language)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut insert_terms = transaction
            .prepare_cached("INSERT INTO terms (rowid, body, title) VALUES (?1, ?2, ?3)")?;
        for (number, passage) in passages.iter().enumerate() {
            let rowid = passage_rowid(fileid, number);
            insert.execute(params![
                rowid,
                passage.text,
                passage.heading,
                passage.offset as i64,
                passage.length as i64,
                language.code()
            ])?;
            insert_terms.execute(params![
                rowid,
                words::stems(&passage.text, language),
                passage.heading.as_deref().map(|heading| words::stems(heading, language))
            ])?;
        }
    }
    transaction.execute(
        "UPDATE docs SET dirty = 0, attempts = 0, status = 'ok', last_error = NULL, indexed = ?2,
            etag = COALESCE(?3, etag)
         WHERE fileid = ?1",
        params![fileid as i64, now, etag],
    )?;
    transaction.commit()?;
    Ok(true)
}

/// How a failed read counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The document's own fault (damaged, unconvertible, too slow): counts
    /// an attempt; the [`ATTEMPTS_MAX`]th gives up (`failed`).
    Attempt,
    /// No text layer: parked as `needs_ocr` at once, never retried (the
    /// backlog for a future OCR service is one SELECT).
    NeedsOcr,
}

/// Records a failed read of the row queued at `version`; `kind` is a
/// short error kind for operators. A configuration fault is not recorded
/// here at all: it is not a verdict on the document.
pub fn record_failure(
    connection: &Connection,
    fileid: u64,
    version: i64,
    failure: Failure,
    kind: &str,
) -> Result<(), StoreError> {
    match failure {
        Failure::NeedsOcr => connection.execute(
            "UPDATE docs SET dirty = 0, status = 'needs_ocr', last_error = ?3
             WHERE fileid = ?1 AND version = ?2",
            params![fileid as i64, version, kind],
        )?,
        Failure::Attempt => connection.execute(
            "UPDATE docs SET attempts = attempts + 1, last_error = ?3,
                status = CASE WHEN attempts + 1 >= ?4 THEN 'failed' ELSE status END,
                dirty = CASE WHEN attempts + 1 >= ?4 THEN 0 ELSE 1 END
             WHERE fileid = ?1 AND version = ?2",
            params![fileid as i64, version, kind, ATTEMPTS_MAX],
        )?,
    };
    Ok(())
}

/// Notes a configuration fault on a row without counting it, so operators
/// see why it waits.
pub fn record_waiting(connection: &Connection, fileid: u64, kind: &str) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE docs SET last_error = ?2 WHERE fileid = ?1 AND dirty = 1",
        params![fileid as i64, kind],
    )?;
    Ok(())
}

fn passage_rowid(fileid: u64, number: usize) -> i64 {
    assert!(number < 1 << PASSAGE_INDEX_BITS, "too many passages in one file");
    ((fileid << PASSAGE_INDEX_BITS) | number as u64) as i64
}

fn delete_passages(connection: &Connection, fileid: u64) -> Result<(), StoreError> {
    let first = (fileid << PASSAGE_INDEX_BITS) as i64;
    let last = first + (1 << PASSAGE_INDEX_BITS) - 1;
    connection.execute(
        "DELETE FROM terms WHERE rowid IN (SELECT rowid FROM passages WHERE rowid BETWEEN ?1 AND ?2)",
        params![first, last],
    )?;
    connection
        .execute("DELETE FROM passages WHERE rowid BETWEEN ?1 AND ?2", params![first, last])?;
    connection
        .execute("DELETE FROM vectors WHERE rowid BETWEEN ?1 AND ?2", params![first, last])?;
    Ok(())
}

/// A passage matching a query, before the permission check.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub rowid: i64,
    pub fileid: u64,
}

/// Every passage matching `fts_query` (over `terms`), best first (bm25,
/// headings weigh double), at most `limit`.
pub fn candidates(
    connection: &Connection,
    fts_query: &str,
    limit: usize,
) -> Result<Vec<Candidate>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT rowid FROM terms WHERE terms MATCH ?1 ORDER BY bm25(terms, 1.0, 2.0) LIMIT ?2",
    )?;
    let rows = statement.query_map(params![fts_query, limit as i64], |row| {
        let rowid: i64 = row.get(0)?;
        Ok(Candidate { rowid, fileid: (rowid as u64) >> PASSAGE_INDEX_BITS })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The passages among `candidates` that match each of `terms` (FTS5
/// expressions): for each candidate, in order, how many distinct terms it
/// has. What the any-word fallback ranks by before bm25.
pub fn distinct_terms(
    connection: &Connection,
    terms: &[String],
    candidates: &[Candidate],
) -> Result<Vec<usize>, StoreError> {
    let position: std::collections::HashMap<i64, usize> =
        candidates.iter().enumerate().map(|(index, candidate)| (candidate.rowid, index)).collect();
    let mut counts = vec![0; candidates.len()];
    let mut statement =
        connection.prepare_cached("SELECT rowid FROM terms WHERE terms MATCH ?1")?;
    for term in terms {
        let rows = statement.query_map([term], |row| row.get::<_, i64>(0))?;
        for rowid in rows {
            if let Some(index) = position.get(&rowid?) {
                counts[*index] += 1;
            }
        }
    }
    Ok(counts)
}

/// A passage as search results show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub rowid: i64,
    pub fileid: u64,
    pub heading: Option<String>,
    pub offset: u64,
    pub length: u64,
    /// The passage's text and language, for its snippet.
    pub text: String,
    pub language: words::Language,
}

/// Why a proposed passage may still be shown: it matches the words, or it
/// has a vector of the model that proposed it (a passage read again since
/// the query ran may have neither).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Still {
    pub matching: Option<String>,
    pub embedded_by: Option<String>,
}

/// The passages `rowids` that are [`Still`] what proposed them, in the
/// order of `rowids`.
pub fn hits(
    connection: &Connection,
    still: &Still,
    rowids: &[i64],
) -> Result<Vec<Hit>, StoreError> {
    let mut matching =
        connection.prepare_cached("SELECT 1 FROM terms WHERE terms MATCH ?1 AND rowid = ?2")?;
    let mut embedded =
        connection.prepare_cached("SELECT 1 FROM vectors WHERE rowid = ?1 AND model = ?2")?;
    let mut statement = connection.prepare_cached(
        "SELECT heading, byte_offset, byte_length, text, language FROM passages WHERE rowid = ?1",
    )?;
    let mut hits = Vec::with_capacity(rowids.len());
    for rowid in rowids {
        let words = match &still.matching {
            Some(fts_query) => matching.exists(params![fts_query, rowid])?,
            None => false,
        };
        let meaning = match (&still.embedded_by, words) {
            (Some(model), false) => embedded.exists(params![rowid, model])?,
            _ => false,
        };
        if !words && !meaning {
            continue;
        }
        let hit = statement
            .query_row(params![rowid], |row| {
                Ok(Hit {
                    rowid: *rowid,
                    fileid: (*rowid as u64) >> PASSAGE_INDEX_BITS,
                    heading: row.get(0)?,
                    offset: row.get::<_, i64>(1)? as u64,
                    length: row.get::<_, i64>(2)? as u64,
                    text: row.get(3)?,
                    language: words::Language::from_code(&row.get::<_, String>(4)?),
                })
            })
            .optional()?;
        hits.extend(hit);
    }
    Ok(hits)
}

/// How long `queries` rows are kept: long enough for a monthly report.
pub const QUERIES_KEPT_SECONDS: i64 = 90 * 24 * 3600;

/// Records one search answered by the all-words query, and forgets those
/// older than [`QUERIES_KEPT_SECONDS`].
pub fn record_query(
    connection: &Connection,
    at: i64,
    query: &str,
    candidates: usize,
    survivors: usize,
    returned: usize,
) -> Result<(), StoreError> {
    let search =
        Search { candidates, survivors, returned, fallback_after: None, by_meaning: false };
    record_search(connection, at, query, &search)
}

/// What one search found, for `queries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    /// Candidate files, survivors and passages returned, of the query that
    /// answered.
    pub candidates: usize,
    pub survivors: usize,
    pub returned: usize,
    /// `Some(n)`: a fallback answered (the any-word query, or the nearest
    /// in meaning), after the all-words query had `n` candidate files and
    /// none readable.
    pub fallback_after: Option<usize>,
    /// The passages are the nearest in meaning (embeddings), as a fallback
    /// or as the only query: `queries.matched` says `meaning`.
    pub by_meaning: bool,
}

/// Records one search, and forgets those older than [`QUERIES_KEPT_SECONDS`].
pub fn record_search(
    connection: &Connection,
    at: i64,
    query: &str,
    search: &Search,
) -> Result<(), StoreError> {
    connection.execute(
        "INSERT INTO queries (at, query, candidates, survivors, returned, matched, all_candidates)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            at,
            query,
            search.candidates as i64,
            search.survivors as i64,
            search.returned as i64,
            match (search.by_meaning, search.fallback_after) {
                (true, _) => "meaning",
                (false, Some(_)) => "any",
                (false, None) => "all",
            },
            search.fallback_after.map(|count| count as i64)
        ],
    )?;
    connection.execute("DELETE FROM queries WHERE at < ?1", [at - QUERIES_KEPT_SECONDS])?;
    Ok(())
}

/// The numbers `tamebi index status` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    /// Rows in `docs`.
    pub known: u64,
    /// Documents read (`status = ok`).
    pub read: u64,
    /// Waiting to be read.
    pub pending: u64,
    /// Gave up after [`ATTEMPTS_MAX`] attempts.
    pub failed: u64,
    /// Scans without a text layer, parked.
    pub needs_ocr: u64,
    /// Pending rows that failed at least once.
    pub retrying: u64,
    pub passages: u64,
    /// Bytes of passage text.
    pub text_bytes: u64,
    /// When the oldest pending row became pending (unix seconds).
    pub oldest_pending: Option<i64>,
    pub queries: u64,
    /// The embeddings model the server is configured with; `None`: off.
    pub embeddings_model: Option<String>,
    /// Passages with a vector of that model (the rest wait for one).
    pub embedded: u64,
}

pub fn status(connection: &Connection) -> Result<Status, StoreError> {
    let status = connection.query_row(
        "SELECT
            (SELECT COUNT(*) FROM docs),
            (SELECT COUNT(*) FROM docs WHERE status = 'ok'),
            (SELECT COUNT(*) FROM docs WHERE dirty = 1 AND status = 'pending'),
            (SELECT COUNT(*) FROM docs WHERE status = 'failed'),
            (SELECT COUNT(*) FROM docs WHERE status = 'needs_ocr'),
            (SELECT COUNT(*) FROM docs WHERE dirty = 1 AND status = 'pending' AND attempts > 0),
            (SELECT COUNT(*) FROM passages),
            (SELECT COALESCE(SUM(byte_length), 0) FROM passages),
            (SELECT MIN(dirtied_at) FROM docs WHERE dirty = 1 AND status = 'pending'),
            (SELECT COUNT(*) FROM queries)",
        [],
        |row| {
            Ok(Status {
                known: row.get::<_, i64>(0)? as u64,
                read: row.get::<_, i64>(1)? as u64,
                pending: row.get::<_, i64>(2)? as u64,
                failed: row.get::<_, i64>(3)? as u64,
                needs_ocr: row.get::<_, i64>(4)? as u64,
                retrying: row.get::<_, i64>(5)? as u64,
                passages: row.get::<_, i64>(6)? as u64,
                text_bytes: row.get::<_, i64>(7)? as u64,
                oldest_pending: row.get(8)?,
                queries: row.get::<_, i64>(9)? as u64,
                embeddings_model: None,
                embedded: 0,
            })
        },
    )?;
    let embeddings_model = vectors::model(connection)?;
    let embedded = match &embeddings_model {
        Some(model) => vectors::embedded(connection, model)?,
        None => 0,
    };
    Ok(Status { embeddings_model, embedded, ..status })
}

/// A row of `queries`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct QueryRow {
    pub at: i64,
    pub query: String,
    /// Of the query that answered (the fallback's, when it ran).
    pub candidates: u64,
    pub survivors: u64,
    pub returned: u64,
    /// `Some(n)`: a fallback answered, after the all-words query had `n`
    /// candidate files, none readable. Rows recorded before the column
    /// existed read `None`.
    pub fallback_after: Option<u64>,
    /// The passages were the nearest in meaning (`matched = 'meaning'`).
    pub by_meaning: bool,
}

impl QueryRow {
    /// Candidate files of the all-words query.
    pub fn all_words_candidates(&self) -> u64 {
        self.fallback_after.unwrap_or(self.candidates)
    }
}

/// The `queries` rows at or after `since`, oldest first.
pub fn queries(connection: &Connection, since: i64) -> Result<Vec<QueryRow>, StoreError> {
    let mut statement = connection.prepare(
        "SELECT at, query, candidates, survivors, returned, matched, all_candidates FROM queries
         WHERE at >= ?1 ORDER BY at, rowid",
    )?;
    let rows = statement.query_map([since], |row| {
        let matched: String = row.get(5)?;
        let all_candidates: Option<i64> = row.get(6)?;
        Ok(QueryRow {
            at: row.get(0)?,
            query: row.get(1)?,
            candidates: row.get::<_, i64>(2)? as u64,
            survivors: row.get::<_, i64>(3)? as u64,
            returned: row.get::<_, i64>(4)? as u64,
            // A search by meaning alone ran no all-words query to fall back
            // from: its column is empty.
            fallback_after: match (matched.as_str(), all_candidates) {
                ("any", candidates) => Some(candidates.unwrap_or(0) as u64),
                ("meaning", Some(candidates)) => Some(candidates as u64),
                _ => None,
            },
            by_meaning: matched == "meaning",
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A file's passages, in order.
pub fn passages(connection: &Connection, fileid: u64) -> Result<Vec<NewPassage>, StoreError> {
    let first = (fileid << PASSAGE_INDEX_BITS) as i64;
    let last = first + (1 << PASSAGE_INDEX_BITS) - 1;
    let mut statement = connection.prepare(
        "SELECT heading, byte_offset, byte_length, text FROM passages
         WHERE rowid BETWEEN ?1 AND ?2 ORDER BY rowid",
    )?;
    let rows = statement.query_map(params![first, last], |row| {
        Ok(NewPassage {
            heading: row.get(0)?,
            offset: row.get::<_, i64>(1)? as usize,
            length: row.get::<_, i64>(2)? as usize,
            text: row.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Empties the index (every table); the schema stays.
pub fn clear(connection: &Connection) -> Result<(), StoreError> {
    connection.execute_batch(
        "INSERT INTO terms (terms) VALUES ('delete-all');
         DELETE FROM passages; DELETE FROM vectors; DELETE FROM docs; DELETE FROM queries;",
    )?;
    Ok(())
}

/// One row of `docs`, for tests and operators.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Doc {
    pub fileid: u64,
    pub path: String,
    pub mtime: Option<i64>,
    pub dirty: bool,
    pub attempts: i64,
    pub status: String,
    pub last_error: Option<String>,
}

pub fn doc(connection: &Connection, fileid: u64) -> Result<Option<Doc>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT fileid, path, mtime, dirty, attempts, status, last_error FROM docs
             WHERE fileid = ?1",
            [fileid as i64],
            |row| {
                Ok(Doc {
                    fileid: row.get::<_, i64>(0)? as u64,
                    path: row.get(1)?,
                    mtime: row.get(2)?,
                    dirty: row.get::<_, i64>(3)? != 0,
                    attempts: row.get(4)?,
                    status: row.get(5)?,
                    last_error: row.get(6)?,
                })
            },
        )
        .optional()?)
}

#[cfg(test)]
mod tests;
