//! One pass with the searching user's credential: discovery, then reading.
//!
//! Discovery is metadata only — a DAV SEARCH for files modified since the
//! user's watermark, oldest first, a few pages — so it races ahead of the
//! reading, which is slow. Reading takes the queue in its order (see
//! [`store::queue`]), asks Nextcloud which of those rows this user can read
//! (one SEARCH on their file ids), and reads at most
//! [`Limits::pass_documents`] of them, [`Limits::concurrency`] at a time
//! across all users. Rows the user cannot read are left for someone who
//! can.
//!
//! A failure is not a verdict. Only the document's own faults count as an
//! attempt (the third gives up); a scan is parked as `needs_ocr` at once; a
//! download that got no answer (or a 401/429, which are about the caller,
//! not the file) or a converter that refused (a missing JWT secret fails
//! exactly like an unreadable file) leaves the row dirty and uncounted, so
//! fixing the configuration brings every row back — the seeds' bug, where
//! a missing secret parked the whole corpus for good. A download Nextcloud
//! refused for this file (423 locked, 503 for an offline external storage,
//! 403, 404) is the file's own fault and counts: uncounted, a handful of
//! such files stayed untried-newest at the head of the queue, took every
//! pass and starved the rest — the seeds' "failed rows behind untried" bug
//! by another route. The permission check that chose the file succeeded a
//! moment before, so Nextcloud as a whole was answering.

use super::store::{self, Failure, NewPassage, SeenFile};
use super::{Index, Limits};
use crate::document::{self, Route, TextError};
use crate::nextcloud::Nextcloud;
use crate::nextcloud::dav::FileInfo;
use std::collections::HashMap;

/// What a pass learned, for the user's in-memory state.
#[derive(Debug, Default)]
pub struct PassOutcome {
    pub discovery: Option<Discovery>,
    pub waiting: Option<usize>,
}

#[derive(Debug, Clone, Copy)]
pub struct Discovery {
    pub watermark: i64,
    pub seen_at_watermark: usize,
    pub caught_up: bool,
}

pub async fn pass(index: &Index, nextcloud: &Nextcloud) -> PassOutcome {
    let limits = index.inner.limits;
    let discovery = match discover(index, nextcloud, &limits).await {
        Ok(discovery) => Some(discovery),
        Err(error) => {
            tracing::warn!(uid = %nextcloud.uid, error = %error, "index discovery stopped");
            None
        }
    };
    let waiting = match read(index, nextcloud, &limits).await {
        Ok(waiting) => Some(waiting),
        Err(error) => {
            tracing::warn!(uid = %nextcloud.uid, error = %error, "index reading stopped");
            None
        }
    };
    PassOutcome { discovery, waiting }
}

async fn discover(
    index: &Index,
    nextcloud: &Nextcloud,
    limits: &Limits,
) -> Result<Discovery, String> {
    let (mut watermark, mut seen_at_watermark) = index.discovery_start(&nextcloud.uid);
    let mut caught_up = false;
    for _ in 0..limits.discovery_pages {
        let page = super::visible::changed_since(
            nextcloud,
            watermark,
            seen_at_watermark,
            limits.discovery_page,
        )
        .await
        .map_err(|failure| failure.message)?;
        for file in &page {
            if file.mtime_unix == watermark {
                seen_at_watermark += 1;
            } else {
                watermark = file.mtime_unix.max(watermark);
                seen_at_watermark = 1;
            }
        }
        let full = page.len() >= limits.discovery_page;
        let seen: Vec<SeenFile> = page
            .iter()
            .filter(|file| document::may_have_text(file.mime.as_deref(), &file.path))
            .map(seen_file)
            .collect();
        let now = super::now();
        index
            .store()
            .run(move |connection| {
                let transaction = connection.transaction()?;
                for file in &seen {
                    store::record_seen(&transaction, file, now)?;
                }
                transaction.commit()?;
                Ok(())
            })
            .await
            .map_err(|error| error.to_string())?;
        if !full {
            caught_up = true;
            break;
        }
    }
    Ok(Discovery { watermark, seen_at_watermark, caught_up })
}

pub fn seen_file(file: &FileInfo) -> SeenFile {
    SeenFile {
        fileid: file.fileid,
        path: file.path.clone(),
        mtime: Some(file.mtime_unix),
        etag: file.etag.clone(),
        size: Some(file.size),
        mime: file.mime.clone(),
    }
}

/// Reads up to a pass's worth of documents; returns how many readable
/// documents it saw waiting beyond those.
async fn read(index: &Index, nextcloud: &Nextcloud, limits: &Limits) -> Result<usize, String> {
    let converter_usable = index.converter_usable();
    let scan = limits.queue_scan;
    let queued = index
        .store()
        .run(move |connection| store::queue(connection, 0, scan))
        .await
        .map_err(|error| error.to_string())?;
    let queued: Vec<store::Queued> = {
        let reading = index.inner.reading.lock().expect("reading lock");
        queued
            .into_iter()
            .filter(|row| !reading.contains(&row.fileid))
            .filter(|row| {
                converter_usable
                    || document::route(row.mime.as_deref(), &row.path, true) != Route::Convert
            })
            .collect()
    };
    if queued.is_empty() {
        return Ok(0);
    }
    let fileids: Vec<u64> = queued.iter().map(|row| row.fileid).collect();
    let readable: HashMap<u64, FileInfo> = super::visible::readable(nextcloud, &fileids, None)
        .await
        .map_err(|failure| failure.message)?
        .into_iter()
        .map(|file| (file.fileid, file))
        .collect();
    // Refresh what the check told us (path, mtime, etag) before choosing:
    // a file that changed since it was queued gets a new version.
    let seen: Vec<SeenFile> = readable.values().map(seen_file).collect();
    let now = super::now();
    let versions: HashMap<u64, i64> = index
        .store()
        .run(move |connection| {
            let transaction = connection.transaction()?;
            let mut versions = HashMap::new();
            for file in &seen {
                store::record_seen(&transaction, file, now)?;
                if let Some(version) = store::version(&transaction, file.fileid)? {
                    versions.insert(file.fileid, version);
                }
            }
            transaction.commit()?;
            Ok(versions)
        })
        .await
        .map_err(|error| error.to_string())?;
    let readable_rows: Vec<(store::Queued, FileInfo)> = queued
        .into_iter()
        .filter_map(|mut row| {
            let file = readable.get(&row.fileid)?.clone();
            row.version = *versions.get(&row.fileid)?;
            Some((row, file))
        })
        .collect();
    let waiting = readable_rows.len().saturating_sub(limits.pass_documents);
    let chosen: Vec<(store::Queued, FileInfo)> = {
        let mut reading = index.inner.reading.lock().expect("reading lock");
        readable_rows
            .into_iter()
            .filter(|(row, _)| reading.insert(row.fileid))
            .take(limits.pass_documents)
            .collect()
    };
    let mut tasks = tokio::task::JoinSet::new();
    for (row, file) in chosen {
        let index = index.clone();
        let nextcloud = nextcloud.clone();
        tasks.spawn(async move {
            let permit = index.inner.readers.acquire().await;
            read_one(&index, &nextcloud, &row, &file).await;
            drop(permit);
            index.inner.reading.lock().expect("reading lock").remove(&row.fileid);
        });
    }
    while tasks.join_next().await.is_some() {}
    Ok(waiting)
}

async fn read_one(index: &Index, nextcloud: &Nextcloud, row: &store::Queued, file: &FileInfo) {
    let route = document::route(file.mime.as_deref(), &file.path, index.converter().is_some());
    let text = document::text(nextcloud, &file.path, route, index.converter()).await;
    let fileid = row.fileid;
    let version = row.version;
    let etag = file.etag.clone();
    let result = match text {
        Ok(text) => {
            let passages: Vec<NewPassage> = super::chunk::chunk(&text)
                .into_iter()
                .map(|passage| NewPassage {
                    text: text[passage.range()].to_string(),
                    heading: passage.heading,
                    offset: passage.offset,
                    length: passage.length,
                })
                .collect();
            let now = super::now();
            index
                .store()
                .run(move |connection| {
                    store::record_passages(
                        connection,
                        fileid,
                        version,
                        etag.as_deref(),
                        &passages,
                        now,
                    )
                    .map(|_| ())
                })
                .await
        }
        Err(error) => {
            let kind = error.kind();
            tracing::info!(fileid, kind, "document not read");
            let verdict = match &error {
                TextError::Extract(extract::ExtractError::NeedsOcr) => Some(Failure::NeedsOcr),
                TextError::Download(_) | TextError::Extract(extract::ExtractError::Busy) => None,
                TextError::DownloadRefused(_) => Some(Failure::Attempt),
                TextError::Convert(convert) if convert.is_configuration_fault() => {
                    index.converter_faulted();
                    None
                }
                TextError::Convert(crate::convert::ConvertError::Busy) => None,
                TextError::Unsupported
                    if document::may_have_text(file.mime.as_deref(), &file.path) =>
                {
                    // A converter format and no converter: waits for one.
                    None
                }
                _ => Some(Failure::Attempt),
            };
            index
                .store()
                .run(move |connection| match verdict {
                    Some(failure) => {
                        store::record_failure(connection, fileid, version, failure, kind)
                    }
                    None => store::record_waiting(connection, fileid, kind),
                })
                .await
        }
    };
    if let Err(error) = result {
        tracing::warn!(fileid, error = %error, "index write failed");
    }
}
