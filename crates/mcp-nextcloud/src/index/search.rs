//! A search: the catalogue proposes, Nextcloud disposes.
//!
//! 1. FTS5 finds candidate passages, best first (bm25).
//! 2. They are grouped by file, keeping the best-first order of files.
//! 3. Nextcloud is asked, as the user, which of the candidate files they can
//!    read now — one DAV SEARCH per 100 file ids, scoped to the folder when
//!    the search is. A file the check does not confirm is not shown: an
//!    error fails closed.
//! 4. Survivors' passages are returned until `limit`; when survivors are
//!    few, the next, larger batch of candidates is checked, so a user who
//!    can read 0.1 % of the corpus still gets a full page if matches exist.
//! 5. What happened is recorded in `queries`: candidates, survivors,
//!    returned.
//!
//! The passages of files the user cannot read are never fetched: their
//! text, headings and snippets stay in the database.

use super::query::FtsQuery;
use super::store::{self, Hit};
use super::{Index, Readiness};
use crate::failure::ToolFailure;
use crate::nextcloud::Nextcloud;
use crate::nextcloud::dav::FileInfo;
use std::collections::HashMap;

/// The most passages a query considers.
pub const CANDIDATES_MAX: usize = 20_000;
/// Files checked per permission round, growing by this factor each round.
pub const CHECK_FIRST: usize = 50;
pub const CHECK_GROWTH: usize = 10;
/// Permission rounds per search: 50, 500, then 5 000 files (at most 56
/// requests of 100 ids, four at a time).
pub const CHECK_ROUNDS_MAX: usize = 3;
/// Passages of one file on a page; more are a `files_read` away.
pub const PASSAGES_PER_FILE_MAX: usize = 3;

#[derive(Debug, Clone)]
pub struct Request {
    pub query: Option<String>,
    /// Only passages whose heading has these words.
    pub heading: Option<String>,
    /// Only files below this folder (the user's path).
    pub folder: Option<String>,
    pub limit: usize,
}

/// A passage the user may see.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    pub path: String,
    pub fileid: u64,
    pub heading: Option<String>,
    pub offset: u64,
    pub length: u64,
    pub snippet: String,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub passages: Vec<Found>,
    /// Distinct candidate files.
    pub candidates: usize,
    /// Candidate files checked and readable.
    pub survivors: usize,
    /// All terms matched together (false: the OR fallback was used).
    pub matched_all: bool,
    pub readiness: Readiness,
}

pub async fn search(
    index: &Index,
    nextcloud: &Nextcloud,
    request: &Request,
) -> Result<Outcome, ToolFailure> {
    let query = request.query.as_deref().and_then(FtsQuery::parse);
    let heading = request.heading.as_deref().and_then(FtsQuery::parse);
    let (all, any) = match (&query, &heading) {
        (None, None) => {
            return Err(ToolFailure::invalid_arguments(
                "Give query (words to find in documents) or heading (words of a section title).",
            ));
        }
        (Some(query), None) => (query.all(), (query.term_count() > 1).then(|| query.any())),
        (None, Some(heading)) => (format!("heading : ({})", heading.all()), None),
        (Some(query), Some(heading)) => (
            format!("({}) AND heading : ({})", query.all(), heading.all()),
            (query.term_count() > 1)
                .then(|| format!("({}) AND heading : ({})", query.any(), heading.all())),
        ),
    };
    let (fts, candidates, matched_all) = {
        let found = find(index, all.clone()).await?;
        match (found.is_empty(), any) {
            (true, Some(any)) => (any.clone(), find(index, any).await?, false),
            _ => (all, found, true),
        }
    };

    // Group by file, best file first.
    let mut files: Vec<(u64, Vec<i64>)> = Vec::new();
    let mut position: HashMap<u64, usize> = HashMap::new();
    for candidate in &candidates {
        let slot = *position.entry(candidate.fileid).or_insert_with(|| {
            files.push((candidate.fileid, Vec::new()));
            files.len() - 1
        });
        if files[slot].1.len() < PASSAGES_PER_FILE_MAX {
            files[slot].1.push(candidate.rowid);
        }
    }
    let mut survivors: Vec<FileInfo> = Vec::new();
    let mut chosen: Vec<(i64, usize)> = Vec::new(); // rowid, survivor index
    let mut checked = 0;
    let mut batch = CHECK_FIRST;
    let mut check_failure = None;
    for _ in 0..CHECK_ROUNDS_MAX {
        if checked >= files.len() || chosen.len() >= request.limit {
            break;
        }
        let end = (checked + batch).min(files.len());
        let ids: Vec<u64> = files[checked..end].iter().map(|(fileid, _)| *fileid).collect();
        match super::visible::readable(nextcloud, &ids, request.folder.as_deref()).await {
            Ok(readable) => {
                let readable: HashMap<u64, FileInfo> =
                    readable.into_iter().map(|file| (file.fileid, file)).collect();
                for (fileid, rowids) in &files[checked..end] {
                    let Some(file) = readable.get(fileid) else { continue };
                    survivors.push(file.clone());
                    for rowid in rowids {
                        if chosen.len() < request.limit {
                            chosen.push((*rowid, survivors.len() - 1));
                        }
                    }
                }
            }
            Err(failure) => {
                check_failure = Some(failure);
                break;
            }
        }
        checked = end;
        batch *= CHECK_GROWTH;
    }
    let rowids: Vec<i64> = chosen.iter().map(|(rowid, _)| *rowid).collect();
    let seen: Vec<store::SeenFile> = survivors.iter().map(super::fill::seen_file).collect();
    let query_text = match (&request.query, &request.heading) {
        (Some(query), Some(heading)) => format!("{query} [heading: {heading}]"),
        (Some(query), None) => query.clone(),
        (None, Some(heading)) => format!("[heading: {heading}]"),
        (None, None) => String::new(),
    };
    let counts = (files.len(), survivors.len(), rowids.len());
    let now = super::now();
    let hits: Vec<Hit> = index
        .store()
        .run(move |connection| {
            let hits = store::hits(connection, &fts, &rowids)?;
            // What the check saw refreshes the rows (and marks changed files dirty).
            let transaction = connection.transaction()?;
            for file in &seen {
                store::record_seen(&transaction, file, now)?;
            }
            store::record_query(&transaction, now, &query_text, counts.0, counts.1, counts.2)?;
            transaction.commit()?;
            Ok(hits)
        })
        .await
        .map_err(store_failure)?;
    if let Some(failure) = check_failure
        && hits.is_empty()
    {
        return Err(failure);
    }
    let by_rowid: HashMap<i64, usize> = chosen.iter().copied().collect();
    let mut passages = Vec::with_capacity(hits.len());
    for hit in hits {
        let file = &survivors[by_rowid[&hit.rowid]];
        passages.push(Found {
            path: file.path.clone(),
            fileid: hit.fileid,
            heading: hit.heading,
            offset: hit.offset,
            length: hit.length,
            snippet: hit.snippet,
        });
    }
    Ok(Outcome {
        passages,
        candidates: counts.0,
        survivors: counts.1,
        matched_all,
        readiness: index.readiness(&nextcloud.uid),
    })
}

async fn find(index: &Index, fts: String) -> Result<Vec<store::Candidate>, ToolFailure> {
    index
        .store()
        .run(move |connection| store::candidates(connection, &fts, CANDIDATES_MAX))
        .await
        .map_err(store_failure)
}

fn store_failure(error: store::StoreError) -> ToolFailure {
    tracing::error!(error = %error, "index query failed");
    ToolFailure::new(
        crate::failure::FailureKind::NextcloudUnreachable,
        "The document index could not be searched just now. Use files_search to find files by name, or try again in a moment.",
    )
}
