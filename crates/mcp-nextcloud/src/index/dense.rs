//! The semantic channel's search side (issue 17 §3): the passages nearest
//! a query's embedding, by an exact scan.
//!
//! The vectors live in `index.db` ([`super::store::vectors`]); scanning
//! their blobs through SQLite for every search would read 1.5 KB a passage
//! (150 MB at 100 000 passages of a 384-dimension model). So the index
//! keeps one copy in memory, [`Vectors`], normalized to unit length (the
//! dot product is then the cosine), loaded on the first search that needs
//! it and kept current by the embedding passes that write the table.
//!
//! The copy only ranks; it decides nothing the user is told. A passage it
//! proposes is shown only if `index.db` still has a vector of the model for
//! that rowid ([`super::store::hits`]) and Nextcloud, asked as the user,
//! confirms the file — the same live check as every lexical hit. Its file
//! id comes from the rowid itself (`fileid << 20 | n`), so a stale entry
//! (a passage replaced since) can rank a passage of the same file, never a
//! passage of another one.

use super::store::{self, Candidate, StoreError, vectors};
use rusqlite::Connection;
use std::collections::HashMap;

/// The in-memory copy of one model's vectors.
#[derive(Debug, Default)]
pub struct Vectors {
    dimensions: usize,
    rowids: Vec<i64>,
    /// `rowids.len() * dimensions` components, unit vectors back to back.
    components: Vec<f32>,
    slot: HashMap<i64, usize>,
    /// Entries found stale by a search since the last load; past half the
    /// copy, it is loaded again.
    stale: usize,
}

impl Vectors {
    /// Every vector of `model` in `index.db`. Blobs that are not whole
    /// `f32`s, or of another dimension than the first, are left out.
    pub fn load(connection: &Connection, model: &str) -> Result<Vectors, StoreError> {
        let mut loaded = Vectors::default();
        let mut statement =
            connection.prepare("SELECT rowid, vector FROM vectors WHERE model = ?1")?;
        let mut rows = statement.query([model])?;
        while let Some(row) = rows.next()? {
            let rowid: i64 = row.get(0)?;
            let blob: Vec<u8> = row.get(1)?;
            if let Some(vector) = vectors::from_blob(&blob) {
                loaded.upsert(rowid, &vector);
            }
        }
        Ok(loaded)
    }

    pub fn len(&self) -> usize {
        self.rowids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rowids.is_empty()
    }

    /// Adds or replaces `rowid`'s vector. A vector of another dimension
    /// than the copy's, or of zero length, is ignored.
    pub fn upsert(&mut self, rowid: i64, vector: &[f32]) {
        if self.dimensions == 0 {
            self.dimensions = vector.len();
        }
        if vector.len() != self.dimensions || vector.is_empty() {
            return;
        }
        let Some(unit) = normalized(vector) else { return };
        match self.slot.get(&rowid) {
            Some(&slot) => {
                let start = slot * self.dimensions;
                self.components[start..start + self.dimensions].copy_from_slice(&unit);
            }
            None => {
                self.slot.insert(rowid, self.rowids.len());
                self.rowids.push(rowid);
                self.components.extend_from_slice(&unit);
            }
        }
    }

    /// The `limit` passages nearest `query` (by cosine), nearest first, as
    /// candidates; empty when the query's dimension is not the copy's.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<Candidate> {
        if query.len() != self.dimensions || self.is_empty() || limit == 0 {
            return Vec::new();
        }
        let Some(query) = normalized(query) else { return Vec::new() };
        let mut scored: Vec<(f32, i64)> = self
            .components
            .chunks_exact(self.dimensions)
            .zip(&self.rowids)
            .map(|(vector, rowid)| (dot(vector, &query), *rowid))
            .collect();
        let by_score = |a: &(f32, i64), b: &(f32, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_unstable_by(by_score);
        scored
            .into_iter()
            .map(|(_, rowid)| Candidate {
                rowid,
                fileid: (rowid as u64) >> store::PASSAGE_INDEX_BITS,
            })
            .collect()
    }

    /// Counts entries a search found without their vector in `index.db`;
    /// true once they are half the copy, so it should be loaded again.
    pub fn mark_stale(&mut self, count: usize) -> bool {
        self.stale += count;
        self.stale * 2 > self.rowids.len().max(1)
    }
}

/// The dot product, in eight lanes so the compiler vectorizes it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let mut a_chunks = a.chunks_exact(8);
    let mut b_chunks = b.chunks_exact(8);
    for (x, y) in (&mut a_chunks).zip(&mut b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// `vector` scaled to unit length; `None` for a zero or non-finite vector.
fn normalized(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = vector.iter().map(|component| component * component).sum::<f32>().sqrt();
    (norm.is_finite() && norm > 0.0).then(|| vector.iter().map(|c| c / norm).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rowid(fileid: u64, n: i64) -> i64 {
        ((fileid << store::PASSAGE_INDEX_BITS) as i64) + n
    }

    #[test]
    fn nearest_ranks_by_cosine_whatever_the_length() {
        let mut copy = Vectors::default();
        copy.upsert(rowid(1, 0), &[1.0, 0.0, 0.0]);
        copy.upsert(rowid(2, 0), &[10.0, 10.0, 0.0]);
        copy.upsert(rowid(3, 0), &[0.0, 0.0, 0.5]);
        let nearest = copy.nearest(&[0.9, 0.1, 0.0], 2);
        assert_eq!(nearest.iter().map(|c| c.fileid).collect::<Vec<_>>(), vec![1, 2]);
        let all = copy.nearest(&[0.0, 0.1, 1.0], 10);
        assert_eq!(all.iter().map(|c| c.fileid).collect::<Vec<_>>(), vec![3, 2, 1]);
    }

    #[test]
    fn upsert_replaces_and_ignores_other_dimensions() {
        let mut copy = Vectors::default();
        copy.upsert(rowid(1, 0), &[1.0, 0.0]);
        copy.upsert(rowid(2, 0), &[0.0, 1.0]);
        copy.upsert(rowid(1, 0), &[0.0, 2.0]);
        copy.upsert(rowid(3, 0), &[1.0, 0.0, 0.0]);
        copy.upsert(rowid(4, 0), &[0.0, 0.0]);
        assert_eq!(copy.len(), 2);
        let nearest = copy.nearest(&[0.0, 1.0], 2);
        // Equal scores: lower rowid first.
        assert_eq!(
            nearest.iter().map(|c| c.rowid).collect::<Vec<_>>(),
            vec![rowid(1, 0), rowid(2, 0)]
        );
        assert!(
            copy.nearest(&[1.0, 0.0, 0.0], 2).is_empty(),
            "a query of another dimension finds nothing"
        );
    }

    #[test]
    fn the_file_id_comes_from_the_rowid() {
        let mut copy = Vectors::default();
        copy.upsert(rowid(77, 5), &[1.0, 2.0, 3.0]);
        let nearest = copy.nearest(&[1.0, 2.0, 3.0], 1);
        assert_eq!(nearest, vec![Candidate { rowid: rowid(77, 5), fileid: 77 }]);
    }

    #[test]
    fn dot_matches_the_plain_sum() {
        let a: Vec<f32> = (0..389).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..389).map(|i| (i as f32 * 0.11).cos()).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-3);
    }

    #[test]
    fn stale_entries_ask_for_a_reload_past_half() {
        let mut copy = Vectors::default();
        for n in 0..10 {
            copy.upsert(rowid(1, n), &[1.0, n as f32]);
        }
        assert!(!copy.mark_stale(3));
        assert!(!copy.mark_stale(2));
        assert!(copy.mark_stale(1));
    }
}
