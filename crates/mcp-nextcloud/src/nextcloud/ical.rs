//! iCalendar for the calendar tools: recurring events expanded into
//! occurrences in their own time zones, and new events written out.
//!
//! Recurrence rules are run by calcard's RRULE engine, but on a copy of the
//! object in which every date-time of a series (DTSTART, RECURRENCE-ID,
//! EXDATE, RDATE, UNTIL) has been rewritten into the series' local
//! wall-clock time, without a zone. The engine then only ever counts local
//! days and hours, and we turn each local start into an instant ourselves
//! with RFC 5545's rules (§3.3.5: a local time that occurs twice means the
//! first; one that does not occur is read with the offset before the gap).
//! Why not hand calcard the zones: it compares a UTC `UNTIL` with local
//! times as if they were UTC (dropping the last occurrence east of
//! Greenwich), reads a local time inside a DST gap as UTC, and drops an
//! EXDATE that falls into a gap. Why not the server's `cal:expand`: sabre
//! expands into UTC and loses the zone, and servers disagree on overrides.
//!
//! All-day events stay dates. Floating times (no zone) are read in the zone
//! the caller names, as the user's own calendar app would show them.

use calcard::common::PartialDateTime;
use calcard::common::timezone::Tz;
use calcard::icalendar::timezone::TzResolver;
use calcard::icalendar::{
    ICalendar, ICalendarComponent, ICalendarComponentType, ICalendarEntry, ICalendarParameterName,
    ICalendarPeriod, ICalendarProperty, ICalendarStatus, ICalendarValue,
};
use calcard::{Entry, Parser};
use chrono::offset::LocalResult;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc};
use std::collections::BTreeMap;

/// The most recurrence dates generated for one calendar object (calcard's
/// iteration limit, counted from the series' first occurrence). A daily
/// series started in 1990 needs about 13 000 to reach 2026.
pub const RECURRENCE_EXPANSION_MAX: usize = 50_000;
/// The deepest component nesting accepted from Nextcloud (VCALENDAR >
/// VEVENT > VALARM is 3).
const COMPONENT_DEPTH_MAX: usize = 8;
const DAY_SECONDS: i64 = 86_400;

/// When an occurrence starts or ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventTime {
    /// A whole day (all-day events).
    Date(NaiveDate),
    /// A moment, expressed in the zone the event uses.
    Moment(DateTime<Tz>),
}

impl EventTime {
    /// RFC 3339 with the event's UTC offset (`Z` for UTC), or `YYYY-MM-DD`.
    pub fn to_rfc3339(&self) -> String {
        match self {
            EventTime::Date(date) => date.format("%Y-%m-%d").to_string(),
            EventTime::Moment(moment) => {
                moment.fixed_offset().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            }
        }
    }

    /// The IANA name of the zone, when the time has one.
    pub fn time_zone(&self) -> Option<String> {
        match self {
            EventTime::Date(_) => None,
            EventTime::Moment(moment) => zone_name(moment.timezone()),
        }
    }

    /// Unix seconds; a date counts from its midnight in `floating_zone`.
    pub fn instant(&self, floating_zone: Tz) -> i64 {
        match self {
            EventTime::Date(date) => {
                local_to_moment(floating_zone, date.and_time(chrono::NaiveTime::MIN)).timestamp()
            }
            EventTime::Moment(moment) => moment.timestamp(),
        }
    }
}

/// The IANA name of a zone; `None` for fixed offsets and floating time.
pub fn zone_name(zone: Tz) -> Option<String> {
    match zone {
        Tz::Tz(zone) => Some(zone.name().to_string()),
        Tz::Fixed(offset) if offset.local_minus_utc() == 0 => Some("UTC".to_string()),
        Tz::Fixed(_) | Tz::Floating => None,
    }
}

/// A half-open range of Unix seconds, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

/// One occurrence of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Index of the VEVENT in the object: the master, or the override
    /// (RECURRENCE-ID) that replaced this occurrence.
    pub component: u32,
    pub start: EventTime,
    pub end: EventTime,
    pub start_instant: i64,
    pub end_instant: i64,
    /// For an occurrence of a series: the start it had in the series
    /// before any override moved it (its RECURRENCE-ID).
    pub recurrence_id: Option<EventTime>,
}

/// The occurrences of one object inside a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expansion {
    pub occurrences: Vec<Occurrence>,
    /// A series generated [`RECURRENCE_EXPANSION_MAX`] dates before the
    /// window ended, so later occurrences may be missing.
    pub incomplete: bool,
}

/// What a calendar object is made of, read from Nextcloud.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("not an iCalendar object: {0}")]
pub struct UnreadableCalendarData(pub &'static str);

/// Parses one calendar object resource.
pub fn parse(text: &str) -> Result<ICalendar, UnreadableCalendarData> {
    let mut parser = Parser::new(text);
    let Entry::ICalendar(ical) = parser.entry() else {
        return Err(UnreadableCalendarData("no VCALENDAR"));
    };
    if nesting_depth(&ical) > COMPONENT_DEPTH_MAX {
        return Err(UnreadableCalendarData("components nested too deeply"));
    }
    Ok(ical)
}

/// RFC 5545 §3.3.5: a local time that occurs twice means the first one; a
/// local time that does not occur (a DST gap) is read with the UTC offset
/// in force before the gap, so 02:30 on a spring-forward night is 03:30.
pub fn local_to_moment(zone: Tz, local: NaiveDateTime) -> DateTime<Tz> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(moment) => moment,
        LocalResult::Ambiguous(earliest, _) => earliest,
        LocalResult::None => {
            // A day earlier is before the gap: zones never change twice a day.
            let before = zone.offset_from_utc_datetime(&(local - TimeDelta::days(1))).fix();
            let utc = local - TimeDelta::seconds(i64::from(before.local_minus_utc()));
            zone.from_utc_datetime(&utc)
        }
    }
}

/// Every VEVENT occurrence of `ical` that overlaps `window`, sorted by
/// start. Floating times and all-day dates are placed in `floating_zone`
/// for the overlap test.
pub fn expand(ical: &ICalendar, window: Window, floating_zone: Tz) -> Expansion {
    let resolver = ical.build_tz_resolver();
    let series = series_of(ical, &resolver, floating_zone);
    let mut local = ical.clone();
    let mut exdates_total = 0;
    for (index, component) in local.components.iter_mut().enumerate() {
        match component.component_type {
            ICalendarComponentType::VEvent => {
                let zone = component_uid(&ical.components[index])
                    .and_then(|uid| series.get(uid))
                    .map(|series| series.zone)
                    .unwrap_or_default();
                exdates_total += component
                    .properties(&ICalendarProperty::Exdate)
                    .map(|entry| entry.values.len())
                    .sum::<usize>();
                localise(component, zone, &resolver, floating_zone, window);
            }
            // Tasks, journals and free-busy would use up the expansion
            // limit; without dates calcard skips them.
            ref kind if kind.has_time_ranges() => component.entries.clear(),
            _ => {}
        }
    }
    let expansion = local.expand_dates(Tz::Floating, RECURRENCE_EXPANSION_MAX);
    let mut occurrences = Vec::new();
    for event in &expansion.events {
        let Some(component) = ical.components.get(event.comp_id as usize) else {
            continue;
        };
        if component.component_type != ICalendarComponentType::VEvent {
            continue;
        }
        let series = component_uid(component).and_then(|uid| series.get(uid));
        let local_start = event.start.naive_local();
        if let Some(occurrence) =
            occurrence(ical, event.comp_id, local_start, series, &resolver, floating_zone)
            && overlaps(&occurrence, window)
        {
            occurrences.push(occurrence);
        }
    }
    // A series whose rule calcard refused (an invalid RRULE) still has its
    // first occurrence: show that rather than nothing.
    for error in &expansion.errors {
        let Some(component) = ical.components.get(error.comp_id as usize) else {
            continue;
        };
        if component.component_type != ICalendarComponentType::VEvent
            || occurrences.iter().any(|occurrence| occurrence.component == error.comp_id)
        {
            continue;
        }
        if let Some(start) = dtstart(component, &resolver, floating_zone) {
            let local_start = match start {
                EventTime::Date(date) => date.and_time(chrono::NaiveTime::MIN),
                EventTime::Moment(moment) => moment.naive_local(),
            };
            if let Some(mut occurrence) =
                occurrence(ical, error.comp_id, local_start, None, &resolver, floating_zone)
                && overlaps(&occurrence, window)
            {
                occurrence.recurrence_id = None;
                occurrences.push(occurrence);
            }
        }
    }
    occurrences.sort_by_key(|occurrence| {
        (occurrence.start_instant, occurrence.end_instant, occurrence.component)
    });
    occurrences.dedup();
    Expansion {
        occurrences,
        incomplete: expansion.events.len() + exdates_total >= RECURRENCE_EXPANSION_MAX,
    }
}

/// What the VEVENTs sharing one UID have in common.
#[derive(Debug, Clone, Copy)]
struct Series {
    /// The zone of the master's DTSTART; [`Tz::Floating`] for all-day.
    zone: Tz,
    /// The master has RRULE or RDATE.
    recurring: bool,
}

fn series_of<'a>(
    ical: &'a ICalendar,
    resolver: &TzResolver<&str>,
    floating_zone: Tz,
) -> BTreeMap<&'a str, Series> {
    let mut series = BTreeMap::new();
    let events = ical
        .components
        .iter()
        .filter(|component| component.component_type == ICalendarComponentType::VEvent);
    // Masters first, so an override only defines the series without one.
    let (masters, overrides): (Vec<_>, Vec<_>) =
        events.partition(|component| !component.has_property(&ICalendarProperty::RecurrenceId));
    for component in masters.into_iter().chain(overrides) {
        let Some(uid) = component_uid(component) else {
            continue;
        };
        let zone = match dtstart(component, resolver, floating_zone) {
            Some(EventTime::Moment(moment)) => moment.timezone(),
            _ => Tz::Floating,
        };
        let recurring = component.has_property(&ICalendarProperty::Rrule)
            || component.has_property(&ICalendarProperty::Rdate);
        series.entry(uid).or_insert(Series { zone, recurring });
    }
    series
}

fn component_uid(component: &ICalendarComponent) -> Option<&str> {
    component.uid()
}

/// Rewrites a VEVENT's date-times into `zone`'s local time without a zone
/// (see the module comment), caps an endless rule at the window's end, and
/// drops what calcard must not see (DTEND, DURATION: we compute lengths
/// ourselves; SEQUENCE: calcard pairs overrides only with equal SEQUENCE).
fn localise(
    component: &mut ICalendarComponent,
    zone: Tz,
    resolver: &TzResolver<&str>,
    floating_zone: Tz,
    window: Window,
) {
    component.entries.retain(|entry| {
        !matches!(
            entry.name,
            ICalendarProperty::Dtend | ICalendarProperty::Duration | ICalendarProperty::Sequence
        )
    });
    // An all-day series counts dates, which need no rewriting.
    let all_day = zone == Tz::Floating;
    let mut local_start = None;
    for entry in &mut component.entries {
        if all_day
            || !matches!(
                entry.name,
                ICalendarProperty::Dtstart
                    | ICalendarProperty::RecurrenceId
                    | ICalendarProperty::Exdate
                    | ICalendarProperty::Rdate
            )
        {
            continue;
        }
        let tz_id = entry.tz_id().map(str::to_string);
        let fallback = if tz_id.is_some() { floating_zone } else { zone };
        for value in &mut entry.values {
            match value {
                ICalendarValue::PartialDateTime(date_time) => {
                    if let Some(local) =
                        local_in(date_time, tz_id.as_deref(), resolver, fallback, zone)
                    {
                        if entry.name == ICalendarProperty::Dtstart {
                            local_start = Some(local);
                        }
                        **date_time = floating(local);
                    }
                }
                ICalendarValue::Period(ICalendarPeriod::Range { start, end }) => {
                    if let Some(local) = local_in(start, tz_id.as_deref(), resolver, fallback, zone)
                    {
                        *start = floating(local);
                    }
                    if let Some(local) = local_in(end, tz_id.as_deref(), resolver, fallback, zone) {
                        *end = floating(local);
                    }
                }
                ICalendarValue::Period(ICalendarPeriod::Duration { start, .. }) => {
                    if let Some(local) = local_in(start, tz_id.as_deref(), resolver, fallback, zone)
                    {
                        *start = floating(local);
                    }
                }
                _ => {}
            }
        }
        entry.params.retain(|param| param.name != ICalendarParameterName::Tzid);
    }
    // The local time of the window's end, a day late for safety; for dates,
    // two days late, as the caller's zone may be up to 14 hours from UTC.
    let window_end_local = if all_day {
        DateTime::from_timestamp(window.end, 0).map(|end| end.naive_utc() + TimeDelta::days(2))
    } else {
        zone.timestamp_opt(window.end, 0)
            .single()
            .map(|moment| moment.naive_local() + TimeDelta::days(1))
    };
    for entry in &mut component.entries {
        if entry.name != ICalendarProperty::Rrule {
            continue;
        }
        for value in &mut entry.values {
            let ICalendarValue::RecurrenceRule(rule) = value else {
                continue;
            };
            let until_local = rule.until.as_ref().and_then(|until| {
                let result = until.to_date_time()?;
                if !until.has_time() {
                    // A date UNTIL on a timed series: the whole day counts.
                    return result.date_time.date().and_hms_opt(23, 59, 59);
                }
                match result.offset {
                    Some(offset) => {
                        Some(zone.from_utc_datetime(&(result.date_time - offset)).naive_local())
                    }
                    None => Some(result.date_time),
                }
            });
            let cap = match (window_end_local, local_start) {
                (Some(end), Some(start)) => Some(end.max(start)),
                (cap, _) => cap,
            };
            let until = match (until_local, rule.count, cap) {
                (Some(until), _, Some(cap)) => Some(until.min(cap)),
                (Some(until), _, None) => Some(until),
                (None, None, cap) => cap,
                // COUNT bounds the rule; RFC 5545 forbids adding UNTIL.
                (None, Some(_), _) => None,
            };
            rule.until = until.map(floating);
        }
    }
}

/// The local time in `zone` of a date-time value; `None` for dates.
///
/// A value already written in `zone` keeps its wall-clock time as written:
/// going through an instant would move a time inside a DST gap, and every
/// later occurrence with it.
fn local_in(
    value: &PartialDateTime,
    tz_id: Option<&str>,
    resolver: &TzResolver<&str>,
    fallback: Tz,
    zone: Tz,
) -> Option<NaiveDateTime> {
    let result = value.to_date_time()?;
    if value.has_time() && result.offset.is_none() && value_zone(tz_id, resolver, fallback) == zone
    {
        return Some(result.date_time);
    }
    match read_time(value, tz_id, resolver, fallback)? {
        EventTime::Date(_) => None,
        EventTime::Moment(moment) => Some(moment.with_timezone(&zone).naive_local()),
    }
}

/// The zone a local (not UTC) date-time value is written in.
fn value_zone(tz_id: Option<&str>, resolver: &TzResolver<&str>, fallback: Tz) -> Tz {
    tz_id
        .and_then(|tz_id| resolver.resolve(tz_id))
        .filter(|zone| !zone.is_floating())
        .unwrap_or(fallback)
}

fn floating(local: NaiveDateTime) -> PartialDateTime {
    PartialDateTime::from_naive_timestamp(local.and_utc().timestamp())
}

/// A DATE or DATE-TIME value as an [`EventTime`]: UTC or an offset when the
/// value says so, else its TZID's zone, else `fallback`.
pub fn read_time(
    value: &PartialDateTime,
    tz_id: Option<&str>,
    resolver: &TzResolver<&str>,
    fallback: Tz,
) -> Option<EventTime> {
    let result = value.to_date_time()?;
    if !value.has_time() {
        return Some(EventTime::Date(result.date_time.date()));
    }
    if let Some(offset) = result.offset {
        let zone = if offset.local_minus_utc() == 0 { Tz::UTC } else { Tz::Fixed(offset) };
        return Some(EventTime::Moment(zone.from_utc_datetime(&(result.date_time - offset))));
    }
    let zone = value_zone(tz_id, resolver, fallback);
    Some(EventTime::Moment(local_to_moment(zone, result.date_time)))
}

fn entry_time(
    entry: &ICalendarEntry,
    resolver: &TzResolver<&str>,
    fallback: Tz,
) -> Option<EventTime> {
    let Some(ICalendarValue::PartialDateTime(value)) = entry.values.first() else {
        return None;
    };
    read_time(value, entry.tz_id(), resolver, fallback)
}

fn dtstart(
    component: &ICalendarComponent,
    resolver: &TzResolver<&str>,
    floating_zone: Tz,
) -> Option<EventTime> {
    component
        .property(&ICalendarProperty::Dtstart)
        .and_then(|entry| entry_time(entry, resolver, floating_zone))
}

/// How long each occurrence of a component lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    Days(i64),
    /// Whole days added on the wall clock, then exact seconds (RFC 5545
    /// §3.3.6: a day in a DURATION is nominal, an hour exact; DTEND - DTSTART
    /// is an exact duration).
    Timed {
        days: i64,
        seconds: i64,
    },
}

/// The length of `component`'s occurrences; `start` is its own DTSTART.
fn length(
    component: &ICalendarComponent,
    start: &EventTime,
    resolver: &TzResolver<&str>,
    floating_zone: Tz,
) -> Length {
    let start_zone = match start {
        EventTime::Moment(moment) => moment.timezone(),
        EventTime::Date(_) => floating_zone,
    };
    let end = component
        .property(&ICalendarProperty::Dtend)
        .and_then(|entry| entry_time(entry, resolver, start_zone));
    let duration = component.property(&ICalendarProperty::Duration).and_then(|entry| {
        match entry.values.first() {
            Some(ICalendarValue::Duration(duration)) if !duration.neg => Some(duration.clone()),
            _ => None,
        }
    });
    match (start, end, duration) {
        (EventTime::Date(start), Some(EventTime::Date(end)), _) => {
            Length::Days((end - *start).num_days().max(1))
        }
        (EventTime::Date(_), _, Some(duration)) => {
            let days = i64::from(duration.weeks) * 7 + i64::from(duration.days);
            let partial = duration.hours + duration.minutes + duration.seconds > 0;
            Length::Days((days + i64::from(partial)).max(1))
        }
        (EventTime::Date(_), _, None) => Length::Days(1),
        (EventTime::Moment(start), Some(EventTime::Moment(end)), _) => {
            Length::Timed { days: 0, seconds: (end.timestamp() - start.timestamp()).max(0) }
        }
        (EventTime::Moment(_), _, Some(duration)) => Length::Timed {
            days: i64::from(duration.weeks) * 7 + i64::from(duration.days),
            seconds: i64::from(duration.hours) * 3600
                + i64::from(duration.minutes) * 60
                + i64::from(duration.seconds),
        },
        (EventTime::Moment(_), _, None) => Length::Timed { days: 0, seconds: 0 },
    }
}

/// The occurrence of component `index` that calcard placed at `local_start`
/// (local wall-clock time of the series).
fn occurrence(
    ical: &ICalendar,
    index: u32,
    local_start: NaiveDateTime,
    series: Option<&Series>,
    resolver: &TzResolver<&str>,
    floating_zone: Tz,
) -> Option<Occurrence> {
    let component = ical.components.get(index as usize)?;
    let own_start = dtstart(component, resolver, floating_zone);
    let series_zone = series.map(|series| series.zone).filter(|zone| !zone.is_floating());
    let start = match own_start? {
        EventTime::Date(_) => EventTime::Date(local_start.date()),
        EventTime::Moment(own) => {
            let zone = series_zone.unwrap_or(own.timezone());
            // An override placed at its own start keeps its own zone and
            // exact instant; anything else is the series' local time.
            if own.with_timezone(&zone).naive_local() == local_start {
                EventTime::Moment(own)
            } else {
                EventTime::Moment(local_to_moment(zone, local_start))
            }
        }
    };
    let length = length(component, &own_start?, resolver, floating_zone);
    let end = match (start, length) {
        (EventTime::Date(date), Length::Days(days)) => {
            EventTime::Date(date + TimeDelta::days(days))
        }
        (EventTime::Moment(moment), Length::Timed { days, seconds }) => {
            let zone = moment.timezone();
            let shifted = local_to_moment(zone, moment.naive_local() + TimeDelta::days(days));
            EventTime::Moment(shifted + TimeDelta::seconds(seconds))
        }
        // A start and a length of different kinds cannot be built above.
        (start, _) => start,
    };
    let overriding = component.property(&ICalendarProperty::RecurrenceId);
    let recurrence_id = match overriding {
        Some(entry) => {
            entry_time(entry, resolver, series_zone.unwrap_or(floating_zone)).or(Some(start))
        }
        None if series.is_some_and(|series| series.recurring) => Some(start),
        None => None,
    };
    Some(Occurrence {
        component: index,
        start_instant: start.instant(floating_zone),
        end_instant: end.instant(floating_zone),
        start,
        end,
        recurrence_id,
    })
}

/// RFC 4791 §9.9: an occurrence overlaps when it starts before the window
/// ends and ends after it starts; one without length when it starts inside.
fn overlaps(occurrence: &Occurrence, window: Window) -> bool {
    if occurrence.end_instant > occurrence.start_instant {
        occurrence.start_instant < window.end && occurrence.end_instant > window.start
    } else {
        occurrence.start_instant >= window.start && occurrence.start_instant < window.end
    }
}

/// A TEXT property's value, unescaped by the parser.
pub fn text(component: &ICalendarComponent, name: &ICalendarProperty) -> Option<String> {
    component.property(name).and_then(|entry| match entry.values.first() {
        Some(ICalendarValue::Text(text)) => Some(text.clone()),
        _ => None,
    })
}

/// STATUS in lower case (`tentative`, `confirmed`, `cancelled`).
pub fn status(component: &ICalendarComponent) -> Option<&'static str> {
    match component.status()? {
        ICalendarStatus::Tentative => Some("tentative"),
        ICalendarStatus::Confirmed => Some("confirmed"),
        ICalendarStatus::Cancelled => Some("cancelled"),
        _ => None,
    }
}

/// How deeply components nest, walked without recursion; the parser
/// numbers children after their parents, so no cycle can be followed.
fn nesting_depth(ical: &ICalendar) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(0u32, 1usize)];
    while let Some((id, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if depth > COMPONENT_DEPTH_MAX {
            break;
        }
        if let Some(component) = ical.components.get(id as usize) {
            stack.extend(
                component
                    .component_ids
                    .iter()
                    .filter(|child| **child > id)
                    .map(|child| (*child, depth + 1)),
            );
        }
    }
    deepest
}

/// A new single event, as `calendar_create_event` writes it.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub uid: String,
    pub summary: String,
    pub location: Option<String>,
    pub description: Option<String>,
    pub start: EventTime,
    pub end: EventTime,
    pub created: DateTime<Utc>,
}

/// The PRODID of objects we write.
pub const PRODID: &str = "-//Tamebi//mcp-nextcloud//EN";

/// Writes a new event as a calendar object resource.
///
/// A zoned time is written with its TZID and a VTIMEZONE generated from the
/// zone database for a year either side (so clients that do not know the
/// zone can still place it, and recurrence edits later stay in local
/// time); UTC times are written with `Z`; all-day events as DATE values
/// with DTEND the day after the last day.
pub fn new_event(event: &NewEvent) -> String {
    let stamp = event.created.format("%Y%m%dT%H%M%SZ").to_string();
    let mut lines = vec![
        "BEGIN:VCALENDAR".to_string(),
        "VERSION:2.0".to_string(),
        format!("PRODID:{PRODID}"),
        "CALSCALE:GREGORIAN".to_string(),
        "BEGIN:VEVENT".to_string(),
        format!("UID:{}", escape_text(&event.uid)),
        format!("DTSTAMP:{stamp}"),
        format!("CREATED:{stamp}"),
        format!("LAST-MODIFIED:{stamp}"),
        date_line("DTSTART", &event.start),
        date_line("DTEND", &event.end),
        format!("SUMMARY:{}", escape_text(&event.summary)),
    ];
    if let Some(location) = &event.location {
        lines.push(format!("LOCATION:{}", escape_text(location)));
    }
    if let Some(description) = &event.description {
        lines.push(format!("DESCRIPTION:{}", escape_text(description)));
    }
    lines.extend(["END:VEVENT".to_string(), "END:VCALENDAR".to_string()]);
    let text = lines.join("\r\n") + "\r\n";
    let mut ical = parse(&text).expect("the event we build is valid iCalendar");
    if let EventTime::Moment(start) = event.start
        && let Some(name) = zone_name(start.timezone()).filter(|name| name != "UTC")
    {
        let year = 366 * DAY_SECONDS;
        ical.add_timezone(&name, start.timestamp() - year, event.end.instant(Tz::UTC) + year);
    }
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = ical.write_to(&mut out);
    out
}

fn date_line(name: &str, time: &EventTime) -> String {
    match time {
        EventTime::Date(date) => format!("{name};VALUE=DATE:{}", date.format("%Y%m%d")),
        EventTime::Moment(moment) => match zone_name(moment.timezone()) {
            Some(zone) if zone != "UTC" => {
                format!("{name};TZID={zone}:{}", moment.naive_local().format("%Y%m%dT%H%M%S"))
            }
            _ => format!("{name}:{}", moment.naive_utc().format("%Y%m%dT%H%M%SZ")),
        },
    }
}

/// RFC 5545 §3.3.11 TEXT escaping; CR is dropped, line breaks become `\n`.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
