//! The fake Nextcloud's contract suite, one module per area.
//!
//! Every test takes a [`nextcloud_contract::Target`]: the fake started
//! in-process with the demo fixture by default, any running Nextcloud with
//! `TAMEBI_CONTRACT_URL` (docs/fake-vs-real.md). Tests create what they need
//! under unique names and remove it afterwards, so they do not depend on a
//! real server's existing data.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod contract {
    mod bulk_upload;
    mod caldav;
    mod caldav_delegation;
    mod carddav;
    mod chunked_upload;
    mod dav;
    mod deck;
    mod headers;
    mod mail_shares;
    mod ocs;
    mod oidc;
    mod provisioning;
    mod public_links;
    mod quota;
    mod share_accept;
    mod share_settings;
    mod shares;
    mod sharing;
    mod sharing_accounts;
    mod sharing_listings;
    mod throwaway;
    mod tools;
    mod trashbin;
    mod versions;
    mod view_only;
    mod webdav;
    mod webhooks;
}
