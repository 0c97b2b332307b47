//! Accounts and groups made for one test by the administrator through the
//! provisioning API, under unique names, and deleted again when the test
//! is done with them (groups first, then accounts).

use super::provisioning::{create_account, delete_account, send, statuscode};
use nextcloud_contract::{Account, Target};
use serde_json::Value;
use std::cell::RefCell;

const GROUPS: &str = "/ocs/v1.php/cloud/groups";

/// What one test made: [`Throwaway::accounts`] makes the accounts,
/// [`Throwaway::group`] groups of them, [`Throwaway::remove`] deletes what
/// is left of both.
pub(super) struct Throwaway<'t> {
    target: &'t Target,
    uids: RefCell<Vec<String>>,
    gids: RefCell<Vec<String>>,
}

impl<'t> Throwaway<'t> {
    /// `N` new accounts, and what deletes them.
    pub(super) async fn accounts<const N: usize>(target: &'t Target) -> (Self, [Account; N]) {
        let mut made = Vec::with_capacity(N);
        for _ in 0..N {
            made.push(create_account(target, &[]).await);
        }
        let uids = made.iter().map(|account| account.uid.clone()).collect();
        let Ok(accounts) = <[Account; N]>::try_from(made) else {
            unreachable!("{N} accounts were made")
        };
        let throwaway = Throwaway { target, uids: RefCell::new(uids), gids: RefCell::default() };
        (throwaway, accounts)
    }

    /// A new group with `members`, deleted with the accounts.
    pub(super) async fn group(&self, members: &[&Account]) -> String {
        let target = self.target;
        let gid = target.unique("group");
        let (status, answer) =
            send(target, target.admin(), "POST", GROUPS, &[("groupid", gid.clone())]).await;
        assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
        self.gids.borrow_mut().push(gid.clone());
        for member in members {
            let path = format!("/ocs/v1.php/cloud/users/{}/groups", member.uid);
            let (status, answer) =
                send(target, target.admin(), "POST", &path, &[("groupid", gid.clone())]).await;
            assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
        }
        gid
    }

    /// Deletes the group `gid` now: the administrator's answer.
    pub(super) async fn delete_group(&self, gid: &str) -> Value {
        self.gids.borrow_mut().retain(|made| made != gid);
        let path = format!("{GROUPS}/{gid}?format=json");
        self.target.ocs_call(self.target.admin(), "DELETE", &path).await.1
    }

    /// Deletes `account` now.
    pub(super) async fn delete_account(&self, account: &Account) {
        self.uids.borrow_mut().retain(|uid| *uid != account.uid);
        delete_account(self.target, &account.uid).await;
    }

    /// Deletes the groups and accounts not deleted yet.
    pub(super) async fn remove(self) {
        for gid in self.gids.take() {
            self.delete_group(&gid).await;
        }
        for uid in self.uids.take() {
            delete_account(self.target, &uid).await;
        }
    }
}
