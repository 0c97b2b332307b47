//! Bounded fuzzing of what mcp-nextcloud parses from outside: the chunker
//! on arbitrary text, DAV multistatus answers (PROPFIND, CalDAV and CardDAV
//! with their vCards) mutated from valid samples and at random, and
//! iCalendar objects mutated from a real recurring event. No input may
//! panic or take long. Cases: `PROPTEST_CASES` (default 256 here, as in
//! CI); run long locally with e.g. `PROPTEST_CASES=100000` (see
//! docs/reliability.md, "Fuzzing").

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use mcp_nextcloud::index::chunk::{PASSAGE_LENGTH_MAX, chunk};
use mcp_nextcloud::nextcloud::{caldav, carddav, dav, ical};
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// Generous for a loaded debug build; a spinning parser blows through it.
const CASE_TIME_MAX: Duration = Duration::from_secs(5);

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() }
}

/// A damage to a sample: flip, cut, splice noise, or duplicate a slice.
#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: prop::sample::Index, mask: u8 },
    Truncate { at: prop::sample::Index },
    Insert { at: prop::sample::Index, noise: Vec<u8> },
    Repeat { at: prop::sample::Index, length: usize, times: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), 1..=255u8).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        1 => any::<prop::sample::Index>().prop_map(|at| Mutation::Truncate { at }),
        2 => (any::<prop::sample::Index>(), proptest::collection::vec(any::<u8>(), 1..24))
            .prop_map(|(at, noise)| Mutation::Insert { at, noise }),
        1 => (any::<prop::sample::Index>(), 1..64usize, 1..50usize)
            .prop_map(|(at, length, times)| Mutation::Repeat { at, length, times }),
    ]
}

fn mutate(sample: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = sample.to_vec();
    for mutation in mutations {
        if bytes.is_empty() {
            break;
        }
        match mutation {
            Mutation::Flip { at, mask } => {
                let at = at.index(bytes.len());
                bytes[at] ^= mask;
            }
            Mutation::Truncate { at } => bytes.truncate(at.index(bytes.len())),
            Mutation::Insert { at, noise } => {
                let at = at.index(bytes.len());
                bytes.splice(at..at, noise.iter().copied());
            }
            Mutation::Repeat { at, length, times } => {
                let at = at.index(bytes.len());
                let end = (at + length).min(bytes.len());
                let slice = bytes[at..end].to_vec();
                for _ in 0..*times {
                    bytes.splice(end..end, slice.iter().copied());
                }
            }
        }
    }
    bytes
}

const PROPFIND: &str = r#"<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:response><d:href>/remote.php/dav/files/alice/Documents/</d:href><d:propstat><d:prop>
<d:getlastmodified>Tue, 10 Mar 2026 20:00:00 GMT</d:getlastmodified><d:resourcetype><d:collection/></d:resourcetype>
<oc:fileid>12</oc:fileid><oc:permissions>RGDNVCK</oc:permissions><oc:size>2048</oc:size><d:getetag>"abc"</d:getetag>
</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
<d:response><d:href>/remote.php/dav/files/alice/Documents/notes%20r%C3%A9union.md</d:href><d:propstat><d:prop>
<d:getlastmodified>Tue, 10 Mar 2026 20:00:00 GMT</d:getlastmodified><d:resourcetype/>
<d:getcontentlength>120</d:getcontentlength><d:getcontenttype>text/markdown</d:getcontenttype>
<oc:fileid>13</oc:fileid><oc:permissions>RGDNVW</oc:permissions><d:getetag>"def"</d:getetag>
<nc:has-preview>false</nc:has-preview>
</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
<d:propstat><d:prop><oc:favorite/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>
</d:multistatus>"#;

const CALENDARS: &str = r#"<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:x1="http://apple.com/ns/ical/" xmlns:oc="http://owncloud.org/ns">
<d:response><d:href>/remote.php/dav/calendars/alice/personal/</d:href><d:propstat><d:prop>
<d:displayname>Personnel</d:displayname><d:resourcetype><d:collection/><cal:calendar/></d:resourcetype>
<cal:supported-calendar-component-set><cal:comp name="VEVENT"/><cal:comp name="VTODO"/></cal:supported-calendar-component-set>
<d:current-user-privilege-set><d:privilege><d:read/></d:privilege><d:privilege><d:write/></d:privilege></d:current-user-privilege-set>
<x1:calendar-color>#0082c9</x1:calendar-color><cs:getctag>1</cs:getctag>
<oc:owner-principal>principals/users/bob</oc:owner-principal>
</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>"#;

const VCARD: &str = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:chloe@tamebi.demo\r\nFN:Chloé Dubois\r\nN:Dubois;Chloé;;;\r\nORG:Finance;Contrôle\r\nEMAIL;TYPE=INTERNET,WORK:chloe.dubois@example.com\r\nTEL;TYPE=CELL:+33 6 12 34 56 78\r\nTEL;VALUE=uri;TYPE=work:tel:+48-22-123\r\nNOTE:Valide le\\, budget.\\nDeux lignes\r\n long folded\r\nEND:VCARD\r\n";

fn contacts_body(vcard: &str) -> String {
    let escaped = vcard.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    format!(
        r#"<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:response><d:href>/remote.php/dav/addressbooks/users/alice/contacts/x.vcf</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag><c:address-data>{escaped}</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"#
    )
}

/// A weekly event in a zone with DST, one occurrence cancelled and one
/// moved: the recurrence machinery is what mutations hit.
const EVENT: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Tamebi//Fuzz//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:standup@tamebi.demo\r\nDTSTAMP:20260301T000000Z\r\nDTSTART;TZID=Europe/Berlin:20260316T090000\r\nDTEND;TZID=Europe/Berlin:20260316T091500\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=40\r\nEXDATE;TZID=Europe/Berlin:20260323T090000\r\nSUMMARY:Stand-up\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:standup@tamebi.demo\r\nRECURRENCE-ID;TZID=Europe/Berlin:20260330T090000\r\nDTSTART;TZID=Europe/Berlin:20260330T100000\r\nDTEND;TZID=Europe/Berlin:20260330T101500\r\nSUMMARY:Stand-up (moved)\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:allday\r\nDTSTART;VALUE=DATE:20260401\r\nRRULE:FREQ=DAILY;INTERVAL=1\r\nSUMMARY:Unbounded daily\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

/// Every reader of a multistatus answer, on whatever it parsed to.
fn read_multistatus(body: &[u8]) -> Result<(), TestCaseError> {
    let started = Instant::now();
    if let Ok(responses) = dav::parse_multistatus(body) {
        for response in &responses {
            let _ = dav::file_info(response, "alice");
            let _ = carddav::contact(response, "contacts");
        }
        let _ = caldav::calendars_from(&responses, "alice");
        let _ = carddav::address_books(&responses);
    }
    prop_assert!(started.elapsed() < CASE_TIME_MAX, "took {:?}", started.elapsed());
    Ok(())
}

fn read_calendar(text: &str) -> Result<(), TestCaseError> {
    let started = Instant::now();
    if let Ok(calendar) = ical::parse(text) {
        // A year around the series, as calendar_events asks at most.
        let window = ical::Window { start: 1_767_225_600, end: 1_767_225_600 + 366 * 86_400 };
        let expansion = ical::expand(
            &calendar,
            window,
            calcard::common::timezone::Tz::Tz(chrono_tz::Europe::Paris),
        );
        for occurrence in &expansion.occurrences {
            let _ = format!("{occurrence:?}");
        }
    }
    prop_assert!(started.elapsed() < CASE_TIME_MAX, "took {:?}", started.elapsed());
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any text at all: the chunker's invariants hold (the structured
    /// generator in `index/chunk/tests.rs` covers headings and paragraphs).
    #[test]
    fn the_chunker_keeps_its_invariants_on_any_text(text in "(\\PC|[\\r\\n\\t #\u{feff}\u{a0}\u{2028}]){0,3000}") {
        let started = Instant::now();
        let passages = chunk(&text);
        prop_assert!(started.elapsed() < CASE_TIME_MAX);
        let mut covered_to = 0;
        for passage in &passages {
            let end = passage.offset + passage.length;
            prop_assert!(passage.offset >= covered_to, "in order: {passage:?}");
            prop_assert!(end <= text.len(), "inside: {passage:?}");
            prop_assert!(text.is_char_boundary(passage.offset) && text.is_char_boundary(end));
            prop_assert!(passage.length > 0 && passage.length <= PASSAGE_LENGTH_MAX, "{passage:?}");
            covered_to = end;
        }
    }

    #[test]
    fn mutated_dav_answers_never_panic(
        sample in 0..3usize,
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        let contacts = contacts_body(VCARD);
        let samples = [PROPFIND.as_bytes(), CALENDARS.as_bytes(), contacts.as_bytes()];
        read_multistatus(&mutate(samples[sample], &mutations))?;
    }

    #[test]
    fn random_bytes_as_a_dav_answer_never_panic(body in proptest::collection::vec(any::<u8>(), 0..4096)) {
        read_multistatus(&body)?;
    }

    /// The vCard itself damaged, inside an intact XML answer.
    #[test]
    fn mutated_vcards_never_panic(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let vcard = String::from_utf8_lossy(&mutate(VCARD.as_bytes(), &mutations)).into_owned();
        read_multistatus(contacts_body(&vcard).as_bytes())?;
    }

    #[test]
    fn mutated_calendars_never_panic(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let text = String::from_utf8_lossy(&mutate(EVENT.as_bytes(), &mutations)).into_owned();
        read_calendar(&text)?;
    }

    #[test]
    fn random_text_as_a_calendar_never_panics(text in "(BEGIN:VCALENDAR\r\n)?(\\PC|\r\n){0,1000}") {
        read_calendar(&text)?;
    }
}

/// The samples are valid, so mutations start from answers that reach the
/// deep code (file info, vCards, calendars, recurrence expansion).
#[test]
fn the_samples_parse_whole() {
    let files = dav::parse_multistatus(PROPFIND.as_bytes()).unwrap();
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|response| dav::file_info(response, "alice").is_some()));
    let calendars = dav::parse_multistatus(CALENDARS.as_bytes()).unwrap();
    assert_eq!(caldav::calendars_from(&calendars, "alice").len(), 1);
    let contacts = dav::parse_multistatus(contacts_body(VCARD).as_bytes()).unwrap();
    let contact = carddav::contact(&contacts[0], "contacts").unwrap();
    assert_eq!(contact.name, "Chloé Dubois");
    let calendar = ical::parse(EVENT).unwrap();
    let window = ical::Window { start: 1_767_225_600, end: 1_767_225_600 + 366 * 86_400 };
    let expansion = ical::expand(
        &calendar,
        window,
        calcard::common::timezone::Tz::Tz(chrono_tz::Europe::Paris),
    );
    assert!(expansion.occurrences.len() > 40, "{}", expansion.occurrences.len());
}
