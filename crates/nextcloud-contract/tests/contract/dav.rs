//! DAV reads the tests share: one node's properties by a depth-0
//! PROPFIND, whether a user has a node at all, the error a PROPFIND gets.

use nextcloud_contract::{Account, DavResponse, Target, sabre_error};
use xml_tree::OC;

/// The first response of a depth-0 PROPFIND of `path` in `account`'s files
/// asking for `body`; the PROPFIND must be a 207.
pub(super) async fn props_of(
    target: &Target,
    account: &Account,
    path: &str,
    body: &str,
) -> DavResponse {
    let (status, multistatus) =
        target.propfind(account, &target.files_path(account, path), "0", body).await;
    assert_eq!(status, 207, "PROPFIND {path} as {}", account.uid);
    multistatus.unwrap().responses.remove(0)
}

/// Whether `account` can list the folder or read the file at `path`.
pub(super) async fn sees(target: &Target, account: &Account, path: &str) -> bool {
    let (status, _) = target.propfind(account, &target.files_path(account, path), "0", "").await;
    status == 207
}

/// `oc:share-types` of `path` as `account` sees it, sorted; the property
/// must be there (empty where nobody shares the node).
pub(super) async fn share_types(target: &Target, account: &Account, path: &str) -> Vec<String> {
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:share-types/></d:prop></d:propfind>"#;
    let response = props_of(target, account, path, body).await;
    let property = response
        .prop(OC, "share-types")
        .unwrap_or_else(|| panic!("a 200 propstat with oc:share-types: {response:?}"));
    let mut types: Vec<String> =
        property.children().map(|child| child.text().trim().to_string()).collect();
    types.sort();
    types
}

/// A depth-0 PROPFIND of the DAV `path` as `account` asking for `body`:
/// the status, sabre's exception and its message.
pub(super) async fn propfind_error(
    target: &Target,
    account: &Account,
    path: &str,
    body: &str,
) -> (u16, String, String) {
    sabre_error(target.send_xml(account, "PROPFIND", path, Some("0"), body).await).await
}
