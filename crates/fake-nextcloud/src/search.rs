//! RFC 5323 SEARCH (`basicsearch`) at `/remote.php/dav/`, as Nextcloud's
//! files search (SearchDAV + FileSearchBackend) answers it.
//!
//! What Nextcloud does, and so this does: a scope is an href relative to the
//! DAV root (`/files/alice/Documents`, taken as is) or an absolute URL; the
//! scope's `d:depth` is ignored (the search is always recursive) and the
//! scope folder itself is not a result; without `d:nresults` at most 100
//! results come back; `like` on the name is case-insensitive; any favorite
//! comparison means "is a favorite". Results come from
//! [`crate::storage::Storage::walk`], so a user finds exactly what they can
//! see, received shares included. A scope in another user's files is a 404.

mod query;

use crate::Shared;
use crate::dav::{self, DavError, DavRequest};
use crate::files::properties::{self, Context};
use crate::files::{files_href_base, href, insert};
use crate::storage::{self, Entry};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use query::{Candidate, Order, Property, QueryError};
use std::collections::HashSet;

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    search(shared, &request).into_response()
}

fn search(shared: &Shared, request: &DavRequest) -> Result<Response, DavError> {
    // SearchPlugin only takes XML bodies; anything else falls through to
    // sabre's "no plugin" 501.
    let content_type = request.header("content-type").unwrap_or("");
    if !content_type.contains("text/xml") && !content_type.contains("application/xml") {
        return Err(DavError::no_plugin_for("SEARCH"));
    }
    let root = match crate::xml::parse(&request.body) {
        Ok(root) => root,
        Err(error) => return Ok(parse_error(&format!("Parse error: {error}"))),
    };
    let query = match query::parse(&root, &request.user.uid) {
        Ok(query) => query,
        Err(QueryError::Parse(message)) => {
            return Ok(parse_error(&format!("Parse error: {message}")));
        }
        Err(QueryError::DocumentType(message)) => return Ok(parse_error(&message)),
        Err(QueryError::Invalid(message)) => return Err(DavError::BadRequest(message)),
    };
    let body = {
        let world = shared.world();
        let user = world.user(&request.user.uid).ok_or_else(DavError::not_found)?;
        let viewer = user.viewer();
        let mut results: Vec<Entry<'_>> = Vec::new();
        // Paths already in `results`, so that overlapping scopes cost no
        // quadratic scan.
        let mut seen: HashSet<String> = HashSet::new();
        for scope in &query.scopes {
            let scope_path = scope_path(scope, &request.user.uid)?;
            let folder = world.storage.resolve(viewer, &scope_path).map_err(|_| {
                crate::files::not_found_path(&format!("files/{}/{scope_path}", request.user.uid))
            })?;
            if !folder.node.is_folder() {
                return Err(DavError::bad_request("Search is only supported on directories"));
            }
            for entry in world.storage.walk(viewer, &scope_path).unwrap_or_default() {
                let is_scope_itself = entry.path == scope_path;
                if !is_scope_itself && seen.insert(entry.path.clone()) {
                    results.push(entry);
                }
            }
        }
        if query.limit_to_home {
            results.retain(|entry| entry.share.is_none());
        }
        let names: Vec<&str> =
            results.iter().map(|entry| storage::parent_and_name(&entry.path).1).collect();
        let mut kept: Vec<(&Entry<'_>, Candidate<'_>)> = Vec::new();
        for (entry, name) in results.iter().zip(names) {
            let summary = world.storage.summary(viewer, entry);
            let candidate = Candidate {
                name,
                mime: entry.node.mime(),
                mtime: summary.mtime,
                ctime: entry.node.ctime,
                size: summary.size,
                favorite: entry.is_favorite_of(viewer.uid),
                fileid: entry.node.id,
                is_folder: entry.node.is_folder(),
            };
            if query.condition.matches(&candidate) {
                kept.push((entry, candidate));
            }
        }
        // Database order (file id) first; the requested order on top of it.
        kept.sort_by_key(|(_, candidate)| candidate.fileid);
        kept.sort_by(|a, b| compare_by_orders(&a.1, &b.1, &query.order));
        let count_max = query.result_count_max.unwrap_or(query::RESULT_COUNT_DEFAULT);
        let context = Context { world: &world, viewer, link: None };
        let base = files_href_base(&request.user.uid);
        let mut responses = String::new();
        for (entry, _) in kept.into_iter().skip(query.first_result).take(count_max) {
            let entry_href = href(&base, &entry.path, entry.node.is_folder());
            responses.push_str(&properties::response(
                &context,
                entry,
                &entry_href,
                &query.selection,
                false,
            ));
        }
        properties::multistatus(&responses)
    };
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", "application/xml; charset=\"utf-8\"");
    Ok((StatusCode::MULTI_STATUS, headers, body).into_response())
}

/// SearchDAV's plain-text 400: it sets a body rather than throwing a sabre
/// exception, so it is an answer of its own, not a [`DavError`].
fn parse_error(body: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

/// The path inside the caller's files that a scope href names.
///
/// PathHelper: an href without `://` is a path relative to the DAV root,
/// used as sent (not percent-decoded); an absolute URL must lie below
/// `/remote.php/dav/` and is decoded.
fn scope_path(scope: &str, uid: &str) -> Result<String, DavError> {
    let scope = scope.trim();
    let segments: Vec<String> = if scope.contains("://") {
        let Ok(url) = url::Url::parse(scope) else {
            return Err(DavError::bad_request("The search scope is not a valid URL"));
        };
        let Some(rest) = url.path().strip_prefix(&format!("{}/", dav::DAV_ROOT)) else {
            return Err(DavError::bad_request(
                "Using uri's as scope is not supported, please use a path relative to the search arbiter instead",
            ));
        };
        let clean =
            storage::parse_dav_path(rest).map_err(|_| DavError::bad_request("Invalid scope"))?;
        clean.split('/').filter(|segment| !segment.is_empty()).map(str::to_string).collect()
    } else {
        let mut segments = Vec::new();
        for segment in scope.split('/').filter(|segment| !segment.is_empty()) {
            if segment == "." || segment == ".." {
                return Err(DavError::bad_request("Invalid scope"));
            }
            segments.push(segment.to_string());
        }
        segments
    };
    match segments.as_slice() {
        [files, owner, rest @ ..] if files == "files" => {
            if owner != uid {
                // Another user's tree: nothing there, as for PROPFIND.
                return Err(crate::files::not_found_path(&segments.join("/")));
            }
            Ok(rest.join("/"))
        }
        _ => Err(DavError::bad_request("Search is only supported on directories")),
    }
}

/// FileSearchBackend::sort: the first order that tells two results apart.
fn compare_by_orders(a: &Candidate<'_>, b: &Candidate<'_>, orders: &[Order]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for order in orders {
        let ordering = match order.property {
            Property::DisplayName => a.name.cmp(b.name),
            Property::ContentType => a.mime.cmp(b.mime),
            Property::LastModified | Property::LastActivity => a.mtime.cmp(&b.mtime),
            Property::CreationDate => a.ctime.cmp(&b.ctime),
            Property::Size => a.size.cmp(&b.size),
            Property::FileId => a.fileid.cmp(&b.fileid),
            Property::Favorite => a.favorite.cmp(&b.favorite),
            Property::UploadTime | Property::OwnerId => Ordering::Equal,
        };
        let ordering = if order.descending { ordering.reverse() } else { ordering };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}
