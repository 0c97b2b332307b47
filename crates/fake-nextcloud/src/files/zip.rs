//! A folder downloaded whole: the dav app's ZipFolderPlugin answers a GET
//! of a folder that accepts `application/zip` with the folder as a zip
//! archive (entries named from the folder down: `testFolder/`,
//! `testFolder/text.txt`), and a folder link's download is the same
//! archive. Stored, not compressed: the fake keeps files in memory and
//! values the speed.

use crate::storage::{Entry, Storage, Viewer};
use std::io::Write as _;

/// Whether the request asks for a folder as an archive.
pub(crate) fn wanted(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| accept.contains("application/zip"))
}

/// The archive of the folder at `root` as `viewer` sees it; `None` when
/// the archive could not be written (it cannot fail in memory, but the
/// writer says it might).
pub(crate) fn archive(storage: &Storage, viewer: Viewer<'_>, root: &Entry<'_>) -> Option<Vec<u8>> {
    let name = crate::storage::parent_and_name(&root.path).1;
    let name = if name.is_empty() { "download" } else { name };
    let entries = storage.walk(viewer, &root.path).ok()?;
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(false);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for entry in &entries {
        let relative = match entry.path.strip_prefix(root.path.as_str()) {
            Some(rest) => rest.trim_start_matches('/'),
            None => continue,
        };
        let path =
            if relative.is_empty() { name.to_string() } else { format!("{name}/{relative}") };
        match entry.node.content() {
            None => writer.add_directory(format!("{path}/"), options).ok()?,
            Some(content) => {
                writer.start_file(path, options).ok()?;
                writer.write_all(content).ok()?;
            }
        }
    }
    Some(writer.finish().ok()?.into_inner())
}

/// The download's file name: the folder's, with `.zip`.
pub(crate) fn file_name(root: &Entry<'_>) -> String {
    let name = crate::storage::parent_and_name(&root.path).1;
    format!("{}.zip", if name.is_empty() { "download" } else { name })
}
