//! `vectors`: one embedding per passage, on the passage's own rowid, with
//! the name of the model that made it (issue 17 §3). Like every table of
//! `index.db` it has no user column: a vector is found by meaning and then
//! re-checked live, as the user, like any lexical hit.
//!
//! A vector is a little-endian `f32` blob (the layout sqlite-vec reads).
//! Changing the model leaves the old vectors in place until each passage
//! is embedded again; only vectors of the configured model count.

use super::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// The `settings` key naming the embeddings model the server is configured
/// with, so `tamebi index status` (which reads the file alone) can tell
/// embedded from pending.
pub const MODEL_KEY: &str = "embeddings_model";

/// Records the configured model (`None`: embeddings off).
pub fn set_model(connection: &Connection, model: Option<&str>) -> Result<(), StoreError> {
    match model {
        Some(model) => connection.execute(
            "INSERT INTO settings (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![MODEL_KEY, model],
        )?,
        None => connection.execute("DELETE FROM settings WHERE key = ?1", [MODEL_KEY])?,
    };
    Ok(())
}

/// The configured model, if embeddings are on.
pub fn model(connection: &Connection) -> Result<Option<String>, StoreError> {
    Ok(connection
        .query_row("SELECT value FROM settings WHERE key = ?1", [MODEL_KEY], |row| row.get(0))
        .optional()?)
}

/// Up to `limit` passages with no vector of `model`, highest file ids
/// (the most recently created files) first, as (rowid, text).
pub fn pending(
    connection: &Connection,
    model: &str,
    limit: usize,
) -> Result<Vec<(i64, String)>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT p.rowid, p.text FROM passages p
         LEFT JOIN vectors v ON v.rowid = p.rowid AND v.model = ?1
         WHERE v.rowid IS NULL
         ORDER BY p.rowid DESC
         LIMIT ?2",
    )?;
    let rows = statement
        .query_map(params![model, limit as i64], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Stores `vectors` made by `model`, replacing any older vector of those
/// passages. A passage replaced while its vector was being computed has a
/// new text: its rowid is gone or re-used, so a vector is written only for
/// a passage whose text is still the one embedded. For each of `vectors`,
/// whether it was written.
pub fn record(
    connection: &Connection,
    model: &str,
    vectors: &[(i64, String, Vec<f32>)],
) -> Result<Vec<bool>, StoreError> {
    let mut written = Vec::with_capacity(vectors.len());
    let mut statement = connection.prepare_cached(
        "INSERT INTO vectors (rowid, model, vector)
         SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM passages WHERE rowid = ?1 AND text = ?4)
         ON CONFLICT (rowid) DO UPDATE SET model = excluded.model, vector = excluded.vector",
    )?;
    for (rowid, text, vector) in vectors {
        written.push(statement.execute(params![rowid, model, to_blob(vector), text])? > 0);
    }
    Ok(written)
}

/// Passages with a vector of `model`.
pub fn embedded(connection: &Connection, model: &str) -> Result<u64, StoreError> {
    let count: i64 =
        connection.query_row("SELECT COUNT(*) FROM vectors WHERE model = ?1", [model], |row| {
            row.get(0)
        })?;
    Ok(count as u64)
}

/// A vector as the blob `vectors` stores.
pub fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|component| component.to_le_bytes()).collect()
}

/// A blob of `vectors` as the vector; `None` for a blob that is not whole
/// `f32`s.
pub fn from_blob(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
            .collect(),
    )
}
