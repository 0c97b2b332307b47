//! `contacts_search`: find contacts by name, email, phone, organisation or
//! note across all of the user's address books (one PROPFIND on the address
//! book home, then one addressbook-query per book, matched by Nextcloud).

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::carddav::{self, Contact};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub const NAME: &str = "contacts_search";
/// The most contacts one call returns.
pub const LIMIT_MAX: u32 = 50;
const LIMIT_DEFAULT: u32 = 20;
/// The most address books one call queries.
pub const ADDRESS_BOOK_COUNT_MAX: usize = 20;
/// The longest query accepted.
pub const QUERY_LENGTH_MAX: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(
        length(max = QUERY_LENGTH_MAX),
        description = "Text the contact's name, email, phone, organisation or note contains, e.g. \"Dubois\" or \"@example.com\". Empty or omitted: list contacts."
    )]
    query: Option<String>,
    #[serde(default)]
    #[schemars(range(min = 1, max = LIMIT_MAX), extend("default" = LIMIT_DEFAULT))]
    limit: Option<u32>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Search contacts",
            description: "Find people in the user's address books by part of their name, email, phone number, organisation or note. \
Returns each contact's name, emails, phones, organisation and note. Matching ignores case but not accents: \
\"chloé\" finds \"Chloé\", \"chloe\" does not match the name (it may still match an email), so retry with the accented spelling or just the last name if nothing is found. \
An empty query lists contacts.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "contacts": {"type": "array", "items": contact_schema()},
                    "truncated": {"type": "boolean", "description": "More contacts match than were returned."}
                },
                "required": ["contacts", "truncated"]
            }),
            meta: None,
        },
        run,
    );
}

fn contact_schema() -> serde_json::Value {
    let typed = |value: &str| {
        json!({
            "type": "object",
            "properties": {
                value: {"type": "string"},
                "type": {"type": ["string", "null"], "description": "e.g. work, home, cell"}
            },
            "required": [value, "type"]
        })
    };
    json!({
        "type": "object",
        "properties": {
            "uid": {"type": "string", "description": "The vCard UID."},
            "address_book": {"type": "string", "description": "The address book's uri, e.g. contacts."},
            "name": {"type": "string"},
            "emails": {"type": "array", "items": typed("address")},
            "phones": {"type": "array", "items": typed("number")},
            "organisation": {"type": ["string", "null"]},
            "note": {"type": ["string", "null"], "description": "The first 300 characters of the note."},
            "href": {"type": "string"}
        },
        "required": ["uid", "address_book", "name", "emails", "phones", "organisation", "note", "href"]
    })
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let limit = mcp_kit::arguments::count("limit", input.limit, LIMIT_DEFAULT, LIMIT_MAX)?;
    let query = mcp_kit::arguments::text(
        "query",
        input.query.as_deref(),
        QUERY_LENGTH_MAX,
        "Search for a name, an email or part of one.",
    )?;
    let nextcloud = &call.nextcloud;
    let books = carddav::list_address_books(nextcloud).await?;
    let mut truncated = books.len() > ADDRESS_BOOK_COUNT_MAX;
    let mut contacts: Vec<Contact> = Vec::new();
    // One more than the limit tells us whether a book holds more matches.
    let nresults = limit as usize + 1;
    for book in books.iter().take(ADDRESS_BOOK_COUNT_MAX) {
        let found = carddav::search(nextcloud, book, query, nresults).await?;
        truncated |= found.len() >= nresults;
        contacts.extend(found);
    }
    contacts.sort_by(|left, right| {
        (left.name.to_lowercase(), &left.address_book, &left.uid).cmp(&(
            right.name.to_lowercase(),
            &right.address_book,
            &right.uid,
        ))
    });
    truncated |= contacts.len() > limit as usize;
    contacts.truncate(limit as usize);
    let text = describe(&contacts, query, truncated, limit);
    Ok(ToolOutput { text, structured: json!({ "contacts": contacts, "truncated": truncated }) })
}

fn describe(contacts: &[Contact], query: &str, truncated: bool, limit: u32) -> String {
    if contacts.is_empty() {
        return if query.is_empty() {
            "The user's address books hold no contacts.".to_string()
        } else {
            format!(
                "No contact matches \"{query}\". Matching ignores case but not accents: retry with the accented spelling (e.g. \"Chloé\"), only the last name, or part of the email address."
            )
        };
    }
    let mut lines: Vec<String> = contacts
        .iter()
        .map(|contact| {
            let mut details = Vec::new();
            for email in &contact.emails {
                details.push(match &email.kind {
                    Some(kind) => format!("{} ({kind})", email.address),
                    None => email.address.clone(),
                });
            }
            for phone in &contact.phones {
                details.push(match &phone.kind {
                    Some(kind) => format!("tel {} ({kind})", phone.number),
                    None => format!("tel {}", phone.number),
                });
            }
            if let Some(organisation) = &contact.organisation {
                details.push(organisation.clone());
            }
            let mut line = format!("- {}", contact.name);
            if !details.is_empty() {
                line.push_str(&format!(": {}", details.join("; ")));
            }
            if let Some(note) = &contact.note {
                line.push_str(&format!("\n  Note: {note}"));
            }
            line
        })
        .collect();
    if truncated {
        lines.push(format!("More than {limit} contacts match; narrow the query or raise limit."));
    }
    lines.join("\n")
}
