//! The signatures already used inside the timestamp window, so that a signed
//! request captured on the way cannot be sent a second time.
//!
//! An entry is needed only while its timestamp is inside the window: after
//! that the timestamp check refuses the request anyway, so the entry is
//! forgotten. The set is bounded. When it is full of entries that are still
//! young it refuses new requests (503) rather than forgetting one of them:
//! forgetting would reopen a replay hole exactly when someone floods us,
//! while refusing costs only availability, and only for at most one window.

use std::collections::BTreeSet;

pub(super) struct ReplaySet {
    window_s: u64,
    entries_max: usize,
    /// Ordered by timestamp so the expired ones are at the front.
    entries: BTreeSet<(u64, [u8; 32])>,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen {
    New,
    Again,
    Full,
}

impl ReplaySet {
    pub(super) fn new(window_s: u64, entries_max: usize) -> ReplaySet {
        ReplaySet { window_s, entries_max, entries: BTreeSet::new() }
    }

    /// Records a signature whose timestamp the caller already found inside
    /// the window around `now_unix_s`.
    pub(super) fn insert(&mut self, timestamp: u64, signature: [u8; 32], now_unix_s: u64) -> Seen {
        assert!(timestamp.abs_diff(now_unix_s) <= self.window_s);
        while let Some(&(oldest, _)) = self.entries.first() {
            if oldest.saturating_add(self.window_s) >= now_unix_s {
                break;
            }
            self.entries.pop_first();
        }
        if self.entries.contains(&(timestamp, signature)) {
            return Seen::Again;
        }
        if self.entries.len() >= self.entries_max {
            return Seen::Full;
        }
        self.entries.insert((timestamp, signature));
        assert!(self.entries.len() <= self.entries_max);
        Seen::New
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_is_refused_while_its_timestamp_is_in_the_window() {
        let mut set = ReplaySet::new(60, 10);
        assert_eq!(set.insert(1000, [1; 32], 1000), Seen::New);
        assert_eq!(set.insert(1000, [1; 32], 1060), Seen::Again);
        assert_eq!(set.insert(1000, [2; 32], 1001), Seen::New);
    }

    #[test]
    fn entries_older_than_the_window_are_forgotten() {
        let mut set = ReplaySet::new(60, 10);
        set.insert(1000, [1; 32], 1000);
        set.insert(1030, [2; 32], 1030);
        set.insert(1090, [3; 32], 1061);
        assert_eq!(set.len(), 2, "the entry stamped 1000 expired at 1061");
    }

    #[test]
    fn a_full_set_refuses_instead_of_forgetting_young_entries() {
        let mut set = ReplaySet::new(60, 2);
        assert_eq!(set.insert(1000, [1; 32], 1000), Seen::New);
        assert_eq!(set.insert(1000, [2; 32], 1000), Seen::New);
        assert_eq!(set.insert(1000, [3; 32], 1000), Seen::Full);
        assert_eq!(set.insert(1000, [1; 32], 1010), Seen::Again, "still remembered");
        // Once the old entries leave the window there is room again.
        assert_eq!(set.insert(1061, [3; 32], 1061), Seen::New);
        assert_eq!(set.len(), 1);
    }
}
