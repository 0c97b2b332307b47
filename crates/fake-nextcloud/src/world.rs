//! The whole in-memory state of a fake Nextcloud, built from a fixture.
//!
//! One `World` sits behind one mutex; handlers lock it, do their work
//! synchronously and unlock before any `.await`. Each protocol module owns the
//! state type for its own domain (calendars, Deck, ...) and builds it from the
//! fixture; this module holds users and groups and glues the rest together.

use crate::fixture::Fixture;
use crate::storage::{self, Storage, Viewer};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
pub struct User {
    pub uid: String,
    pub display_name: String,
    pub password: String,
    pub app_passwords: Vec<String>,
    pub email: Option<String>,
    pub groups: BTreeSet<String>,
    pub language: String,
    /// The user's own time zone setting (IANA); `None`: never set, and
    /// Nextcloud falls back to the server's default (UTC).
    pub timezone: Option<String>,
    pub quota_bytes: Option<i64>,
    /// `false` once an administrator disabled the account: its
    /// credentials stop working (the provisioning API's `disable`).
    pub enabled: bool,
    /// Account properties the provisioning API sets and answers (phone,
    /// address, website, twitter, ...), by their OCS key.
    pub profile: BTreeMap<String, String>,
}

impl User {
    pub fn viewer(&self) -> Viewer<'_> {
        Viewer { uid: &self.uid, groups: &self.groups }
    }
}

#[derive(Debug)]
pub struct World {
    pub users: BTreeMap<String, User>,
    /// gid → display name.
    pub groups: BTreeMap<String, String>,
    pub storage: Storage,
    /// Unfinished chunked uploads (`/remote.php/dav/uploads/`).
    pub uploads: crate::files::uploads::Uploads,
    pub calendars: crate::caldav::Calendars,
    /// uid → the calendar uri a PROPPATCH of the principal's
    /// `schedule-default-calendar-URL` chose (Nextcloud keeps it as the
    /// user's `defaultCalendar` setting).
    pub schedule_defaults: BTreeMap<String, String>,
    /// Who is in each user's calendar-proxy principals.
    pub calendar_delegations: crate::caldav::delegation::Delegations,
    /// app → key → value: apps' configuration as provisioning_api's
    /// `config/apps` sets it (the share API's settings).
    pub app_config: BTreeMap<String, BTreeMap<String, String>>,
    pub address_books: crate::carddav::AddressBooks,
    pub deck: crate::deck::Deck,
    pub mail: crate::mail::Mail,
    pub oidc: crate::oidc::Oidc,
    pub webhooks: crate::webhooks::Webhooks,
    /// The Tamebi app: settings, tokens, mail previews, re-served pages.
    pub app: crate::app::AppStore,
    pub faults: crate::faults::Faults,
    pub server: crate::fixture::ServerFixture,
    pub user_oidc: crate::fixture::UserOidcFixture,
}

impl World {
    /// Builds the world, reporting every inconsistency of the fixture at once.
    pub fn from_fixture(fixture: &Fixture, now: i64) -> Result<World, Vec<String>> {
        let mut problems = Vec::new();
        let mut groups: BTreeMap<String, String> = fixture
            .groups
            .iter()
            .map(|group| {
                (group.gid.clone(), group.display_name.clone().unwrap_or(group.gid.clone()))
            })
            .collect();
        let mut users = BTreeMap::new();
        for user in &fixture.users {
            if users.contains_key(&user.uid) {
                problems.push(format!("user {:?} is defined twice", user.uid));
            }
            if user.uid.is_empty() || user.uid.contains(['/', '\\', ' ']) {
                problems.push(format!("user id {:?} is not a valid Nextcloud uid", user.uid));
            }
            for gid in &user.groups {
                groups.entry(gid.clone()).or_insert_with(|| gid.clone());
            }
            users.insert(
                user.uid.clone(),
                User {
                    uid: user.uid.clone(),
                    display_name: user.display_name.clone().unwrap_or(user.uid.clone()),
                    password: user.password.clone(),
                    app_passwords: user.app_passwords.clone(),
                    email: user.email.clone(),
                    groups: user.groups.iter().cloned().collect(),
                    language: user.language.clone().unwrap_or("en".to_string()),
                    timezone: user.timezone.clone(),
                    quota_bytes: user.quota_bytes,
                    enabled: true,
                    profile: BTreeMap::new(),
                },
            );
        }

        let mut storage = Storage::new();
        for uid in users.keys() {
            storage.add_user_root(uid, now);
        }
        let known = |uid: &str, what: &str, problems: &mut Vec<String>| {
            let found = users.contains_key(uid);
            if !found {
                problems.push(format!("{what} names unknown user {uid:?}"));
            }
            found
        };
        for folder in &fixture.folders {
            if !known(&folder.owner, "a folder", &mut problems) {
                continue;
            }
            match storage::clean_path(&folder.path) {
                Ok(path) => {
                    let mtime = time_or(&folder.mtime, now, &mut problems);
                    storage.ensure_folder(&folder.owner, &path, mtime);
                }
                Err(_) => problems.push(format!("folder path {:?} is not valid", folder.path)),
            }
        }
        for file in &fixture.files {
            if !known(&file.owner, "a file", &mut problems) {
                continue;
            }
            let Ok(path) = storage::clean_path(&file.path) else {
                problems.push(format!("file path {:?} is not valid", file.path));
                continue;
            };
            let content = match (&file.content, &file.source) {
                (Some(content), None) => content.as_bytes().to_vec(),
                (None, Some(source)) => match fixture.read_source(source) {
                    Ok(bytes) => bytes,
                    Err(message) => {
                        problems.push(message);
                        continue;
                    }
                },
                _ => {
                    problems.push(format!(
                        "file {:?} needs exactly one of content or source",
                        file.path
                    ));
                    continue;
                }
            };
            let mtime = time_or(&file.mtime, now, &mut problems);
            let id = storage.seed_file(&file.owner, &path, content, file.mime.as_deref(), mtime);
            if file.favorite {
                storage.set_favorite(id, true);
            }
        }
        for share in &fixture.shares {
            let Some(owner) = users.get(&share.owner) else {
                problems.push(format!("a share names unknown owner {:?}", share.owner));
                continue;
            };
            let Ok(path) = storage::clean_path(&share.path) else {
                problems.push(format!("share path {:?} is not valid", share.path));
                continue;
            };
            let (share_type, share_with) = match (&share.share_with, &share.share_with_group) {
                (Some(uid), None) => {
                    if !known(uid, "a share", &mut problems) {
                        continue;
                    }
                    (storage::ShareType::User, uid.clone())
                }
                (None, Some(gid)) => {
                    if !groups.contains_key(gid) {
                        problems.push(format!("a share names unknown group {gid:?}"));
                        continue;
                    }
                    (storage::ShareType::Group, gid.clone())
                }
                _ => {
                    problems.push(format!(
                        "share of {:?} needs exactly one of share_with or share_with_group",
                        share.path
                    ));
                    continue;
                }
            };
            let wanted = share
                .target
                .clone()
                .unwrap_or_else(|| storage::parent_and_name(&path).1.to_string());
            let target = match share_type {
                storage::ShareType::User => {
                    let recipient = &users[&share_with];
                    storage.free_target(recipient.viewer(), &wanted)
                }
                storage::ShareType::Group
                | storage::ShareType::Link
                | storage::ShareType::Email => wanted,
            };
            if let Err(error) = storage.create_share(
                owner.viewer(),
                &path,
                share_type,
                &share_with,
                share.permissions,
                Some(&target),
                now,
            ) {
                problems.push(format!("share of {:?} by {:?}: {error}", share.path, share.owner));
            }
        }

        let calendars = crate::caldav::Calendars::from_fixture(fixture, &users, now, &mut problems);
        let address_books =
            crate::carddav::AddressBooks::from_fixture(fixture, &users, now, &mut problems);
        let deck = crate::deck::Deck::from_fixture(fixture, &users, now, &mut problems);
        let mail = crate::mail::Mail::from_fixture(fixture, &users, &mut problems);
        let oidc = crate::oidc::Oidc::from_fixture(fixture, &mut problems);
        let webhooks = crate::webhooks::Webhooks::from_fixture(fixture, &mut problems);

        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(World {
            users,
            groups,
            storage,
            uploads: Default::default(),
            calendars,
            schedule_defaults: BTreeMap::new(),
            calendar_delegations: Default::default(),
            app_config: BTreeMap::new(),
            address_books,
            deck,
            mail,
            oidc,
            webhooks,
            app: crate::app::AppStore::default(),
            faults: fixture.faults.clone(),
            server: fixture.server.clone(),
            user_oidc: fixture.user_oidc.clone(),
        })
    }

    pub fn user(&self, uid: &str) -> Option<&User> {
        self.users.get(uid)
    }

    /// `uid`'s filesystem is set up for a request (their files, or
    /// files_sharing): the shares they receive are mounted from now on.
    pub fn set_up_files(&mut self, uid: &str) {
        if let Some(viewer) = self.users.get(uid).map(User::viewer) {
            self.storage.mount_received(viewer);
        }
    }

    /// Adds an account as the provisioning API creates one: an empty files
    /// home, and the calendar and address book Nextcloud makes at the
    /// first login, so every protocol can serve it at once.
    pub fn add_user(&mut self, user: User, now: i64) {
        let uid = user.uid.clone();
        for gid in &user.groups {
            self.groups.entry(gid.clone()).or_insert_with(|| gid.clone());
        }
        self.storage.add_user_root(&uid, now);
        let one = BTreeMap::from([(uid.clone(), user)]);
        self.calendars.first_login(&one);
        self.address_books.first_login(&one);
        self.users.extend(one);
    }

    /// Deletes an account and what it owns: its files and every share from
    /// or to it, its unfinished uploads, calendars and address books. A new
    /// account of the same uid starts empty.
    pub fn remove_user(&mut self, uid: &str) -> Option<User> {
        let user = self.users.remove(uid)?;
        self.storage.remove_user(uid);
        self.calendars.remove_owner(uid);
        self.address_books.remove_owner(uid);
        self.schedule_defaults.remove(uid);
        self.calendar_delegations.remove_user(uid);
        Some(user)
    }

    /// Deletes a group: its members leave it and its shares end.
    pub fn remove_group(&mut self, gid: &str) {
        self.groups.remove(gid);
        for user in self.users.values_mut() {
            user.groups.remove(gid);
        }
        self.storage.remove_group_shares(gid);
    }

    /// Moves the storage's pending file events into the webhook queue.
    pub fn flush_file_events(&mut self) {
        for event in self.storage.take_events() {
            let display_name = self
                .users
                .get(&event.uid)
                .map(|user| user.display_name.clone())
                .unwrap_or_default();
            self.webhooks.enqueue_file_event(&event, &display_name);
        }
    }
}

/// Parses an optional RFC 3339 fixture time, defaulting to `now`.
pub fn time_or(text: &Option<String>, now: i64, problems: &mut Vec<String>) -> i64 {
    match text {
        None => now,
        Some(text) => crate::clock::parse_rfc3339(text).unwrap_or_else(|| {
            problems.push(format!("time {text:?} is not RFC 3339"));
            now
        }),
    }
}
