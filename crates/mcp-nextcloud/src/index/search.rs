//! A search: the catalogue proposes, Nextcloud disposes.
//!
//! 1. FTS5 finds candidate passages for all the words, best first (bm25).
//! 2. Their files are listed in the order of each file's best passage.
//! 3. Nextcloud is asked, as the user, which of the candidate files they can
//!    read now — one DAV SEARCH per 100 file ids, scoped to the folder when
//!    the search is. A file the check does not confirm is not shown: an
//!    error fails closed.
//! 4. Survivors' passages are returned in rank order, at most three a
//!    file, until `limit` (so one file's weaker passages never push out
//!    another's best: measured, docs/benchmarks.md); when survivors are
//!    few, the next, larger batch of candidates is checked, so a user who
//!    can read 0.1 % of the corpus still gets a full page if matches exist.
//! 5. Only when no passage with all the words survives does the same run
//!    for any of the words (`matched: any`), passages with more distinct
//!    words first. "Words" are content words throughout: stop words never
//!    drive a match ([`super::query`]), and each matches by its stem.
//!
//!    With embeddings on ([`Fusion`]; issue 17 §3), the passages nearest
//!    the query's embedding ([`super::dense`]) join in: by default fused
//!    with the word ranking by reciprocal rank, always; the other modes
//!    (only as the fallback, or alone) are kept for measurement
//!    (docs/decisions.md). They go through the same permission rounds,
//!    and `matched` says `meaning` when no shown passage has all the words.
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
use super::store::{self, Hit, Still};
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
    /// What the passages have in common with the query; `All` for an
    /// empty answer.
    pub matched: Matched,
    pub readiness: Readiness,
}

/// How the words and the meaning channel combine when embeddings are on
/// (issue 17 §3; measured in docs/decisions.md, "files_grep: how words and
/// meaning combine"). Without embeddings, or for a search by heading,
/// every mode is [`Fusion::Words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// Words only: all of them, then any of them.
    Words,
    /// All the words; when no passage with all of them survives, the
    /// passages nearest in meaning instead of those with some words.
    MeaningFallback,
    /// All the words; when no passage with all of them survives,
    /// reciprocal-rank fusion of the passages with some words and those
    /// nearest in meaning.
    FusedFallback,
    /// Always reciprocal-rank fusion of the word ranking (passages with
    /// more of the words first) and the meaning ranking. The default: the
    /// best of the five on eval/retrieval.
    #[default]
    Fused,
    /// The passages nearest in meaning, alone.
    Meaning,
}

impl Fusion {
    pub const ALL: [Fusion; 5] = [
        Fusion::Words,
        Fusion::MeaningFallback,
        Fusion::FusedFallback,
        Fusion::Fused,
        Fusion::Meaning,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fusion::Words => "words",
            Fusion::MeaningFallback => "meaning-fallback",
            Fusion::FusedFallback => "fused-fallback",
            Fusion::Fused => "fused",
            Fusion::Meaning => "meaning",
        }
    }

    /// Every mode's name, for error messages.
    pub fn names() -> Vec<&'static str> {
        Fusion::ALL.iter().map(|fusion| fusion.name()).collect()
    }

    pub fn parse(name: &str) -> Option<Fusion> {
        Fusion::ALL.into_iter().find(|fusion| fusion.name() == name)
    }
}

/// What the shown passages have in common with the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Matched {
    /// Every word (also said of an empty answer).
    All,
    /// No readable passage has every word; these have some.
    Any,
    /// No readable passage has every word; these are the nearest in
    /// meaning (embeddings), with or without some of the words.
    Meaning,
}

impl Matched {
    pub fn name(self) -> &'static str {
        match self {
            Matched::All => "all",
            Matched::Any => "any",
            Matched::Meaning => "meaning",
        }
    }
}

/// The rank constant of reciprocal-rank fusion (Cormack et al., 2009).
pub const RRF_K: f64 = 60.0;

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
    let terms = query.as_ref().map(FtsQuery::terms).unwrap_or_default();
    let model = index.embedder().map(|embedder| embedder.model());
    // The query by meaning: only for a search by words alone (not by
    // heading), with embeddings on.
    let (fusion, meaning_query) = match (request.query.as_deref(), &heading, &model) {
        (Some(text), None, Some(_)) => (index.fusion(), text),
        _ => (Fusion::Words, ""),
    };
    let words = Words { all: &all, any: any.as_deref(), terms: &terms };
    // Every decision below reads survivors only, never candidates:
    // candidates include passages of documents the caller cannot open, and
    // whether two words meet in one of those is exactly what the caller
    // must not learn.
    let (phase, matched, fallback_after) = match fusion {
        Fusion::Fused | Fusion::Meaning => match nearest(index, meaning_query).await? {
            Some(meaning) if fusion == Fusion::Meaning => {
                let still = Still { matching: None, embedded_by: model };
                (check(nextcloud, request, meaning, still).await?, Matched::Meaning, None)
            }
            Some(meaning) => fused(index, nextcloud, request, &words, meaning, model).await?,
            None => by_words(index, nextcloud, request, &words, None).await?,
        },
        Fusion::Words => by_words(index, nextcloud, request, &words, None).await?,
        Fusion::MeaningFallback | Fusion::FusedFallback => {
            let fallback =
                Fallback { fused: fusion == Fusion::FusedFallback, query: meaning_query, model };
            by_words(index, nextcloud, request, &words, Some(fallback)).await?
        }
    };
    let Phase { still, files, survivors, chosen, failure: check_failure } = phase;
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
        by_meaning: matched == Matched::Meaning,
    };
    let now = super::now();
    let proposed = rowids.len();
    let meaning_proposed = still.embedded_by.is_some();
    let hits: Vec<Hit> = index
        .store()
        .run(move |connection| {
            let hits = store::hits(connection, &still, &rowids)?;
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
    if meaning_proposed {
        index.stale_vectors(proposed - hits.len());
    }
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
    // Not "all" only when the fallback's passages are shown: an empty
    // answer says "all" whichever query ran, so it reads the same whatever
    // documents the caller cannot open hold.
    let matched = if passages.is_empty() { Matched::All } else { matched };
    Ok(Outcome {
        passages,
        candidates: recorded.candidates,
        survivors: recorded.survivors,
        matched,
        readiness: index.readiness(&nextcloud.uid),
    })
}

/// A query's words as FTS5 expressions: all of them, any of them (for a
/// query of several), and each one (what the any-word ranking counts).
struct Words<'a> {
    all: &'a str,
    any: Option<&'a str>,
    terms: &'a [String],
}

/// What a search by words falls back to by meaning, in the fallback modes.
struct Fallback<'a> {
    /// Fused with the any-word ranking (else the nearest alone).
    fused: bool,
    query: &'a str,
    model: Option<String>,
}

/// The all-words query, and only when none of its passages survives the
/// check as this caller: the nearest by meaning when `fallback` says so
/// and there are vectors, else the any-word query.
async fn by_words(
    index: &Index,
    nextcloud: &Nextcloud,
    request: &Request,
    words: &Words<'_>,
    fallback: Option<Fallback<'_>>,
) -> Result<(Phase, Matched, Option<usize>), ToolFailure> {
    let still = |fts: &str| Still { matching: Some(fts.to_string()), embedded_by: None };
    let all = find(index, words.all.to_string(), Vec::new()).await?;
    let phase = check(nextcloud, request, all, still(words.all)).await?;
    if !phase.chosen.is_empty() || phase.failure.is_some() {
        return Ok((phase, Matched::All, None));
    }
    let files = Some(phase.files);
    let any_ranked = || async {
        match words.any {
            Some(any) => find(index, any.to_string(), words.terms.to_vec()).await,
            None => Ok(Vec::new()),
        }
    };
    if let Some(fallback) = fallback
        && let Some(meaning) = nearest(index, fallback.query).await?
    {
        let (candidates, matching) = if fallback.fused {
            (fuse(&[&any_ranked().await?, &meaning]), words.any.map(str::to_string))
        } else {
            (meaning, None)
        };
        let still = Still { matching, embedded_by: fallback.model };
        return Ok((check(nextcloud, request, candidates, still).await?, Matched::Meaning, files));
    }
    match words.any {
        Some(any) => {
            let phase = check(nextcloud, request, any_ranked().await?, still(any)).await?;
            Ok((phase, Matched::Any, files))
        }
        None => Ok((phase, Matched::All, None)),
    }
}

/// Reciprocal-rank fusion of the word ranking (passages with more of the
/// words first) and `meaning`, through the check. `matched` speaks of the
/// shown passages only: all the words if one of them has them all.
async fn fused(
    index: &Index,
    nextcloud: &Nextcloud,
    request: &Request,
    words: &Words<'_>,
    meaning: Vec<store::Candidate>,
    model: Option<String>,
) -> Result<(Phase, Matched, Option<usize>), ToolFailure> {
    let fts = words.any.unwrap_or(words.all).to_string();
    let terms = words.terms.to_vec();
    let counted = index
        .store()
        .run(move |connection| counted(connection, &fts, &terms))
        .await
        .map_err(store_failure)?;
    let mut all_words = std::collections::HashSet::new();
    let mut all_files = std::collections::HashSet::new();
    let mut ranked = Vec::with_capacity(counted.len());
    for (count, candidate) in counted {
        if count >= words.terms.len() {
            all_words.insert(candidate.rowid);
            all_files.insert(candidate.fileid);
        }
        ranked.push(candidate);
    }
    let still =
        Still { matching: Some(words.any.unwrap_or(words.all).to_string()), embedded_by: model };
    let phase = check(nextcloud, request, fuse(&[&ranked, &meaning]), still).await?;
    let shows_all = phase.chosen.iter().any(|(rowid, _)| all_words.contains(rowid));
    if shows_all || phase.chosen.is_empty() {
        Ok((phase, Matched::All, None))
    } else {
        Ok((phase, Matched::Meaning, Some(all_files.len())))
    }
}

/// The passages nearest `text` in meaning, nearest first; `None` when the
/// query could not be embedded (logged) or no passage has a vector yet:
/// the search is then by words.
async fn nearest(index: &Index, text: &str) -> Result<Option<Vec<store::Candidate>>, ToolFailure> {
    let Some(embedder) = index.embedder() else { return Ok(None) };
    let vector = match embedder.embed_query(text).await {
        Ok(vector) => vector,
        Err(error) => {
            tracing::warn!(error = %error, "the query could not be embedded; searching by words");
            return Ok(None);
        }
    };
    let nearest = index.nearest(vector, CANDIDATES_MAX).await.map_err(store_failure)?;
    // No vector yet (embedding has not caught up): the search is by words.
    Ok(Some(nearest).filter(|nearest| !nearest.is_empty()))
}

/// Reciprocal-rank fusion: each passage scores the sum of `1 / (k + rank)`
/// over the rankings it is in; best first, ties in the first ranking's
/// order, then the next's.
pub fn fuse(rankings: &[&[store::Candidate]]) -> Vec<store::Candidate> {
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    let mut order: Vec<store::Candidate> = Vec::new();
    for ranking in rankings {
        for (rank, candidate) in ranking.iter().enumerate() {
            let entry = scores.entry(candidate.rowid).or_insert_with(|| {
                order.push(candidate.clone());
                (0.0, order.len() - 1)
            });
            entry.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    order.sort_by(|a, b| {
        let (a_score, a_first) = scores[&a.rowid];
        let (b_score, b_first) = scores[&b.rowid];
        b_score.total_cmp(&a_score).then(a_first.cmp(&b_first))
    });
    order.truncate(CANDIDATES_MAX);
    order
}

/// One query's candidates through the permission check.
struct Phase {
    /// What a shown passage must still be.
    still: Still,
    /// Distinct candidate files.
    files: usize,
    /// Candidate files the check confirmed readable, in rank order.
    survivors: Vec<FileInfo>,
    /// Passages to show: rowid, survivor index.
    chosen: Vec<(i64, usize)>,
    /// A permission round that failed; the rounds stopped there.
    failure: Option<ToolFailure>,
}

/// Asks Nextcloud which of `candidates`' files (best first) the caller can
/// read, in growing rounds until `limit` passages survive. The first round
/// always asks, even with no candidate at all (for a file id no file has),
/// so that an answer with nothing readable costs the same request whether
/// or not other users' documents matched, and an unreachable Nextcloud
/// fails the search either way.
async fn check(
    nextcloud: &Nextcloud,
    request: &Request,
    candidates: Vec<store::Candidate>,
    still: Still,
) -> Result<Phase, ToolFailure> {
    let files = file_order(&candidates);
    let mut survivors: Vec<FileInfo> = Vec::new();
    // Each checked file: its survivor index when readable.
    let mut checked_files: HashMap<u64, Option<usize>> = HashMap::new();
    let mut chosen: Vec<(i64, usize)> = Vec::new();
    let mut checked = 0;
    let mut batch = CHECK_FIRST;
    let mut failure = None;
    for round in 0..CHECK_ROUNDS_MAX {
        if round > 0 && (checked >= files.len() || chosen.len() >= request.limit) {
            break;
        }
        let end = (checked + batch).min(files.len());
        let mut ids: Vec<u64> = files[checked..end].to_vec();
        if ids.is_empty() {
            ids.push(NO_FILE);
        }
        match super::visible::readable(nextcloud, &ids, request.folder.as_deref()).await {
            Ok(readable) => {
                let readable: HashMap<u64, FileInfo> =
                    readable.into_iter().map(|file| (file.fileid, file)).collect();
                for fileid in &files[checked..end] {
                    let survivor = readable.get(fileid).map(|file| {
                        survivors.push(file.clone());
                        survivors.len() - 1
                    });
                    checked_files.insert(*fileid, survivor);
                }
            }
            Err(error) => {
                failure = Some(error);
                break;
            }
        }
        checked = end;
        batch *= CHECK_GROWTH;
        chosen = choose(&candidates, &checked_files, request.limit, Unchecked::Stop);
    }
    // No round follows: what the rounds did not reach is left out.
    chosen = choose(&candidates, &checked_files, request.limit, Unchecked::Skip);
    Ok(Phase { still, files: files.len(), survivors, chosen, failure })
}

/// What [`choose`] does at a passage of a file no round has checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unchecked {
    /// Stop there: another round may confirm it, and what follows ranks
    /// below it.
    Stop,
    /// Leave it out and go on: no round follows.
    Skip,
}

/// The passages to show, in `candidates`' order (best first, so a strong
/// passage of one file is not pushed out by another file's weaker ones):
/// those of readable files, at most [`PASSAGES_PER_FILE_MAX`] a file, up
/// to `limit`. `checked` maps each checked file to its survivor index
/// when readable. Public so the grep benchmark replays the same page.
pub fn choose(
    candidates: &[store::Candidate],
    checked: &HashMap<u64, Option<usize>>,
    limit: usize,
    unchecked: Unchecked,
) -> Vec<(i64, usize)> {
    let mut chosen = Vec::new();
    let mut per_file: HashMap<u64, usize> = HashMap::new();
    for candidate in candidates {
        if chosen.len() >= limit {
            break;
        }
        let survivor = match (checked.get(&candidate.fileid), unchecked) {
            (Some(Some(survivor)), _) => *survivor,
            (Some(None), _) | (None, Unchecked::Skip) => continue,
            (None, Unchecked::Stop) => break,
        };
        let shown = per_file.entry(candidate.fileid).or_default();
        if *shown < PASSAGES_PER_FILE_MAX {
            *shown += 1;
            chosen.push((candidate.rowid, survivor));
        }
    }
    chosen
}

/// The file id the first permission round asks about when a query has no
/// candidate: Nextcloud numbers files from 1, and only candidate files are
/// looked up in the answer, so nothing it says is shown.
const NO_FILE: u64 = 0;

/// The distinct files of `candidates` (best first), each at its best
/// passage's place: the order the permission rounds ask about them. Public
/// so the grep benchmark replays the same rounds.
pub fn file_order(candidates: &[store::Candidate]) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    candidates
        .iter()
        .filter(|candidate| seen.insert(candidate.fileid))
        .map(|candidate| candidate.fileid)
        .collect()
}

async fn find(
    index: &Index,
    fts: String,
    terms: Vec<String>,
) -> Result<Vec<store::Candidate>, ToolFailure> {
    index
        .store()
        .run(move |connection| ranked(connection, &fts, &terms))
        .await
        .map_err(store_failure)
}

/// `fts`'s candidates, best first: by how many of `terms` they have when
/// there are several, then bm25. Public so the grep benchmark replays the
/// same ranking.
pub fn ranked(
    connection: &rusqlite::Connection,
    fts: &str,
    terms: &[String],
) -> Result<Vec<store::Candidate>, store::StoreError> {
    Ok(counted(connection, fts, terms)?.into_iter().map(|(_, candidate)| candidate).collect())
}

/// [`ranked`], each candidate with how many of `terms` it has (with fewer
/// than two terms, each has them all: nothing to count).
fn counted(
    connection: &rusqlite::Connection,
    fts: &str,
    terms: &[String],
) -> Result<Vec<(usize, store::Candidate)>, store::StoreError> {
    let candidates = store::candidates(connection, fts, CANDIDATES_MAX)?;
    if terms.len() < 2 {
        return Ok(candidates.into_iter().map(|candidate| (terms.len(), candidate)).collect());
    }
    let counts = store::distinct_terms(connection, terms, &candidates)?;
    let mut ranked: Vec<(usize, store::Candidate)> = counts.into_iter().zip(candidates).collect();
    // Stable: bm25's order stays within each count.
    ranked.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
    Ok(ranked)
}

fn store_failure(error: store::StoreError) -> ToolFailure {
    tracing::error!(error = %error, "index query failed");
    ToolFailure::new(
        wire::FailureKind::NextcloudUnreachable,
        "The document index could not be searched just now. Use files_search to find files by name, or try again in a moment.",
    )
}
