//! CardDAV: the user's address books (found with a PROPFIND on their
//! address book home, so shared books come along), addressbook-query bodies,
//! and vCards read into the contacts the tools report.
//!
//! Matching is Nextcloud's, not ours: the query goes to sabre/dav as
//! `text-match` with the `i;unicode-casemap` collation, which folds case but
//! not accents ("chloé" finds "Chloé", "chloe" does not). We rejected
//! fetching every card and matching here: it would read whole address books
//! per call and quietly disagree with what Nextcloud's own clients find.

use super::dav::DavResponse;
use super::{Nextcloud, encode, status_failure, unreachable_failure};
use crate::bearer::UpstreamCredential;
use calcard::vcard::{VCard, VCardEntry, VCardParameterName, VCardProperty};
use calcard::{Entry, Parser};
use http::StatusCode;
use serde::Serialize;
use wire::{FailureKind, ToolFailure};
use xml_tree::{CARDDAV, DAV};

/// vCard properties a query is matched against (any of them).
pub const SEARCHED_PROPERTIES: &[&str] = &["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "NOTE"];
/// How much of a contact's note is shown.
pub const NOTE_LENGTH_MAX: usize = 300;
/// Type words that say nothing to a reader (every email is INTERNET).
const NOISE_TYPES: &[&str] = &["internet", "pref", "x400"];

/// One address book of the user's home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressBook {
    /// The last segment of its URL, e.g. `contacts`.
    pub uri: String,
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contact {
    /// The vCard's UID.
    pub uid: String,
    /// The address book's uri.
    pub address_book: String,
    pub name: String,
    pub emails: Vec<Email>,
    pub phones: Vec<Phone>,
    pub organisation: Option<String>,
    /// At most [`NOTE_LENGTH_MAX`] characters.
    pub note: Option<String>,
    /// The card's path on Nextcloud's DAV server.
    pub href: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Email {
    pub address: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phone {
    pub number: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// `/remote.php/dav/addressbooks/users/{uid}/`
pub fn home_url(nextcloud: &Nextcloud) -> String {
    nextcloud.url(&format!("/remote.php/dav/addressbooks/users/{}/", encode(&nextcloud.uid)))
}

pub fn address_book_url(nextcloud: &Nextcloud, uri: &str) -> String {
    format!("{}{}/", home_url(nextcloud), encode(uri))
}

pub fn home_propfind_body() -> Vec<u8> {
    br#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:resourcetype/><d:displayname/></d:prop></d:propfind>"#.to_vec()
}

/// The user's address books, their own and those shared with them.
pub async fn list_address_books(nextcloud: &Nextcloud) -> Result<Vec<AddressBook>, ToolFailure> {
    let answer = nextcloud
        .send(
            http::Method::from_bytes(b"PROPFIND").expect("valid method"),
            &home_url(nextcloud),
            &[("depth", "1"), ("content-type", "application/xml; charset=utf-8")],
            Some(home_propfind_body()),
        )
        .await?;
    if answer.status.as_u16() != 207 {
        return Err(failure(answer.status, &nextcloud.credential));
    }
    let responses =
        super::dav::parse_multistatus(&answer.body).map_err(|_| unreachable_failure())?;
    Ok(address_books(&responses))
}

/// The contacts of one address book matching `query`, at most `nresults`.
pub async fn search(
    nextcloud: &Nextcloud,
    book: &AddressBook,
    query: &str,
    nresults: usize,
) -> Result<Vec<Contact>, ToolFailure> {
    let answer = nextcloud
        .send(
            http::Method::from_bytes(b"REPORT").expect("valid method"),
            &address_book_url(nextcloud, &book.uri),
            &[("depth", "1"), ("content-type", "application/xml; charset=utf-8")],
            Some(query_body(query, nresults)),
        )
        .await?;
    if answer.status.as_u16() != 207 {
        return Err(failure(answer.status, &nextcloud.credential));
    }
    let responses =
        super::dav::parse_multistatus(&answer.body).map_err(|_| unreachable_failure())?;
    Ok(responses.iter().filter_map(|response| contact(response, &book.uri)).collect())
}

/// The address books among a home's PROPFIND responses.
pub fn address_books(responses: &[DavResponse]) -> Vec<AddressBook> {
    responses
        .iter()
        .filter(|response| {
            response
                .property(DAV, "resourcetype")
                .is_some_and(|kind| kind.child(CARDDAV, "addressbook").is_some())
        })
        .filter_map(|response| {
            let uri = response.href.trim_end_matches('/').rsplit('/').next()?.to_string();
            let display_name = response.text(DAV, "displayname").filter(|name| !name.is_empty());
            (!uri.is_empty()).then_some(AddressBook { uri, display_name })
        })
        .collect()
}

/// An addressbook-query for cards where any searched property contains
/// `query` (all cards when it is empty), at most `nresults` of them.
pub fn query_body(query: &str, nresults: usize) -> Vec<u8> {
    let query = query.trim();
    let filters: String = if query.is_empty() {
        String::new()
    } else {
        let literal = xml_tree::escape(query);
        SEARCHED_PROPERTIES
            .iter()
            .map(|name| {
                format!(
                    r#"<c:prop-filter name="{name}"><c:text-match collation="i;unicode-casemap" match-type="contains">{literal}</c:text-match></c:prop-filter>"#
                )
            })
            .collect()
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><c:address-data/></d:prop><c:filter test="anyof">{filters}</c:filter><c:limit><c:nresults>{nresults}</c:nresults></c:limit></c:addressbook-query>"#
    )
    .into_bytes()
}

/// Turns a CardDAV refusal into an instruction.
pub fn failure(status: StatusCode, credential: &UpstreamCredential) -> ToolFailure {
    match status {
        StatusCode::UNAUTHORIZED => super::unauthorized_failure(
            credential,
            "Nextcloud's contacts service does not accept the assistant's token sign-in on this server, so the address books can't be reached with the current sign-in. Do not retry. Tell the user; an administrator can fix it by switching Tamebi's Nextcloud connection to app-password mode.",
            "the address books",
        ),
        StatusCode::FORBIDDEN => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud does not let the user read their address books. Tell the user; do not retry.",
        ),
        StatusCode::NOT_FOUND => ToolFailure::new(
            FailureKind::NotFound,
            "The user has no address books on Nextcloud (the Contacts service may be disabled for them). Tell the user; do not retry.",
        ),
        status if status.is_server_error() => unreachable_failure(),
        status => status_failure(status, super::Subject::Contacts),
    }
}

/// A contact from one addressbook-query response; `None` when it carries
/// no readable vCard.
pub fn contact(response: &DavResponse, address_book: &str) -> Option<Contact> {
    let text = response.property(CARDDAV, "address-data")?.text();
    let vcard = match Parser::new(&text).entry() {
        Entry::VCard(vcard) => vcard,
        _ => return None,
    };
    let name = name_of(&vcard);
    let emails = vcard
        .properties(&VCardProperty::Email)
        .filter_map(|entry| {
            let address = value_text(entry).trim().to_string();
            (!address.is_empty()).then(|| Email { address, kind: types_of(entry) })
        })
        .collect();
    let phones = vcard
        .properties(&VCardProperty::Tel)
        .filter_map(|entry| {
            let number = value_text(entry);
            let number = number.trim().trim_start_matches("tel:").to_string();
            (!number.is_empty()).then(|| Phone { number, kind: types_of(entry) })
        })
        .collect();
    let organisation = vcard
        .property(&VCardProperty::Org)
        .map(|entry| {
            entry
                .values
                .iter()
                .filter_map(|value| value.as_text())
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|organisation| !organisation.is_empty());
    let note = vcard
        .property(&VCardProperty::Note)
        .map(|entry| value_text(entry).trim().to_string())
        .filter(|note| !note.is_empty())
        .map(|note| super::deck::truncate_characters(&note, NOTE_LENGTH_MAX).0);
    Some(Contact {
        uid: vcard.uid().unwrap_or_default().to_string(),
        address_book: address_book.to_string(),
        name,
        emails,
        phones,
        organisation,
        note,
        href: response.href.clone(),
    })
}

/// FN, else "Given Family" from N, else the first email.
fn name_of(vcard: &VCard) -> String {
    if let Some(name) = vcard.property(&VCardProperty::Fn).map(value_text)
        && !name.trim().is_empty()
    {
        return name.trim().to_string();
    }
    if let Some(n) = vcard.property(&VCardProperty::N) {
        let parts: Vec<&str> = n.values.iter().map(|value| value.as_text().unwrap_or("")).collect();
        let family = parts.first().copied().unwrap_or("");
        let given = parts.get(1).copied().unwrap_or("");
        let name = format!("{given} {family}").trim().to_string();
        if !name.is_empty() {
            return name;
        }
    }
    vcard
        .property(&VCardProperty::Email)
        .map(value_text)
        .filter(|email| !email.trim().is_empty())
        .unwrap_or_else(|| "(no name)".to_string())
}

fn value_text(entry: &VCardEntry) -> String {
    entry.values.iter().filter_map(|value| value.as_text()).collect::<Vec<_>>().join(",")
}

/// The TYPE words of a property, lower case, noise left out.
fn types_of(entry: &VCardEntry) -> Option<String> {
    let types: Vec<String> = entry
        .params
        .iter()
        .filter(|param| param.name == VCardParameterName::Type)
        .filter_map(|param| param.value.as_text())
        .flat_map(|text| text.split(','))
        .map(|word| word.trim().to_lowercase())
        .filter(|word| !word.is_empty() && !NOISE_TYPES.contains(&word.as_str()))
        .collect();
    (!types.is_empty()).then(|| types.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xml_tree::Element;

    /// The contact an addressbook-query response carrying `vcard` in the
    /// "contacts" address book gives.
    fn contact_of(vcard: &str) -> Contact {
        contact(&response_with(vcard), "contacts").unwrap()
    }

    fn response_with(vcard: &str) -> DavResponse {
        let body = format!(
            r#"<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:response><d:href>/remote.php/dav/addressbooks/users/alice/contacts/x.vcf</d:href><d:propstat><d:prop><c:address-data>{}</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"#,
            xml_tree::escape(vcard)
        );
        super::super::dav::parse_multistatus(body.as_bytes()).unwrap().remove(0)
    }

    #[test]
    fn a_vcard_becomes_a_contact() {
        let contact = contact_of(
            "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:chloe@tamebi.demo\r\nFN:Chloé Dubois\r\nORG:Finance;Contrôle\r\nEMAIL;TYPE=INTERNET,WORK:chloe.dubois@example.com\r\nEMAIL:c@example.org\r\nTEL;TYPE=CELL:+33 6 12 34 56 78\r\nNOTE:Valide le budget.\r\nEND:VCARD\r\n",
        );
        assert_eq!(contact.name, "Chloé Dubois");
        assert_eq!(contact.uid, "chloe@tamebi.demo");
        assert_eq!(contact.organisation.as_deref(), Some("Finance, Contrôle"));
        assert_eq!(
            contact.emails,
            [
                Email { address: "chloe.dubois@example.com".into(), kind: Some("work".into()) },
                Email { address: "c@example.org".into(), kind: None },
            ]
        );
        assert_eq!(contact.phones[0].kind.as_deref(), Some("cell"));
        assert_eq!(contact.href, "/remote.php/dav/addressbooks/users/alice/contacts/x.vcf");
    }

    #[test]
    fn a_vcard_4_without_fn_is_named_from_n_and_tel_uris_are_numbers() {
        let contact = contact_of(
            "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:dana\r\nN:Kowalski;Dana;;;\r\nTEL;VALUE=uri;TYPE=work:tel:+48-22-123\r\nEND:VCARD\r\n",
        );
        assert_eq!(contact.name, "Dana Kowalski");
        assert_eq!(contact.phones[0].number, "+48-22-123");
        assert!(contact.note.is_none());
    }

    #[test]
    fn the_query_escapes_the_text_and_an_empty_query_lists_everything() {
        let body = String::from_utf8(query_body("a<b", 5)).unwrap();
        assert!(body.contains("a&lt;b"));
        assert_eq!(body.matches("<c:prop-filter").count(), SEARCHED_PROPERTIES.len());
        assert!(body.contains("<c:nresults>5</c:nresults>"));
        let empty = String::from_utf8(query_body("  ", 5)).unwrap();
        assert!(!empty.contains("prop-filter"));
        let parsed: Element = xml_tree::parse(&query_body("x", 1)).unwrap();
        assert!(parsed.is(CARDDAV, "addressbook-query"));
    }
}
