//! Recurrence expansion and time-range matching, checked against hand-computed instants.

use super::*;

const BOTH: &[ComponentKind] = &[ComponentKind::Event, ComponentKind::Todo];

/// The demo fixture's weekly stand-up: 09:00 Europe/Berlin across the DST
/// change of 2026-03-29, one EXDATE, one moved occurrence.
pub(crate) const WEEKLY_STANDUP: &str = "BEGIN:VCALENDAR\r\n\
VERSION:2.0\r\n\
PRODID:-//Tamebi//Demo//EN\r\n\
BEGIN:VTIMEZONE\r\n\
TZID:Europe/Berlin\r\n\
BEGIN:DAYLIGHT\r\n\
TZOFFSETFROM:+0100\r\n\
TZOFFSETTO:+0200\r\n\
TZNAME:CEST\r\n\
DTSTART:19700329T020000\r\n\
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\n\
END:DAYLIGHT\r\n\
BEGIN:STANDARD\r\n\
TZOFFSETFROM:+0200\r\n\
TZOFFSETTO:+0100\r\n\
TZNAME:CET\r\n\
DTSTART:19701025T030000\r\n\
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\n\
END:STANDARD\r\n\
END:VTIMEZONE\r\n\
BEGIN:VEVENT\r\n\
UID:weekly-standup@tamebi.demo\r\n\
DTSTAMP:20260301T000000Z\r\n\
DTSTART;TZID=Europe/Berlin:20260309T090000\r\n\
DTEND;TZID=Europe/Berlin:20260309T091500\r\n\
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=8\r\n\
EXDATE;TZID=Europe/Berlin:20260323T090000\r\n\
SUMMARY:Stand-up Apollo\r\n\
SEQUENCE:0\r\n\
END:VEVENT\r\n\
BEGIN:VEVENT\r\n\
UID:weekly-standup@tamebi.demo\r\n\
DTSTAMP:20260301T000000Z\r\n\
RECURRENCE-ID;TZID=Europe/Berlin:20260406T090000\r\n\
DTSTART;TZID=Europe/Berlin:20260406T100000\r\n\
DTEND;TZID=Europe/Berlin:20260406T101500\r\n\
SUMMARY:Stand-up Apollo (moved)\r\n\
SEQUENCE:1\r\n\
END:VEVENT\r\n\
END:VCALENDAR\r\n";

fn utc(text: &str) -> i64 {
    parse_utc(text).expect("test time parses")
}

fn event(extra: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:u1\r\nDTSTAMP:20260101T000000Z\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

fn range(start: &str, end: &str) -> TimeRange {
    TimeRange { start: Some(utc(start)), end: Some(utc(end)) }
}

fn first_child_in_range(data: &CalendarData, range: TimeRange) -> bool {
    let (id, _) = children(&data.ical, 0)
        .find(|(_, child)| ComponentKind::of(&child.component_type).is_some())
        .expect("a component");
    component_in_time_range(&data.ical, id, range, &|| instances(&data.ical)).expect("evaluates")
}

#[test]
fn the_weekly_standup_stays_at_nine_berlin_time_across_dst() {
    let data = parse_calendar_data(WEEKLY_STANDUP, BOTH, 0).expect("valid");
    assert!(!data.repaired);
    assert_eq!(data.uid, "weekly-standup@tamebi.demo");
    let starts: Vec<String> =
        instances(&data.ical).iter().map(|instance| format_utc(instance.start)).collect();
    assert_eq!(
        starts,
        vec![
            "20260309T080000Z",
            "20260316T080000Z",
            // 2026-03-23 is an EXDATE.
            "20260330T070000Z",
            // 2026-04-06 moved to 10:00 Berlin.
            "20260406T080000Z",
            "20260413T070000Z",
            "20260420T070000Z",
            "20260427T070000Z",
        ]
    );
    assert_eq!(data.first_occurrence, Some(utc("20260309T080000Z")));
    assert_eq!(data.last_occurrence, Some(utc("20260427T071500Z")));
}

#[test]
fn expansion_writes_utc_instances_with_recurrence_ids() {
    let data = parse_calendar_data(WEEKLY_STANDUP, BOTH, 0).expect("valid");
    let expanded = expand(&data.ical, utc("20260301T000000Z"), utc("20260501T000000Z"));
    assert!(!expanded.contains("VTIMEZONE"), "{expanded}");
    assert!(!expanded.contains("RRULE"), "{expanded}");
    assert!(!expanded.contains("TZID"), "{expanded}");
    assert_eq!(expanded.matches("BEGIN:VEVENT").count(), 7, "{expanded}");
    assert!(expanded.contains("DTSTART:20260309T080000Z\r\nDTEND:20260309T081500Z"), "{expanded}");
    assert!(expanded.contains("DTSTART:20260330T070000Z\r\nDTEND:20260330T071500Z"), "{expanded}");
    assert!(expanded.contains("RECURRENCE-ID:20260330T070000Z"), "{expanded}");
    assert!(!expanded.contains("20260323"), "the EXDATE is gone: {expanded}");
    assert!(expanded.contains("RECURRENCE-ID:20260406T070000Z"), "{expanded}");
    assert!(expanded.contains("DTSTART:20260406T080000Z"), "{expanded}");
    assert!(expanded.contains("SUMMARY:Stand-up Apollo (moved)"), "{expanded}");
    let only_april = expand(&data.ical, utc("20260401T000000Z"), utc("20260410T000000Z"));
    assert_eq!(only_april.matches("BEGIN:VEVENT").count(), 1, "{only_april}");
}

#[test]
fn a_recurring_series_matches_a_range_holding_one_of_its_instances() {
    let data = parse_calendar_data(WEEKLY_STANDUP, BOTH, 0).expect("valid");
    assert!(first_child_in_range(&data, range("20260420T000000Z", "20260421T000000Z")));
    assert!(!first_child_in_range(&data, range("20260323T000000Z", "20260324T000000Z")), "EXDATE");
    assert!(!first_child_in_range(&data, range("20260601T000000Z", "20260701T000000Z")));
}

#[test]
fn event_time_ranges_follow_sabre_vobject() {
    let timed = parse_calendar_data(
        &event("DTSTART:20260105T100000Z\r\nDTEND:20260105T110000Z\r\n"),
        BOTH,
        0,
    )
    .expect("valid");
    assert!(first_child_in_range(&timed, range("20260105T103000Z", "20260105T120000Z")));
    assert!(
        !first_child_in_range(&timed, range("20260105T110000Z", "20260105T120000Z")),
        "DTEND is exclusive"
    );
    let all_day =
        parse_calendar_data(&event("DTSTART;VALUE=DATE:20260105\r\n"), BOTH, 0).expect("valid");
    assert!(first_child_in_range(&all_day, range("20260105T230000Z", "20260106T010000Z")));
    assert!(!first_child_in_range(&all_day, range("20260106T000000Z", "20260106T010000Z")));
    let instant =
        parse_calendar_data(&event("DTSTART:20260105T100000Z\r\n"), BOTH, 0).expect("valid");
    assert!(first_child_in_range(&instant, range("20260105T090000Z", "20260105T110000Z")));
    assert!(!first_child_in_range(&instant, range("20260105T100001Z", "20260105T110000Z")));
}

#[test]
fn nextcloud_forgets_duration_in_the_last_occurrence() {
    let data =
        parse_calendar_data(&event("DTSTART:20260117T120000Z\r\nDURATION:PT1H\r\n"), BOTH, 0)
            .expect("valid");
    assert_eq!(data.first_occurrence, Some(utc("20260117T120000Z")));
    assert_eq!(data.last_occurrence, data.first_occurrence, "Nextcloud's immutable clone bug");
    // The component itself still spans the hour.
    assert!(first_child_in_range(&data, range("20260117T123000Z", "20260117T140000Z")));
}

#[test]
fn endless_series_end_at_nextclouds_max_date() {
    let data =
        parse_calendar_data(&event("DTSTART:20260101T090000Z\r\nRRULE:FREQ=DAILY\r\n"), BOTH, 0)
            .expect("valid");
    assert_eq!(data.last_occurrence, Some(MAX_DATE));
}

#[test]
fn invalid_bodies_are_refused_in_sabres_categories() {
    assert!(matches!(parse_calendar_data("hello", BOTH, 0), Err(InvalidCalendarData::Parse(_))));
    assert_eq!(
        parse_calendar_data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\nEND:VCARD\r\n", BOTH, 0)
            .unwrap_err(),
        InvalidCalendarData::NotACalendar
    );
    let journal = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VJOURNAL\r\nUID:j\r\nDTSTAMP:20260101T000000Z\r\nEND:VJOURNAL\r\nEND:VCALENDAR\r\n";
    assert_eq!(
        parse_calendar_data(journal, BOTH, 0).unwrap_err(),
        InvalidCalendarData::MissingComponent
    );
    assert!(parse_calendar_data(journal, &[ComponentKind::Journal], 0).is_ok());
    let two_uids = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20260101T000000Z\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:b\r\nDTSTART:20260101T000000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    assert!(
        matches!(parse_calendar_data(two_uids, BOTH, 0), Err(InvalidCalendarData::Validation(message)) if message.contains("same UID"))
    );
    let no_start = event("SUMMARY:x\r\n");
    assert!(
        matches!(parse_calendar_data(&no_start, BOTH, 0), Err(InvalidCalendarData::Validation(message)) if message.contains("DTSTART"))
    );
    let unterminated = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a\r\n";
    assert!(matches!(
        parse_calendar_data(unterminated, BOTH, 0),
        Err(InvalidCalendarData::Parse(_))
    ));
}

#[test]
fn missing_uid_and_dtstamp_are_repaired() {
    let body = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nDTSTART:20260101T000000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    let data = parse_calendar_data(body, BOTH, utc("20260102T030405Z")).expect("repaired");
    assert!(data.repaired);
    assert!(data.text.contains(&format!("UID:{}", data.uid)), "{}", data.text);
    assert!(data.text.contains("DTSTAMP:20260102T030405Z"), "{}", data.text);
}

#[test]
fn todo_time_ranges_follow_sabre_vobject() {
    let todo = |props: &str| {
        let body = format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VTODO\r\nUID:t\r\nDTSTAMP:20260101T000000Z\r\n{props}END:VTODO\r\nEND:VCALENDAR\r\n"
        );
        parse_calendar_data(&body, BOTH, 0).expect("valid")
    };
    let with_duration = todo("DTSTART:20260118T120000Z\r\nDURATION:PT2H\r\n");
    assert!(first_child_in_range(&with_duration, range("20260118T130000Z", "20260118T150000Z")));
    assert!(first_child_in_range(&with_duration, range("20260118T110000Z", "20260118T130000Z")));
    let with_due = todo("DTSTART:20260109T120000Z\r\nDUE:20260109T130000Z\r\n");
    assert!(first_child_in_range(
        &with_due,
        TimeRange { start: Some(utc("20260109T000000Z")), end: None }
    ));
    assert!(!first_child_in_range(
        &with_due,
        TimeRange { start: None, end: Some(utc("20260101T000000Z")) }
    ));
    let bare = todo("");
    assert!(first_child_in_range(&bare, range("20000101T000000Z", "20000102T000000Z")));
}

#[test]
fn alarms_fire_relative_to_their_event() {
    let body = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260110T120000Z\r\nDTEND:20260110T130000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    let data = parse_calendar_data(body, BOTH, 0).expect("valid");
    let alarm_id = data
        .ical
        .components
        .iter()
        .position(|component| component.component_type == ICalendarComponentType::VAlarm)
        .expect("alarm") as u32;
    let check = |range| {
        component_in_time_range(&data.ical, alarm_id, range, &|| instances(&data.ical)).expect("ok")
    };
    assert!(check(range("20260110T114000Z", "20260110T115000Z")));
    assert!(!check(range("20260110T115000Z", "20260110T120000Z")));
}

#[test]
fn text_values_come_out_like_vobjects_get_value() {
    let data = parse_calendar_data(
        &event("DTSTART:20260101T000000Z\r\nCATEGORIES:hands,feet\r\nSUMMARY:a\\, b\r\n"),
        BOTH,
        0,
    )
    .expect("valid");
    let (_, component) = children(&data.ical, 0).next().expect("event");
    let categories = component.property(&ICalendarProperty::Categories).expect("categories");
    assert_eq!(entry_text(categories), "hands,feet");
    let summary = component.property(&ICalendarProperty::Summary).expect("summary");
    assert_eq!(entry_text(summary), "a, b");
    let start = component.property(&ICalendarProperty::Dtstart).expect("start");
    assert_eq!(entry_text(start), "20260101T000000Z");
}

#[test]
fn absurdly_nested_components_are_refused() {
    let mut body = String::from(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20260101T000000Z\r\n",
    );
    for _ in 0..20 {
        body.push_str("BEGIN:X-NEST\r\n");
    }
    for _ in 0..20 {
        body.push_str("END:X-NEST\r\n");
    }
    body.push_str("END:VEVENT\r\nEND:VCALENDAR\r\n");
    assert!(
        matches!(parse_calendar_data(&body, BOTH, 0), Err(InvalidCalendarData::Parse(message)) if message.contains("nested"))
    );
}
