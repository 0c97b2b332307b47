//! Recurrence expansion against hand-checked instants (the demo stand-up
//! across the 2026 DST change, UNTIL east of Greenwich, gaps and folds,
//! all-day and floating events), a property over weekly events at random
//! local times across DST boundaries, and new events read back.

use super::*;
use proptest::prelude::*;

const BERLIN_VTIMEZONE: &str = "BEGIN:VTIMEZONE\r
TZID:Europe/Berlin\r
BEGIN:DAYLIGHT\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0200\r
TZNAME:CEST\r
DTSTART:19700329T020000\r
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
END:DAYLIGHT\r
BEGIN:STANDARD\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0100\r
TZNAME:CET\r
DTSTART:19701025T030000\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
END:STANDARD\r
END:VTIMEZONE\r
";

/// The demo fixture's stand-up: weekly 09:00 Berlin from 2026-03-09, eight
/// times, 03-23 cancelled, 04-06 moved to 10:00.
fn standup() -> String {
    format!(
        "BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Tamebi//Demo//EN\r
{BERLIN_VTIMEZONE}BEGIN:VEVENT\r
UID:weekly-standup@tamebi.demo\r
DTSTAMP:20260301T000000Z\r
DTSTART;TZID=Europe/Berlin:20260309T090000\r
DTEND;TZID=Europe/Berlin:20260309T091500\r
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=8\r
EXDATE;TZID=Europe/Berlin:20260323T090000\r
SUMMARY:Stand-up Apollo\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:weekly-standup@tamebi.demo\r
DTSTAMP:20260301T000000Z\r
RECURRENCE-ID;TZID=Europe/Berlin:20260406T090000\r
DTSTART;TZID=Europe/Berlin:20260406T100000\r
DTEND;TZID=Europe/Berlin:20260406T101500\r
SUMMARY:Stand-up Apollo (décalé)\r
END:VEVENT\r
END:VCALENDAR\r
"
    )
}

fn one_event(properties: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{BERLIN_VTIMEZONE}BEGIN:VEVENT\r\nUID:test@example\r\nDTSTAMP:20260101T000000Z\r\n{}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        properties.trim().replace('\n', "\r\n")
    )
}

fn utc(text: &str) -> i64 {
    DateTime::parse_from_rfc3339(text).unwrap().timestamp()
}

fn window(start: &str, end: &str) -> Window {
    Window { start: utc(start), end: utc(end) }
}

fn zone(name: &str) -> Tz {
    Tz::Tz(name.parse().unwrap())
}

/// [`check`] of [`one_event`] with `properties`, floating times in UTC.
fn check_one(properties: &str, (start, end): (&str, &str), expected: &[&str]) {
    check(&one_event(properties), window(start, end), Tz::UTC, expected);
}

/// Each occurrence as `start..end`, RFC 3339 with offsets.
fn check(ics: &str, range: Window, floating_zone: Tz, expected: &[&str]) {
    let ical = parse(ics).unwrap();
    let expansion = expand(&ical, range, floating_zone);
    let actual: Vec<String> = expansion
        .occurrences
        .iter()
        .map(|occurrence| {
            format!("{}..{}", occurrence.start.to_rfc3339(), occurrence.end.to_rfc3339())
        })
        .collect();
    assert_eq!(actual, expected);
    assert!(!expansion.incomplete);
}

#[test]
fn the_demo_standup_stays_at_nine_berlin_time_across_the_dst_change() {
    check(
        &standup(),
        window("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        Tz::UTC,
        &[
            "2026-03-09T09:00:00+01:00..2026-03-09T09:15:00+01:00",
            "2026-03-16T09:00:00+01:00..2026-03-16T09:15:00+01:00",
            // 03-23 is cancelled by EXDATE.
            "2026-03-30T09:00:00+02:00..2026-03-30T09:15:00+02:00",
            // 04-06 is moved to 10:00 by its override.
            "2026-04-06T10:00:00+02:00..2026-04-06T10:15:00+02:00",
            "2026-04-13T09:00:00+02:00..2026-04-13T09:15:00+02:00",
            "2026-04-20T09:00:00+02:00..2026-04-20T09:15:00+02:00",
            "2026-04-27T09:00:00+02:00..2026-04-27T09:15:00+02:00",
        ],
    );
    let ical = parse(&standup()).unwrap();
    let expansion = expand(&ical, window("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"), Tz::UTC);
    let instants: Vec<i64> =
        expansion.occurrences.iter().map(|occurrence| occurrence.start_instant).collect();
    assert_eq!(
        instants,
        [
            utc("2026-03-09T08:00:00Z"),
            utc("2026-03-16T08:00:00Z"),
            utc("2026-03-30T07:00:00Z"),
            utc("2026-04-06T08:00:00Z"),
            utc("2026-04-13T07:00:00Z"),
            utc("2026-04-20T07:00:00Z"),
            utc("2026-04-27T07:00:00Z"),
        ]
    );
    let moved = &expansion.occurrences[3];
    assert_eq!(
        moved.component, 5,
        "the override (after VCALENDAR, VTIMEZONE and its two rules, the master)"
    );
    assert_eq!(moved.recurrence_id.unwrap().to_rfc3339(), "2026-04-06T09:00:00+02:00");
    assert_eq!(moved.start.time_zone().as_deref(), Some("Europe/Berlin"));
    let first = &expansion.occurrences[0];
    assert_eq!(first.recurrence_id.unwrap().to_rfc3339(), "2026-03-09T09:00:00+01:00");
}

#[test]
fn the_window_cuts_occurrences_on_both_sides() {
    check(
        &standup(),
        window("2026-03-20T00:00:00Z", "2026-04-06T08:00:00Z"),
        Tz::UTC,
        &["2026-03-30T09:00:00+02:00..2026-03-30T09:15:00+02:00"],
    );
    // An occurrence overlapping the start of the window counts.
    check(
        &standup(),
        window("2026-03-09T08:10:00Z", "2026-03-09T12:00:00Z"),
        Tz::UTC,
        &["2026-03-09T09:00:00+01:00..2026-03-09T09:15:00+01:00"],
    );
    check(&standup(), window("2026-03-09T08:15:00Z", "2026-03-16T08:00:00Z"), Tz::UTC, &[]);
}

#[test]
fn a_utc_until_east_of_greenwich_keeps_the_last_occurrence() {
    // calcard alone compares 09:00 local with 07:00Z as if both were UTC
    // and drops 04-27; the rewrite into local time keeps it.
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260413T090000
DURATION:PT30M
RRULE:FREQ=WEEKLY;UNTIL=20260427T070000Z",
        ("2026-04-01T00:00:00Z", "2026-06-01T00:00:00Z"),
        &[
            "2026-04-13T09:00:00+02:00..2026-04-13T09:30:00+02:00",
            "2026-04-20T09:00:00+02:00..2026-04-20T09:30:00+02:00",
            "2026-04-27T09:00:00+02:00..2026-04-27T09:30:00+02:00",
        ],
    );
}

#[test]
fn exdates_in_utc_or_another_zone_cancel_the_local_occurrence() {
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260323T090000
DTEND;TZID=Europe/Berlin:20260323T100000
RRULE:FREQ=WEEKLY;COUNT=3
EXDATE:20260330T070000Z
EXDATE;TZID=America/New_York:20260406T030000",
        ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        &["2026-03-23T09:00:00+01:00..2026-03-23T10:00:00+01:00"],
    );
}

#[test]
fn a_local_time_in_the_spring_gap_moves_by_the_gap_and_a_fold_takes_the_first() {
    // 2026-03-29 02:30 does not exist in Berlin: read with the offset
    // before the gap (+01:00), it is 03:30 CEST.
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260322T023000
DURATION:PT1H
RRULE:FREQ=WEEKLY;COUNT=3",
        ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        &[
            "2026-03-22T02:30:00+01:00..2026-03-22T03:30:00+01:00",
            "2026-03-29T03:30:00+02:00..2026-03-29T04:30:00+02:00",
            "2026-04-05T02:30:00+02:00..2026-04-05T03:30:00+02:00",
        ],
    );
    // 2026-10-25 02:30 happens twice in Berlin: the first (CEST) counts.
    check_one(
        "DTSTART;TZID=Europe/Berlin:20261018T023000
DURATION:PT1H
RRULE:FREQ=WEEKLY;COUNT=2",
        ("2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z"),
        &[
            "2026-10-18T02:30:00+02:00..2026-10-18T03:30:00+02:00",
            "2026-10-25T02:30:00+02:00..2026-10-25T02:30:00+01:00",
        ],
    );
}

#[test]
fn a_nominal_day_in_a_duration_follows_the_wall_clock() {
    // P1D from Saturday 12:00 before the change ends Sunday 12:00 local,
    // 23 hours later; PT24H ends at 13:00.
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260328T120000
DURATION:P1D",
        ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        &["2026-03-28T12:00:00+01:00..2026-03-29T12:00:00+02:00"],
    );
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260328T120000
DURATION:PT24H",
        ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        &["2026-03-28T12:00:00+01:00..2026-03-29T13:00:00+02:00"],
    );
}

#[test]
fn all_day_events_stay_dates_and_yearly_ones_reach_today() {
    check_one(
        "DTSTART;VALUE=DATE:19900315
DTEND;VALUE=DATE:19900316
RRULE:FREQ=YEARLY
SUMMARY:Birthday",
        ("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
        &["2026-03-15..2026-03-16"],
    );
    // A date counts in the caller's zone: 2026-03-15 in Sydney (+11:00) is
    // over at 2026-03-15T13:00Z, so a window starting then misses it.
    check(
        &one_event("DTSTART;VALUE=DATE:20260315"),
        window("2026-03-15T13:00:00Z", "2026-03-20T00:00:00Z"),
        zone("Australia/Sydney"),
        &[],
    );
    check(
        &one_event("DTSTART;VALUE=DATE:20260315"),
        window("2026-03-15T13:00:00Z", "2026-03-20T00:00:00Z"),
        Tz::UTC,
        &["2026-03-15..2026-03-16"],
    );
}

#[test]
fn floating_times_are_read_in_the_callers_zone() {
    check(
        &one_event(
            "DTSTART:20260310T090000
DTEND:20260310T100000",
        ),
        window("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
        zone("America/New_York"),
        &["2026-03-10T09:00:00-04:00..2026-03-10T10:00:00-04:00"],
    );
}

#[test]
fn utc_events_stay_in_utc_and_unknown_zones_fall_back_to_the_callers() {
    check(
        &one_event(
            "DTSTART:20260326T130000Z
DTEND:20260326T140000Z",
        ),
        window("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
        zone("Europe/Paris"),
        &["2026-03-26T13:00:00Z..2026-03-26T14:00:00Z"],
    );
    check(
        &one_event(
            "DTSTART;TZID=Mars/Olympus_Mons:20260326T130000
DTEND;TZID=Mars/Olympus_Mons:20260326T140000",
        ),
        window("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
        zone("Europe/Paris"),
        &["2026-03-26T13:00:00+01:00..2026-03-26T14:00:00+01:00"],
    );
}

#[test]
fn an_endless_daily_series_from_long_ago_reaches_the_window() {
    let ical = parse(&one_event(
        "DTSTART;TZID=Europe/Berlin:20000101T080000
DURATION:PT15M
RRULE:FREQ=DAILY",
    ))
    .unwrap();
    let expansion = expand(&ical, window("2026-03-28T00:00:00Z", "2026-03-31T00:00:00Z"), Tz::UTC);
    let starts: Vec<String> =
        expansion.occurrences.iter().map(|occurrence| occurrence.start.to_rfc3339()).collect();
    assert_eq!(
        starts,
        ["2026-03-28T08:00:00+01:00", "2026-03-29T08:00:00+02:00", "2026-03-30T08:00:00+02:00"]
    );
    assert!(!expansion.incomplete);
}

#[test]
fn an_endless_daily_all_day_series_is_cut_at_the_window_too() {
    let ical = parse(&one_event(
        "DTSTART;VALUE=DATE:19900101
RRULE:FREQ=DAILY",
    ))
    .unwrap();
    let expansion = expand(&ical, window("2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z"), Tz::UTC);
    let starts: Vec<String> =
        expansion.occurrences.iter().map(|occurrence| occurrence.start.to_rfc3339()).collect();
    assert_eq!(starts, ["2026-03-28", "2026-03-29"]);
    assert!(!expansion.incomplete, "13 000 days are well within the limit");
}

#[test]
fn a_series_too_frequent_to_expand_says_so() {
    let ical = parse(&one_event(
        "DTSTART:20200101T000000Z
DURATION:PT1M
RRULE:FREQ=MINUTELY",
    ))
    .unwrap();
    let expansion = expand(&ical, window("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"), Tz::UTC);
    assert!(expansion.incomplete);
    assert!(expansion.occurrences.is_empty());
}

#[test]
fn an_override_in_another_zone_keeps_its_own_zone() {
    let ics = standup().replace(
        "DTSTART;TZID=Europe/Berlin:20260406T100000\r\nDTEND;TZID=Europe/Berlin:20260406T101500",
        "DTSTART;TZID=America/New_York:20260406T040000\r\nDTEND;TZID=America/New_York:20260406T041500",
    );
    let ical = parse(&ics).unwrap();
    let expansion = expand(&ical, window("2026-04-06T00:00:00Z", "2026-04-07T00:00:00Z"), Tz::UTC);
    assert_eq!(expansion.occurrences.len(), 1);
    let moved = &expansion.occurrences[0];
    assert_eq!(moved.start.to_rfc3339(), "2026-04-06T04:00:00-04:00");
    assert_eq!(moved.start.time_zone().as_deref(), Some("America/New_York"));
    assert_eq!(moved.start_instant, utc("2026-04-06T08:00:00Z"));
}

#[test]
fn sequence_numbers_do_not_detach_an_override() {
    // Clients raise SEQUENCE on the override only; it still replaces 04-06.
    let ics = standup().replace(
        "RECURRENCE-ID;TZID=Europe/Berlin:20260406T090000\r\n",
        "RECURRENCE-ID;TZID=Europe/Berlin:20260406T090000\r\nSEQUENCE:3\r\n",
    );
    check(
        &ics,
        window("2026-04-06T00:00:00Z", "2026-04-07T00:00:00Z"),
        Tz::UTC,
        &["2026-04-06T10:00:00+02:00..2026-04-06T10:15:00+02:00"],
    );
}

#[test]
fn tasks_in_the_same_object_are_not_events() {
    let ics = one_event("DTSTART:20260310T090000Z").replace(
        "END:VCALENDAR",
        "BEGIN:VTODO\r\nUID:task@example\r\nDTSTAMP:20260101T000000Z\r\nDUE:20260310T100000Z\r\nEND:VTODO\r\nEND:VCALENDAR",
    );
    check(
        &ics,
        window("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
        Tz::UTC,
        &["2026-03-10T09:00:00Z..2026-03-10T09:00:00Z"],
    );
}

#[test]
fn a_new_event_reads_back_as_written() {
    let berlin = zone("Europe/Berlin");
    let start = local_to_moment(berlin, "2026-04-14T10:00:00".parse().unwrap());
    let event = NewEvent {
        uid: "new@tamebi".into(),
        summary: "Budget; review, part 2".into(),
        location: Some("Salle \\ Écluse".into()),
        description: Some("Line one\nLine two".into()),
        start: EventTime::Moment(start),
        end: EventTime::Moment(start + TimeDelta::minutes(90)),
        created: DateTime::from_timestamp(1_772_323_200, 0).unwrap(),
    };
    let text = new_event(&event);
    assert!(text.contains("DTSTART;TZID=Europe/Berlin:20260414T100000\r\n"), "{text}");
    assert!(text.contains("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"), "{text}");
    assert!(text.contains("BEGIN:DAYLIGHT") && text.contains("BEGIN:STANDARD"), "{text}");
    let ical = parse(&text).unwrap();
    let component = ical
        .components
        .iter()
        .find(|component| component.component_type == ICalendarComponentType::VEvent)
        .unwrap();
    assert_eq!(text_of(component, ICalendarProperty::Summary), "Budget; review, part 2");
    assert_eq!(text_of(component, ICalendarProperty::Location), "Salle \\ Écluse");
    assert_eq!(text_of(component, ICalendarProperty::Description), "Line one\nLine two");
    let expansion = expand(&ical, window("2026-04-14T00:00:00Z", "2026-04-15T00:00:00Z"), Tz::UTC);
    assert_eq!(expansion.occurrences.len(), 1);
    assert_eq!(expansion.occurrences[0].start.to_rfc3339(), "2026-04-14T10:00:00+02:00");
    assert_eq!(expansion.occurrences[0].end.to_rfc3339(), "2026-04-14T11:30:00+02:00");
    assert!(expansion.occurrences[0].recurrence_id.is_none());
}

#[test]
fn new_utc_and_all_day_events_need_no_vtimezone() {
    let created = DateTime::from_timestamp(1_772_323_200, 0).unwrap();
    let start = Tz::UTC.from_utc_datetime(&"2026-04-14T08:00:00".parse().unwrap());
    let timed = new_event(&NewEvent {
        uid: "u@t".into(),
        summary: "UTC".into(),
        location: None,
        description: None,
        start: EventTime::Moment(start),
        end: EventTime::Moment(start + TimeDelta::hours(1)),
        created,
    });
    assert!(timed.contains("DTSTART:20260414T080000Z\r\n"), "{timed}");
    assert!(!timed.contains("VTIMEZONE"));
    let all_day = new_event(&NewEvent {
        uid: "d@t".into(),
        summary: "Off".into(),
        location: None,
        description: None,
        start: EventTime::Date("2026-04-14".parse().unwrap()),
        end: EventTime::Date("2026-04-16".parse().unwrap()),
        created,
    });
    assert!(all_day.contains("DTSTART;VALUE=DATE:20260414\r\n"), "{all_day}");
    assert!(all_day.contains("DTEND;VALUE=DATE:20260416\r\n"), "{all_day}");
}

fn text_of(component: &ICalendarComponent, name: ICalendarProperty) -> String {
    text(component, &name).unwrap()
}

/// Zones with DST in either hemisphere, a half-hour offset, and one whose
/// change happens at midnight, each with the Sundays it changes in 2026.
const ZONES: &[(&str, [&str; 2])] = &[
    ("Europe/Berlin", ["2026-03-29", "2026-10-25"]),
    ("Europe/London", ["2026-03-29", "2026-10-25"]),
    ("America/New_York", ["2026-03-08", "2026-11-01"]),
    ("Australia/Sydney", ["2026-04-05", "2026-10-04"]),
    ("Australia/Adelaide", ["2026-04-05", "2026-10-04"]),
    ("America/Santiago", ["2026-04-05", "2026-09-06"]),
];

proptest! {
    /// A weekly event at any local time, started up to twelve weeks before
    /// a DST change, keeps its wall-clock time every week: exactly when
    /// that time exists that day; else (a spring gap) later by the gap.
    /// Half the cases land on the change's own weekday, and early hours
    /// (where the changes are) are drawn more often.
    #[test]
    fn weekly_events_keep_their_wall_clock_time_across_dst(
        zone_index in 0..ZONES.len(),
        change_index in 0..2usize,
        weeks_before in 0i64..12,
        weekday_shift in prop_oneof![Just(0i64), 0i64..7],
        hour in prop_oneof![0u32..4, 0u32..24],
        minute in prop::sample::select(vec![0u32, 15, 30, 45]),
        weeks in 2u32..30,
    ) {
        let (zone_name, changes) = ZONES[zone_index];
        let chrono_zone: chrono_tz::Tz = zone_name.parse().unwrap();
        let event_zone = Tz::Tz(chrono_zone);
        let first_day = changes[change_index].parse::<NaiveDate>().unwrap()
            - TimeDelta::weeks(weeks_before)
            + TimeDelta::days(weekday_shift);
        let wall_clock = chrono::NaiveTime::from_hms_opt(hour, minute, 0).unwrap();
        let ics = one_event(&format!(
            "DTSTART;TZID={zone_name}:{}\nDURATION:PT45M\nRRULE:FREQ=WEEKLY;COUNT={weeks}",
            first_day.and_time(wall_clock).format("%Y%m%dT%H%M%S"),
        ));
        let ical = parse(&ics).unwrap();
        let range = Window { start: utc("2025-01-01T00:00:00Z"), end: utc("2028-01-01T00:00:00Z") };
        let expansion = expand(&ical, range, Tz::UTC);
        prop_assert_eq!(expansion.occurrences.len(), weeks as usize);
        let mut previous = i64::MIN;
        for (week, occurrence) in expansion.occurrences.iter().enumerate() {
            let EventTime::Moment(start) = occurrence.start else {
                panic!("a timed event became a date");
            };
            prop_assert_eq!(start.timezone(), event_zone);
            let local = start.naive_local();
            let day = first_day + TimeDelta::weeks(week as i64);
            let wanted = day.and_time(wall_clock);
            match chrono_zone.from_local_datetime(&wanted) {
                LocalResult::Single(expected) => {
                    prop_assert_eq!(local, wanted);
                    prop_assert_eq!(start.timestamp(), expected.timestamp());
                }
                LocalResult::Ambiguous(earliest, _) => {
                    prop_assert_eq!(local, wanted);
                    prop_assert_eq!(start.timestamp(), earliest.timestamp());
                }
                LocalResult::None => {
                    // Read with the offset before the gap: as much later as
                    // the clocks jumped.
                    let before = chrono_zone
                        .offset_from_utc_datetime(&(wanted - TimeDelta::days(1)))
                        .fix()
                        .local_minus_utc();
                    let after = start.offset().fix().local_minus_utc();
                    prop_assert!(after > before);
                    prop_assert_eq!(local, wanted + TimeDelta::seconds(i64::from(after - before)));
                }
            }
            prop_assert_eq!(occurrence.end_instant - occurrence.start_instant, 45 * 60);
            prop_assert!(occurrence.start_instant > previous);
            previous = occurrence.start_instant;
        }
    }
}

/// Why the rewrite into local time exists: calcard 0.3.14 on its own
/// drops the last occurrence of a UTC UNTIL east of Greenwich and reads a
/// local time in a DST gap as UTC (and then cannot match its EXDATE). If
/// an upgrade fixes this, this test fails and the module comment is due
/// for a look.
#[test]
fn calcard_alone_gets_zones_wrong() {
    let starts = |properties: &str| -> Vec<String> {
        let ical = parse(&one_event(properties)).unwrap();
        let expansion = ical.expand_dates(Tz::UTC, 100);
        expansion.events.iter().map(|event| event.start.to_rfc3339()).collect()
    };
    assert_eq!(
        starts(
            "DTSTART;TZID=Europe/Berlin:20260413T090000
RRULE:FREQ=WEEKLY;UNTIL=20260427T070000Z"
        ),
        ["2026-04-13T09:00:00+02:00", "2026-04-20T09:00:00+02:00"]
    );
    assert_eq!(
        starts(
            "DTSTART;TZID=Europe/Berlin:20260322T023000
RRULE:FREQ=WEEKLY;COUNT=3
EXDATE;TZID=Europe/Berlin:20260329T023000"
        ),
        ["2026-03-22T02:30:00+01:00", "2026-03-29T02:30:00+00:00", "2026-04-05T02:30:00+02:00"]
    );
    // The same two series expanded here.
    check_one(
        "DTSTART;TZID=Europe/Berlin:20260322T023000
RRULE:FREQ=WEEKLY;COUNT=3
EXDATE;TZID=Europe/Berlin:20260329T023000",
        ("2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        &[
            "2026-03-22T02:30:00+01:00..2026-03-22T02:30:00+01:00",
            "2026-04-05T02:30:00+02:00..2026-04-05T02:30:00+02:00",
        ],
    );
}
