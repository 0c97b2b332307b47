//! Calendar delegation, as sabre's calendar-proxy principals carry it and
//! Nextcloud's dav app honours it (`dav_features/caldav-delegation.feature`):
//! a user sets the `{DAV:}group-member-set` of their own
//! `principals/users/{uid}/calendar-proxy-read` or `…-write` principal, and
//! the users named there may then read (or read and write) every calendar
//! in that user's home at `/remote.php/dav/calendars/{uid}/`.
//!
//! Only the owner sets their proxies; anyone else's PROPPATCH of them is a
//! 404, as if the principal were not there for them.

use std::collections::{BTreeMap, BTreeSet};

/// Which of a user's two proxy principals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Proxy {
    Read,
    Write,
}

impl Proxy {
    pub fn from_segment(segment: &str) -> Option<Proxy> {
        match segment {
            "calendar-proxy-read" => Some(Proxy::Read),
            "calendar-proxy-write" => Some(Proxy::Write),
            _ => None,
        }
    }

    pub fn segment(self) -> &'static str {
        match self {
            Proxy::Read => "calendar-proxy-read",
            Proxy::Write => "calendar-proxy-write",
        }
    }
}

/// Every user's proxy principals and who is in them.
#[derive(Debug, Clone, Default)]
pub struct Delegations {
    members: BTreeMap<(String, Proxy), BTreeSet<String>>,
}

impl Delegations {
    /// Who is in `owner`'s `proxy`.
    pub fn members(&self, owner: &str, proxy: Proxy) -> impl Iterator<Item = &str> + '_ {
        self.members
            .get(&(owner.to_string(), proxy))
            .into_iter()
            .flat_map(|members| members.iter().map(String::as_str))
    }

    /// `owner`'s `proxy` holds exactly `members` now.
    pub fn set(&mut self, owner: &str, proxy: Proxy, members: BTreeSet<String>) {
        let key = (owner.to_string(), proxy);
        if members.is_empty() {
            self.members.remove(&key);
        } else {
            self.members.insert(key, members);
        }
    }

    /// The proxies `delegate` is in: (owner, proxy).
    pub fn held_by<'d>(&'d self, delegate: &'d str) -> impl Iterator<Item = (&'d str, Proxy)> + 'd {
        self.members
            .iter()
            .filter(move |(_, members)| members.contains(delegate))
            .map(|((owner, proxy), _)| (owner.as_str(), *proxy))
    }

    /// What `delegate` may do in `owner`'s calendar home: write wins.
    pub fn access(&self, owner: &str, delegate: &str) -> Option<Proxy> {
        let holds = |proxy| self.members(owner, proxy).any(|member| member == delegate);
        if holds(Proxy::Write) {
            Some(Proxy::Write)
        } else if holds(Proxy::Read) {
            Some(Proxy::Read)
        } else {
            None
        }
    }

    /// An account is gone: its proxies, and its place in anyone's.
    pub fn remove_user(&mut self, uid: &str) {
        self.members.retain(|(owner, _), members| {
            members.remove(uid);
            owner != uid && !members.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_access_wins_and_removal_clears_both_sides() {
        let mut delegations = Delegations::default();
        delegations.set(
            "admin",
            Proxy::Read,
            BTreeSet::from(["bob".to_string(), "eve".to_string()]),
        );
        delegations.set("admin", Proxy::Write, BTreeSet::from(["bob".to_string()]));
        assert_eq!(delegations.access("admin", "bob"), Some(Proxy::Write));
        assert_eq!(delegations.access("admin", "eve"), Some(Proxy::Read));
        assert_eq!(delegations.access("bob", "admin"), None);
        assert_eq!(delegations.held_by("bob").count(), 2);
        delegations.remove_user("bob");
        assert_eq!(delegations.access("admin", "bob"), None);
        delegations.remove_user("admin");
        assert_eq!(delegations.access("admin", "eve"), None);
    }
}
