//! Asking Nextcloud, as the user, about files: which of these file ids can
//! they read right now (the permission check every search result passes),
//! and which files changed after a time (discovery). Both are one DAV
//! SEARCH per batch, answered by Nextcloud's own search backend from the
//! user's own tree, so the answer carries the paths as this user sees them.

use crate::nextcloud::dav::{self, FileInfo, FileKind};
use crate::nextcloud::{Nextcloud, Subject};
use std::collections::HashSet;
use wire::ToolFailure;

/// File ids per permission-check request: Nextcloud's search backend
/// refuses a query with more than 100 comparisons (`OPERATOR_LIMIT`, since
/// Nextcloud 25), and turns an `or` of equalities into one SQL `IN`.
pub const CHECK_BATCH_MAX: usize = 100;
/// Permission-check requests in flight at once.
pub const CHECK_CONCURRENCY: usize = 4;

/// The files among `fileids` the user can read now (Nextcloud's `G`
/// permission), with the user's paths, in no particular order; with
/// `folder`, only those below it (the SEARCH's scope, so Nextcloud does the
/// narrowing). A file missing from the answer is not readable; an error
/// fails the whole check (the caller shows nothing it could not confirm).
pub async fn readable(
    nextcloud: &Nextcloud,
    fileids: &[u64],
    folder: Option<&str>,
) -> Result<Vec<FileInfo>, ToolFailure> {
    use futures_util::StreamExt as _;
    let asked: HashSet<u64> = fileids.iter().copied().collect();
    let batches: Vec<String> = fileids
        .chunks(CHECK_BATCH_MAX)
        .map(|batch| {
            let condition: String = batch
                .iter()
                .map(|fileid| {
                    format!(
                        "<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{fileid}</d:literal></d:eq>"
                    )
                })
                .collect();
            match batch.len() {
                1 => condition,
                _ => format!("<d:or>{condition}</d:or>"),
            }
        })
        .collect();
    let mut answers = futures_util::stream::iter(batches)
        .map(|condition| async move {
            search(nextcloud, folder.unwrap_or(""), &condition, "", CHECK_BATCH_MAX, 0).await
        })
        .buffer_unordered(CHECK_CONCURRENCY);
    let mut files = Vec::with_capacity(fileids.len());
    while let Some(found) = answers.next().await {
        files.extend(found?.into_iter().filter(|file| {
            file.kind == FileKind::File
                && file.permissions.contains('G')
                && asked.contains(&file.fileid)
        }));
    }
    Ok(files)
}

/// Files (not folders) modified at or after `since` (unix seconds), oldest
/// first, skipping the first `skip` of them: one page of discovery.
pub async fn changed_since(
    nextcloud: &Nextcloud,
    since: i64,
    skip: usize,
    count: usize,
) -> Result<Vec<FileInfo>, ToolFailure> {
    let since = chrono::DateTime::from_timestamp(since, 0).unwrap_or_default();
    let condition = format!(
        "<d:and><d:gte><d:prop><d:getlastmodified/></d:prop><d:literal>{}</d:literal></d:gte>\
<d:not><d:is-collection/></d:not></d:and>",
        since.format("%Y-%m-%dT%H:%M:%SZ")
    );
    let order = "<d:order><d:prop><d:getlastmodified/></d:prop><d:ascending/></d:order>";
    search(nextcloud, "", &condition, order, count, skip).await
}

async fn search(
    nextcloud: &Nextcloud,
    folder: &str,
    condition: &str,
    order: &str,
    count: usize,
    skip: usize,
) -> Result<Vec<FileInfo>, ToolFailure> {
    let uid = &nextcloud.uid;
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns" xmlns:ns="https://github.com/icewind1991/SearchDAV/ns">
<d:basicsearch>
<d:select><d:prop>{props}</d:prop></d:select>
<d:from><d:scope><d:href>/files/{uid}{folder}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where>{condition}</d:where>
<d:orderby>{order}</d:orderby>
<d:limit><d:nresults>{count}</d:nresults><ns:firstresult>{skip}</ns:firstresult></d:limit>
</d:basicsearch>
</d:searchrequest>"#,
        props = dav::FILE_PROPERTIES,
        uid = xml_tree::escape(uid),
        folder = match folder.trim_matches('/') {
            "" => String::new(),
            folder => format!("/{}", xml_tree::escape(folder)),
        },
    );
    let subject = if folder.is_empty() { Subject::Account } else { Subject::Path(folder) };
    Ok(nextcloud
        .search(body, subject)
        .await?
        .iter()
        .filter_map(|response| dav::file_info(response, uid))
        .filter(|file| !file.path.is_empty())
        .collect())
}
