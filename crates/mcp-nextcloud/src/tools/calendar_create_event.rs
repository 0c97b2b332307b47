//! `calendar_create_event`: a new single event in one of the user's
//! calendars, written as iCalendar and stored with `If-None-Match: *` so it
//! can never replace an existing event.
//!
//! Times given with a `time_zone` are stored in that zone (TZID plus a
//! VTIMEZONE), so the event keeps its local time if it is later made
//! recurring; times given only with an offset are stored in UTC; dates make
//! an all-day event. The result's uid, calendar and times read the same way
//! `calendar_events` reports them.

use super::calendar_events::{
    TIME_PATTERN, TimeArgument, calendar_json, calendar_schema, describe_when, find_calendar,
    list_calendars, parse_time_argument, parse_time_zone, shown_times,
};
use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::caldav::{self, Calendar};
use crate::nextcloud::ical::{self, EventTime, NewEvent};
use calcard::common::timezone::Tz;
use chrono::offset::LocalResult;
use chrono::{TimeDelta, TimeZone};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "calendar_create_event";
/// The calendar Nextcloud creates for every user, preferred as default.
pub const DEFAULT_CALENDAR_URI: &str = "personal";
/// The longest event this tool creates.
pub const EVENT_DAYS_MAX: i64 = 366;
pub const SUMMARY_LENGTH_MAX: usize = 500;
pub const LOCATION_LENGTH_MAX: usize = 500;
pub const DESCRIPTION_LENGTH_MAX: usize = 10_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[schemars(length(min = 1, max = SUMMARY_LENGTH_MAX), description = "The event's title.")]
    summary: String,
    #[schemars(
        regex(pattern = TIME_PATTERN),
        description = "When it starts: a local date-time (2026-04-14T10:00:00) read in time_zone, an RFC 3339 date-time with offset, or a date for an all-day event."
    )]
    start: String,
    #[schemars(
        regex(pattern = TIME_PATTERN),
        description = "When it ends, in the same form as start; for an all-day event the last day (inclusive)."
    )]
    end: String,
    #[serde(default)]
    #[schemars(
        description = "IANA time zone the event is in, e.g. Europe/Berlin. Required for local date-times."
    )]
    time_zone: Option<String>,
    #[serde(default)]
    #[schemars(length(max = LOCATION_LENGTH_MAX))]
    location: Option<String>,
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_LENGTH_MAX))]
    description: Option<String>,
    #[serde(default)]
    #[schemars(
        length(min = 1),
        description = "The calendar's uri, as calendar_events returns it. Default: the user's first writable event calendar (normally \"personal\")."
    )]
    calendar: Option<String>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Create a calendar event",
            description: "Create a single event in the user's calendar (default: their personal calendar). Give \
start and end as local date-times with time_zone (IANA, e.g. Europe/Berlin: the event keeps that local time), or \
as RFC 3339 date-times with an offset (stored in UTC); for an all-day event give dates, end being the last day. \
Returns the new event's uid, calendar and times, as calendar_events will list it.",
            kind: ToolKind::Action { destructive: false, idempotent: false, open_world: false },
            output_schema: json!({
                "type": "object",
                "properties": {
                    "uid": {"type": "string", "description": "The new event's UID, as calendar_events reports it."},
                    "calendar": calendar_schema(false),
                    "href": {"type": "string", "description": "Path of the stored object on Nextcloud's CalDAV server."},
                    "summary": {"type": "string"},
                    "start": {"type": "string"},
                    "end": {"type": "string"},
                    "time_zone": {"type": ["string", "null"]},
                    "all_day": {"type": "boolean"}
                },
                "required": ["uid", "calendar", "href", "summary", "start", "end", "time_zone", "all_day"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let summary =
        bounded("summary", Some(&input.summary), SUMMARY_LENGTH_MAX)?.ok_or_else(|| {
            ToolFailure::invalid_arguments("summary is empty. Give the event a title.")
        })?;
    let location = bounded("location", input.location.as_deref(), LOCATION_LENGTH_MAX)?;
    let description = bounded("description", input.description.as_deref(), DESCRIPTION_LENGTH_MAX)?;
    let (start, end) = event_times(&input.start, &input.end, input.time_zone.as_deref())?;
    let calendars = call.nextcloud.calendars().await?;
    let calendar = target_calendar(&calendars, input.calendar.as_deref())?;
    let uid = uuid::Uuid::new_v4().to_string();
    let object = format!("{uid}.ics");
    let data = ical::new_event(&NewEvent {
        uid: uid.clone(),
        summary: summary.clone(),
        location: location.clone(),
        description,
        start,
        end,
        created: chrono::Utc::now(),
    });
    call.nextcloud.create_object(&calendar.uri, &object, data).await?;
    let href = format!(
        "/remote.php/dav/calendars/{}/{}/{}",
        crate::nextcloud::encode(&call.nextcloud.uid),
        crate::nextcloud::encode(&calendar.uri),
        crate::nextcloud::encode(&object)
    );
    let (start_text, end_text) = shown_times(&start, &end);
    let at = location.as_deref().map(|location| format!(" @ {location}")).unwrap_or_default();
    Ok(ToolOutput {
        text: format!(
            "Created \"{summary}\"{at} on {} in calendar {} [{}]. Its uid is {uid}.",
            describe_when(&start, &end),
            calendar.name,
            calendar.uri
        ),
        structured: json!({
            "uid": uid,
            "calendar": calendar_json(calendar, false),
            "href": href,
            "summary": summary,
            "start": start_text,
            "end": end_text,
            "time_zone": start.time_zone(),
            "all_day": matches!(start, EventTime::Date(_)),
        }),
    })
}

/// A trimmed optional text, refused when longer than `length_max`
/// characters; empty counts as absent.
fn bounded(
    field: &str,
    text: Option<&str>,
    length_max: usize,
) -> Result<Option<String>, ToolFailure> {
    let Some(text) = text.map(str::trim).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    if text.chars().count() > length_max {
        return Err(ToolFailure::invalid_arguments(format!(
            "{field} is longer than {length_max} characters; shorten it."
        )));
    }
    Ok(Some(text.to_string()))
}

/// Start and end as they will be stored; for all-day events the end is the
/// day after the last day (iCalendar's DTEND).
pub fn event_times(
    start: &str,
    end: &str,
    time_zone: Option<&str>,
) -> Result<(EventTime, EventTime), ToolFailure> {
    let zone = time_zone.map(|name| parse_time_zone(Some(name))).transpose()?;
    let start = parse_time_argument(start, "start")?;
    let end = parse_time_argument(end, "end")?;
    let (start, end) = match (start, end) {
        (TimeArgument::Date(first), TimeArgument::Date(last)) => {
            if last < first {
                return Err(ToolFailure::invalid_arguments(
                    "end is before start. For an all-day event end is the last day, e.g. the same date as start for one day.",
                ));
            }
            (EventTime::Date(first), EventTime::Date(last + TimeDelta::days(1)))
        }
        (TimeArgument::Date(_), _) | (_, TimeArgument::Date(_)) => {
            return Err(ToolFailure::invalid_arguments(
                "Give start and end both as dates (an all-day event) or both as date-times.",
            ));
        }
        (start, end) => (moment(start, zone, "start")?, moment(end, zone, "end")?),
    };
    let (first, after) = (start.instant(Tz::UTC), end.instant(Tz::UTC));
    if after <= first {
        return Err(ToolFailure::invalid_arguments(
            "end must be after start. Check the dates, times and offsets.",
        ));
    }
    if after - first > EVENT_DAYS_MAX * 86_400 {
        return Err(ToolFailure::invalid_arguments(format!(
            "The event would last more than {EVENT_DAYS_MAX} days. Check start and end."
        )));
    }
    Ok((start, end))
}

/// A date-time argument as a moment: in `zone` when there is one (a
/// local time that occurs twice is the first; one that does not occur is
/// refused), else in UTC, which needs an offset.
fn moment(argument: TimeArgument, zone: Option<Tz>, field: &str) -> Result<EventTime, ToolFailure> {
    match (argument, zone) {
        (TimeArgument::Instant(instant), Some(zone)) => {
            Ok(EventTime::Moment(instant.with_timezone(&zone)))
        }
        (TimeArgument::Instant(instant), None) => {
            Ok(EventTime::Moment(instant.with_timezone(&Tz::UTC)))
        }
        (TimeArgument::Local(local), Some(zone)) => match zone.from_local_datetime(&local) {
            LocalResult::Single(moment) => Ok(EventTime::Moment(moment)),
            LocalResult::Ambiguous(earliest, _) => Ok(EventTime::Moment(earliest)),
            LocalResult::None => Err(ToolFailure::invalid_arguments(format!(
                "{field} {} does not exist in {} (the clocks jump forward then). Pick a time outside that hour.",
                local.format("%Y-%m-%d %H:%M"),
                ical::zone_name(zone).unwrap_or_default()
            ))),
        },
        (TimeArgument::Local(local), None) => Err(ToolFailure::invalid_arguments(format!(
            "{field} {} has no time zone. Add time_zone (e.g. Europe/Berlin) or give an offset (2026-04-14T10:00:00+02:00).",
            local.format("%Y-%m-%dT%H:%M:%S")
        ))),
        (TimeArgument::Date(date), _) => Ok(EventTime::Date(date)),
    }
}

/// The calendar to write to: the one named, checked, or the default.
fn target_calendar<'a>(
    calendars: &'a [Calendar],
    uri: Option<&str>,
) -> Result<&'a Calendar, ToolFailure> {
    match uri {
        Some(uri) => {
            let calendar = find_calendar(calendars, uri)?;
            if !calendar.has_events {
                return Err(ToolFailure::invalid_arguments(format!(
                    "Calendar \"{}\" holds tasks, not events. {}",
                    calendar.uri,
                    list_calendars(calendars)
                )));
            }
            if !calendar.writable {
                return Err(caldav::read_only_failure(&calendar.uri));
            }
            Ok(calendar)
        }
        None => {
            let usable = |calendar: &&Calendar| calendar.has_events && calendar.writable;
            calendars
                .iter()
                .filter(usable)
                .find(|calendar| calendar.uri == DEFAULT_CALENDAR_URI)
                .or_else(|| calendars.iter().find(usable))
                .ok_or_else(|| {
                    ToolFailure::new(
                        FailureKind::NotFound,
                        format!(
                            "The user has no calendar they can add events to. {} Tell the user; they can create a calendar in Nextcloud Calendar.",
                            list_calendars(calendars)
                        ),
                    )
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(start: &str, end: &str, zone: Option<&str>) -> Result<(String, String), String> {
        event_times(start, end, zone)
            .map(|(start, end)| shown_times(&start, &end))
            .map_err(|failure| failure.message)
    }

    #[test]
    fn times_are_read_in_the_zone_given_or_kept_in_utc() {
        assert_eq!(
            shown("2026-04-14T10:00:00", "2026-04-14T11:30", Some("Europe/Berlin")).unwrap(),
            ("2026-04-14T10:00:00+02:00".into(), "2026-04-14T11:30:00+02:00".into())
        );
        assert_eq!(
            shown("2026-04-14T08:00:00Z", "2026-04-14T09:00:00Z", Some("Europe/Berlin")).unwrap(),
            ("2026-04-14T10:00:00+02:00".into(), "2026-04-14T11:00:00+02:00".into())
        );
        assert_eq!(
            shown("2026-04-14T10:00:00+02:00", "2026-04-14T11:00:00+02:00", None).unwrap(),
            ("2026-04-14T08:00:00Z".into(), "2026-04-14T09:00:00Z".into())
        );
        assert_eq!(
            shown("2026-04-14", "2026-04-15", None).unwrap(),
            ("2026-04-14".into(), "2026-04-15".into())
        );
        assert_eq!(
            shown("2026-10-25T02:30", "2026-10-25T04:00", Some("Europe/Berlin")).unwrap().0,
            "2026-10-25T02:30:00+02:00",
            "a time that happens twice is the first"
        );
    }

    #[test]
    fn impossible_or_incomplete_times_are_explained() {
        let cases = [
            ("2026-04-14T10:00:00", "2026-04-14T11:00:00", None, "has no time zone"),
            ("2026-04-14T10:00:00", "2026-04-14T09:00:00", Some("UTC"), "after start"),
            ("2026-04-14", "2026-04-14T11:00:00Z", None, "both as dates"),
            ("2026-04-15", "2026-04-14", None, "end is before start"),
            ("2026-03-29T02:30", "2026-03-29T04:00", Some("Europe/Berlin"), "does not exist"),
            ("2026-04-14T10:00:00Z", "2027-06-14T10:00:00Z", None, "more than 366 days"),
            ("2026-04-14T10:00:00Z", "2026-04-14T11:00:00Z", Some("Berlin"), "IANA"),
            ("next tuesday", "2026-04-14T11:00:00Z", None, "not a date or time"),
        ];
        for (start, end, zone, expected) in cases {
            let message = shown(start, end, zone).unwrap_err();
            assert!(message.contains(expected), "{start} {end}: {message}");
        }
    }

    fn calendar(uri: &str, has_events: bool, writable: bool) -> Calendar {
        Calendar { uri: uri.into(), name: uri.into(), color: None, order: 0, has_events, writable }
    }

    #[test]
    fn the_default_is_personal_else_the_first_writable_event_calendar() {
        let calendars = [
            calendar("tasks", false, true),
            calendar("shared", true, false),
            calendar("work", true, true),
            calendar("personal", true, true),
        ];
        assert_eq!(target_calendar(&calendars, None).unwrap().uri, "personal");
        assert_eq!(target_calendar(&calendars[..3], None).unwrap().uri, "work");
        assert_eq!(target_calendar(&calendars[..2], None).unwrap_err().kind, FailureKind::NotFound);
        assert_eq!(
            target_calendar(&calendars, Some("shared")).unwrap_err().kind,
            FailureKind::RefusedByNextcloud
        );
        assert_eq!(
            target_calendar(&calendars, Some("tasks")).unwrap_err().kind,
            FailureKind::InvalidArguments
        );
        assert_eq!(
            target_calendar(&calendars, Some("../bob/personal")).unwrap_err().kind,
            FailureKind::InvalidArguments
        );
    }
}
