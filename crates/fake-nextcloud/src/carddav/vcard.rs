//! vCard semantics for CardDAV on top of calcard: validating a PUT body the
//! way sabre/dav's CardDAV plugin does (with its repairs), the text a
//! property offers to `card:text-match`, and `card:address-data` reduced to
//! the requested properties.

use calcard::vcard::{VCard, VCardEntry, VCardParameter, VCardProperty, VCardValue, VCardVersion};
use calcard::{Entry, Parser};

/// A validated vCard.
#[derive(Debug, Clone)]
pub struct CardData {
    /// What is stored and served: the body as sent, or re-serialised when
    /// validation repaired it.
    pub text: String,
    pub repaired: bool,
    pub vcard: VCard,
    pub uid: String,
}

/// Why a body is not an acceptable vCard, in sabre's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidCardData {
    /// 415 "This resource only supports valid vCard data. Parse error: ..."
    Parse(String),
    /// 415 "This collection can only support vcard objects."
    NotACard,
    /// 415 "Validation error in vCard: ..."
    Validation(String),
}

impl std::fmt::Display for InvalidCardData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InvalidCardData::Parse(message) => write!(f, "parse error: {message}"),
            InvalidCardData::NotACard => write!(f, "not a VCARD"),
            InvalidCardData::Validation(message) => write!(f, "{message}"),
        }
    }
}

/// Parses and validates a vCard body (sabre's PROFILE_CARDDAV | REPAIR).
pub fn parse_card_data(text: &str) -> Result<CardData, InvalidCardData> {
    let mut parser = Parser::new(text);
    let mut vcard = match parser.entry() {
        Entry::VCard(vcard) => vcard,
        Entry::ICalendar(_) => return Err(InvalidCardData::NotACard),
        Entry::InvalidLine(line) => {
            return Err(InvalidCardData::Parse(format!(
                "invalid line {:?}",
                line.chars().take(60).collect::<String>()
            )));
        }
        Entry::UnterminatedComponent(name) => {
            return Err(InvalidCardData::Parse(format!("missing END:{name}")));
        }
        Entry::Eof => return Err(InvalidCardData::Parse("the body holds no vCard".into())),
        _ => return Err(InvalidCardData::Parse("unexpected content".into())),
    };
    if !matches!(parser.entry(), Entry::Eof) {
        return Err(InvalidCardData::Parse("more than one object in the body".into()));
    }
    if !crate::caldav::ical::ends_with_line(text, "END:VCARD") {
        return Err(InvalidCardData::Parse("the body does not end with END:VCARD".into()));
    }
    let versions = vcard.properties(&VCardProperty::Version).count();
    if versions != 1 {
        return Err(InvalidCardData::Validation(
            "VERSION MUST appear exactly once in a VCARD component".into(),
        ));
    }
    match vcard.version() {
        Some(VCardVersion::V3_0 | VCardVersion::V4_0) => {}
        Some(VCardVersion::V2_0 | VCardVersion::V2_1) => {
            return Err(InvalidCardData::Validation(
                "CardDAV servers are not allowed to accept vCard 2.1.".into(),
            ));
        }
        None => {
            return Err(InvalidCardData::Validation(
                "Only vcard version 4.0 (RFC6350), version 3.0 (RFC2426) or version 2.1 (icm-vcard-2.1) are supported."
                    .into(),
            ));
        }
    }
    let mut repaired = false;
    let uid = match vcard.uid() {
        Some(uid) => uid.to_string(),
        None => {
            let uid = uuid::Uuid::new_v4().to_string();
            vcard.entries.push(VCardEntry::new(VCardProperty::Uid).with_value(uid.clone()));
            repaired = true;
            uid
        }
    };
    let names = vcard.properties(&VCardProperty::Fn).count();
    if names == 0 {
        let Some(name) = fallback_name(&vcard) else {
            return Err(InvalidCardData::Validation(
                "The FN property must appear in the VCARD component exactly 1 time".into(),
            ));
        };
        vcard.entries.push(VCardEntry::new(VCardProperty::Fn).with_value(name));
        repaired = true;
    } else if names > 1 {
        return Err(InvalidCardData::Validation(
            "The FN property must appear in the VCARD component exactly 1 time".into(),
        ));
    }
    let text = if repaired { serialize(&vcard) } else { text.to_string() };
    Ok(CardData { text, repaired, vcard, uid })
}

/// sabre/vobject's FN repair: from N ("Given Family"), ORG, NICKNAME or EMAIL.
fn fallback_name(vcard: &VCard) -> Option<String> {
    if let Some(n) = vcard.property(&VCardProperty::N) {
        let parts: Vec<String> = n.values.iter().map(value_text).collect();
        let family = parts.first().cloned().unwrap_or_default();
        return Some(match parts.get(1) {
            Some(given) if !given.is_empty() => format!("{given} {family}"),
            _ => family,
        });
    }
    for property in [VCardProperty::Org, VCardProperty::Nickname, VCardProperty::Email] {
        if let Some(entry) = vcard.property(&property) {
            return Some(entry_text(entry));
        }
    }
    None
}

pub fn serialize(vcard: &VCard) -> String {
    let mut out = String::new();
    let version = vcard.version().unwrap_or(VCardVersion::V3_0);
    let _ = vcard.write_to(&mut out, version);
    out
}

fn value_text(value: &VCardValue) -> String {
    match value {
        VCardValue::Text(text) => text.clone(),
        VCardValue::Component(parts) => parts.join(","),
        other => other.clone().into_text().map(|text| text.into_owned()).unwrap_or_default(),
    }
}

/// Properties whose value is a `;`-separated structure.
fn is_structured(property: &VCardProperty) -> bool {
    matches!(
        property,
        VCardProperty::N
            | VCardProperty::Adr
            | VCardProperty::Org
            | VCardProperty::Gender
            | VCardProperty::Clientpidmap
    )
}

/// A property's value as sabre/vobject's `getValue()` offers it to
/// `card:text-match`: structured values joined with `;`, lists with `,`.
pub fn entry_text(entry: &VCardEntry) -> String {
    let simple = entry
        .values
        .iter()
        .all(|value| matches!(value, VCardValue::Text(_) | VCardValue::Component(_)));
    if !simple {
        let mut written = String::new();
        let _ = entry.write_to(&mut written, true);
        let unfolded = written.replace("\r\n ", "").replace("\r\n", "");
        return unfolded.split_once(':').map(|(_, value)| value.to_string()).unwrap_or_default();
    }
    let separator = if is_structured(&entry.name) { ";" } else { "," };
    entry.values.iter().map(value_text).collect::<Vec<_>>().join(separator)
}

/// The entries of a card whose property name matches (case-insensitive,
/// groups ignored, as VObject's `select` does).
pub fn entries_named<'a>(
    vcard: &'a VCard,
    name: &'a str,
) -> impl Iterator<Item = &'a VCardEntry> + 'a {
    vcard.entries.iter().filter(move |entry| entry.name.as_str().eq_ignore_ascii_case(name))
}

/// The values of a parameter on a property (all parts), as text.
pub fn parameter_values(entry: &VCardEntry, name: &str) -> Option<Vec<String>> {
    crate::caldav::ical::values_named(
        &entry.params,
        name,
        |param| param.name.as_str(),
        parameter_text,
    )
}

fn parameter_text(param: &VCardParameter) -> String {
    param.value.clone().into_text().into_owned()
}

/// `card:address-data` with `card:prop` children: the card reduced to the
/// named properties plus UID, VERSION and FN, as sabre's `convertVCard` does.
pub fn reduced(data: &CardData, names: &[String]) -> String {
    if names.is_empty() {
        return data.text.clone();
    }
    let keep = |entry: &VCardEntry| {
        matches!(entry.name, VCardProperty::Uid | VCardProperty::Version | VCardProperty::Fn)
            || names.iter().any(|name| entry.name.as_str().eq_ignore_ascii_case(name))
    };
    let vcard =
        VCard { entries: data.vcard.entries.iter().filter(|entry| keep(entry)).cloned().collect() };
    serialize(&vcard)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHLOE: &str = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:chloe@tamebi.demo\r\nFN:Chloé Dubois\r\nN:Dubois;Chloé;;;\r\nORG:Finance\r\nEMAIL;TYPE=WORK:chloe.dubois@example.com\r\nTEL;TYPE=CELL:+33 6 12 34 56 78\r\nEND:VCARD\r\n";

    #[test]
    fn a_valid_card_is_kept_as_sent() {
        let data = parse_card_data(CHLOE).expect("valid");
        assert!(!data.repaired);
        assert_eq!(data.text, CHLOE);
        assert_eq!(data.uid, "chloe@tamebi.demo");
        let n = data.vcard.property(&VCardProperty::N).expect("N");
        assert_eq!(entry_text(n), "Dubois;Chloé;;;");
        let email = entries_named(&data.vcard, "email").next().expect("EMAIL");
        assert_eq!(entry_text(email), "chloe.dubois@example.com");
        assert_eq!(
            parameter_values(email, "type").map(|values| values.join(",").to_lowercase()),
            Some("work".into())
        );
    }

    #[test]
    fn missing_uid_and_fn_are_repaired() {
        let data =
            parse_card_data("BEGIN:VCARD\r\nVERSION:4.0\r\nN:Kowalski;Dana;;;\r\nEND:VCARD\r\n")
                .expect("repaired");
        assert!(data.repaired);
        assert!(data.text.contains("FN:Dana Kowalski"), "{}", data.text);
        assert!(data.text.contains(&format!("UID:{}", data.uid)), "{}", data.text);
    }

    #[test]
    fn invalid_cards_are_refused_in_sabres_categories() {
        assert!(matches!(parse_card_data("nonsense"), Err(InvalidCardData::Parse(_))));
        assert_eq!(
            parse_card_data("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n").unwrap_err(),
            InvalidCardData::NotACard
        );
        assert!(matches!(
            parse_card_data("BEGIN:VCARD\r\nUID:x\r\nFN:x\r\nEND:VCARD\r\n"),
            Err(InvalidCardData::Validation(message)) if message.contains("VERSION")
        ));
        assert!(matches!(
            parse_card_data("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nEND:VCARD\r\n"),
            Err(InvalidCardData::Validation(message)) if message.contains("FN")
        ));
    }

    #[test]
    fn address_data_can_be_reduced_to_some_properties() {
        let data = parse_card_data(CHLOE).expect("valid");
        let reduced = reduced(&data, &["EMAIL".to_string()]);
        assert!(reduced.contains("EMAIL"), "{reduced}");
        assert!(reduced.contains("Chloé Dubois"), "{reduced}");
        assert!(!reduced.contains("TEL"), "{reduced}");
        assert!(!reduced.contains("ORG"), "{reduced}");
    }
}
