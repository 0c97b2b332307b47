//! A search: the catalogue proposes, Nextcloud disposes.
//!
//! 1. FTS5 finds candidate passages for all the words, best first (bm25).
//! 2. They are grouped by file, keeping the best-first order of files.
//! 3. Nextcloud is asked, as the user, which of the candidate files they can
//!    read now — one DAV SEARCH per 100 file ids, scoped to the folder when
//!    the search is. A file the check does not confirm is not shown: an
//!    error fails closed.
//! 4. Survivors' passages are returned until `limit`; when survivors are
//!    few, the next, larger batch of candidates is checked, so a user who
//!    can read 0.1 % of the corpus still gets a full page if matches exist.
//! 5. Only when no passage with all the words survives does the same run
//!    for any of the words (`matched: any`), passages with more distinct
//!    words first. "Words" are content words throughout: stop words never
//!    drive a match ([`super::query`]), and each matches by its stem.
//! 6. What happened is recorded in `queries`: candidates, survivors,
//!    returned, and whether the fallback answered (with the all-words
//!    query's candidates, so the report still sees that hole).
//!
//! The passages of files the user cannot read are never fetched: their
//! text, headings and snippets stay in the database. Nor may they decide
//! anything the user is told: whether the fallback runs and what `matched`
//! says follow from survivors only, an empty answer always says `all`, and
//! the first permission round is asked even for a query without candidates
//! (docs/decisions.md, "files_grep tells a caller only what survived").

use super::query::FtsQuery;
use super::store::{self, Hit};
use super::{Index, Readiness};
use crate::nextcloud::Nextcloud;
use crate::nextcloud::dav::FileInfo;
use std::collections::HashMap;
use wire::ToolFailure;

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
    /// All terms matched together (false: no readable passage had them
    /// all, and these passages have some). True for an empty answer.
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
        (None, Some(heading)) => (format!("title : ({})", heading.all()), None),
        (Some(query), Some(heading)) => (
            format!("({}) AND title : ({})", query.all(), heading.all()),
            (query.term_count() > 1)
                .then(|| format!("({}) AND title : ({})", query.any(), heading.all())),
        ),
    };
    // The fallback ranks by how many distinct content words a passage has.
    let any = any.map(|any| (any, query.as_ref().map(FtsQuery::terms).unwrap_or_default()));
    // The all-words query first; only when none of its passages survives
    // the check as this caller does the any-word query run. Both decisions
    // read survivors only, never candidates: candidates include passages of
    // documents the caller cannot open, and whether two words meet in one
    // of those is exactly what the caller must not learn.
    let mut phase = check(index, nextcloud, request, all, Vec::new()).await?;
    // The all-words query's candidate files, when the fallback runs.
    let mut fallback_after = None;
    if phase.chosen.is_empty()
        && phase.failure.is_none()
        && let Some((any, terms)) = any
    {
        fallback_after = Some(phase.files);
        phase = check(index, nextcloud, request, any, terms).await?;
    }
    let fallback = fallback_after.is_some();
    let Phase { fts, files, survivors, chosen, failure: check_failure } = phase;
    let rowids: Vec<i64> = chosen.iter().map(|(rowid, _)| *rowid).collect();
    let seen: Vec<store::SeenFile> = survivors.iter().map(super::fill::seen_file).collect();
    let query_text = match (&request.query, &request.heading) {
        (Some(query), Some(heading)) => format!("{query} [heading: {heading}]"),
        (Some(query), None) => query.clone(),
        (None, Some(heading)) => format!("[heading: {heading}]"),
        (None, None) => String::new(),
    };
    let recorded = store::Search {
        candidates: files,
        survivors: survivors.len(),
        returned: rowids.len(),
        fallback_after,
    };
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
            store::record_search(&transaction, now, &query_text, &recorded)?;
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
    let marked = query.as_ref().or(heading.as_ref());
    for hit in hits {
        let file = &survivors[by_rowid[&hit.rowid]];
        let snippet = match marked {
            Some(marked) => super::snippet::snippet(&hit.text, hit.language, marked),
            None => String::new(),
        };
        passages.push(Found {
            path: file.path.clone(),
            fileid: hit.fileid,
            heading: hit.heading,
            offset: hit.offset,
            length: hit.length,
            snippet,
        });
    }
    // "any" only when the fallback's passages are shown: an empty answer
    // says "all" whichever query ran, so it reads the same whatever
    // documents the caller cannot open hold.
    let matched_all = !fallback || passages.is_empty();
    Ok(Outcome {
        passages,
        candidates: recorded.candidates,
        survivors: recorded.survivors,
        matched_all,
        readiness: index.readiness(&nextcloud.uid),
    })
}

/// One query's candidates through the permission check.
struct Phase {
    fts: String,
    /// Distinct candidate files.
    files: usize,
    /// Candidate files the check confirmed readable, in rank order.
    survivors: Vec<FileInfo>,
    /// Passages to show: rowid, survivor index.
    chosen: Vec<(i64, usize)>,
    /// A permission round that failed; the rounds stopped there.
    failure: Option<ToolFailure>,
}

/// Finds `fts`'s candidates, best first (by how many of `terms` they have,
/// then bm25, when `terms` are given), and asks Nextcloud which of their
/// files the caller can read, in growing rounds until `limit` passages
/// survive. The first round always asks, even with no candidate at all (for
/// a file id no file has), so that an answer with nothing readable costs
/// the same request whether or not other users' documents matched, and an
/// unreachable Nextcloud fails the search either way.
async fn check(
    index: &Index,
    nextcloud: &Nextcloud,
    request: &Request,
    fts: String,
    terms: Vec<String>,
) -> Result<Phase, ToolFailure> {
    let candidates = find(index, fts.clone(), terms).await?;
    let files = by_file(&candidates);
    let mut survivors: Vec<FileInfo> = Vec::new();
    let mut chosen: Vec<(i64, usize)> = Vec::new();
    let mut checked = 0;
    let mut batch = CHECK_FIRST;
    let mut failure = None;
    for round in 0..CHECK_ROUNDS_MAX {
        if round > 0 && (checked >= files.len() || chosen.len() >= request.limit) {
            break;
        }
        let end = (checked + batch).min(files.len());
        let mut ids: Vec<u64> = files[checked..end].iter().map(|(fileid, _)| *fileid).collect();
        if ids.is_empty() {
            ids.push(NO_FILE);
        }
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
            Err(error) => {
                failure = Some(error);
                break;
            }
        }
        checked = end;
        batch *= CHECK_GROWTH;
    }
    Ok(Phase { fts, files: files.len(), survivors, chosen, failure })
}

/// The file id the first permission round asks about when a query has no
/// candidate: Nextcloud numbers files from 1, and only candidate files are
/// looked up in the answer, so nothing it says is shown.
const NO_FILE: u64 = 0;

/// `candidates` (best first) grouped by file, best file first: each file's
/// id with the row ids of at most [`PASSAGES_PER_FILE_MAX`] of its passages,
/// best first. Public so the grep benchmark replays the same grouping.
pub fn by_file(candidates: &[store::Candidate]) -> Vec<(u64, Vec<i64>)> {
    let mut files: Vec<(u64, Vec<i64>)> = Vec::new();
    let mut position: HashMap<u64, usize> = HashMap::new();
    for candidate in candidates {
        let slot = *position.entry(candidate.fileid).or_insert_with(|| {
            files.push((candidate.fileid, Vec::new()));
            files.len() - 1
        });
        if files[slot].1.len() < PASSAGES_PER_FILE_MAX {
            files[slot].1.push(candidate.rowid);
        }
    }
    files
}

async fn find(
    index: &Index,
    fts: String,
    terms: Vec<String>,
) -> Result<Vec<store::Candidate>, ToolFailure> {
    index
        .store()
        .run(move |connection| {
            let candidates = store::candidates(connection, &fts, CANDIDATES_MAX)?;
            if terms.len() < 2 {
                return Ok(candidates);
            }
            let counts = store::distinct_terms(connection, &terms, &candidates)?;
            let mut ranked: Vec<(usize, store::Candidate)> =
                counts.into_iter().zip(candidates).collect();
            // Stable: bm25's order stays within each count.
            ranked.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
            Ok(ranked.into_iter().map(|(_, candidate)| candidate).collect())
        })
        .await
        .map_err(store_failure)
}

fn store_failure(error: store::StoreError) -> ToolFailure {
    tracing::error!(error = %error, "index query failed");
    ToolFailure::new(
        wire::FailureKind::NextcloudUnreachable,
        "The document index could not be searched just now. Use files_search to find files by name, or try again in a moment.",
    )
}
