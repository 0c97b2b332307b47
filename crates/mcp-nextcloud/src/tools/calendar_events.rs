//! `calendar_events`: the user's events in a time range, across their
//! calendars, with recurring events expanded here (not by the server) into
//! occurrences in their own time zones. Its result renders as an agenda in
//! MCP Apps hosts ([`crate::apps::CALENDAR_EVENTS_URI`]).

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::Nextcloud;
use crate::nextcloud::caldav::{self, Calendar};
use crate::nextcloud::ical::{self, EventTime, Window};
use calcard::common::timezone::Tz;
use calcard::icalendar::{ICalendarComponentType, ICalendarProperty};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "calendar_events";
/// The longest range one call covers.
pub const RANGE_DAYS_MAX: i64 = 366;
/// The most occurrences one call returns.
pub const LIMIT_MAX: u32 = 200;
const LIMIT_DEFAULT: u32 = 50;
/// Descriptions are cut here (characters) so one long invitation cannot
/// flood the model's context; the event itself is unchanged.
pub const DESCRIPTION_LENGTH_MAX: usize = 1_000;
/// In the text copy, a description is one line of at most this many
/// characters; the structured copy has the longer one.
const TEXT_DESCRIPTION_LENGTH_MAX: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[schemars(
        regex(pattern = TIME_PATTERN),
        description = "Start of the range: an RFC 3339 date-time (2026-03-09T00:00:00+01:00), a local date-time (2026-03-09T08:00:00) or a date (2026-03-09, from its midnight); local values are read in time_zone."
    )]
    start: String,
    #[schemars(
        regex(pattern = TIME_PATTERN),
        description = "End of the range (exclusive), as for start; a date includes that whole day. At most 366 days after start."
    )]
    end: String,
    #[serde(default)]
    #[schemars(
        length(min = 1),
        description = "Only this calendar, by the uri calendar_events returns (e.g. \"personal\"). Default: all the user's event calendars."
    )]
    calendar: Option<String>,
    #[serde(default)]
    #[schemars(
        length(min = 1),
        description = "Only events whose title, location or description contains this text (case-insensitive)."
    )]
    query: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "IANA time zone (e.g. Europe/Berlin) for local and date-only bounds, all-day events and events without a zone. Default: UTC."
    )]
    time_zone: Option<String>,
    #[serde(default)]
    #[schemars(
        range(min = 1, max = LIMIT_MAX),
        extend("default" = LIMIT_DEFAULT),
        description = "The most occurrences to return."
    )]
    limit: Option<u32>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Calendar events",
            description: "List the user's calendar events between start and end, across all their calendars or one \
(by uri), with recurring events expanded into single occurrences in their own time zones. Optionally keep only \
events whose title, location or description contains a text. Use it for the agenda, free time, or to find an \
event's uid. Returns each occurrence's uid, calendar, title, start and end (RFC 3339 with the event's UTC offset; \
dates for all-day events, end = last day), IANA time zone, location and description, sorted by start.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "range": {
                        "type": "object",
                        "properties": {
                            "start": {"type": "string", "format": "date-time"},
                            "end": {"type": "string", "format": "date-time"},
                            "time_zone": {"type": "string"}
                        },
                        "required": ["start", "end", "time_zone"]
                    },
                    "calendars": {
                        "type": "array",
                        "description": "The calendars searched.",
                        "items": calendar_schema(true)
                    },
                    "occurrences": {"type": "array", "items": occurrence_schema()},
                    "truncated": {"type": "boolean", "description": "More occurrences exist in the range than were returned."}
                },
                "required": ["range", "calendars", "occurrences", "truncated"]
            }),
            meta: Some(crate::apps::tool_meta(crate::apps::CALENDAR_EVENTS_URI)),
        },
        run,
    );
}

/// A date, a local date-time, or an RFC 3339 date-time.
pub const TIME_PATTERN: &str =
    r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$";

/// The JSON Schema of a calendar reference, shared by the calendar tools.
pub fn calendar_schema(with_rights: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "What the calendar tools take as calendar."},
            "name": {"type": "string"},
            "color": {"type": "string"}
        },
        "required": ["uri", "name"]
    });
    if with_rights {
        schema["properties"]["writable"] =
            json!({"type": "boolean", "description": "The user may add events to it."});
        schema["required"] = json!(["uri", "name", "writable"]);
    }
    schema
}

fn occurrence_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "uid": {"type": "string", "description": "The event's UID, shared by all occurrences of a series."},
            "calendar": calendar_schema(false),
            "summary": {"type": "string"},
            "start": {"type": "string", "description": "RFC 3339 with the event's UTC offset, or a date for all-day events."},
            "end": {"type": "string", "description": "RFC 3339 with the event's UTC offset, or for all-day events the last day (inclusive)."},
            "time_zone": {"type": ["string", "null"], "description": "The IANA zone the event is written in; null for all-day events and zones without an IANA name."},
            "all_day": {"type": "boolean"},
            "location": {"type": "string"},
            "description": {"type": "string"},
            "status": {"type": "string", "enum": ["tentative", "confirmed", "cancelled"]},
            "recurring": {"type": "boolean", "description": "This is one occurrence of a recurring event."},
            "recurrence_id": {"type": "string", "description": "For occurrences of a series: the start this occurrence has in the series, before any change to it."}
        },
        "required": ["uid", "calendar", "summary", "start", "end", "time_zone", "all_day", "recurring"]
    })
}

/// One occurrence with what the tool reports about it.
struct Found {
    start_instant: i64,
    calendar_index: usize,
    json: Value,
    summary: String,
    line: String,
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let zone = parse_time_zone(input.time_zone.as_deref())?;
    let start = parse_bound(&input.start, zone, Bound::Start)?;
    let end = parse_bound(&input.end, zone, Bound::End)?;
    if end <= start {
        return Err(ToolFailure::invalid_arguments(
            "end must be after start. For a single day give the same date as start and end.",
        ));
    }
    if end - start > RANGE_DAYS_MAX * 86_400 {
        return Err(ToolFailure::invalid_arguments(format!(
            "The range is longer than {RANGE_DAYS_MAX} days. Ask for a shorter period, or several in turn."
        )));
    }
    let limit = mcp_kit::arguments::count("limit", input.limit, LIMIT_DEFAULT, LIMIT_MAX)?;
    let query = input.query.as_deref().map(str::trim).filter(|query| !query.is_empty());
    let all_calendars = call.nextcloud.calendars().await?;
    let calendars: Vec<Calendar> = match input.calendar.as_deref() {
        Some(uri) => {
            let calendar = find_calendar(&all_calendars, uri)?;
            if !calendar.has_events {
                return Err(ToolFailure::invalid_arguments(format!(
                    "Calendar \"{uri}\" holds tasks, not events. {}",
                    list_calendars(&all_calendars)
                )));
            }
            vec![calendar.clone()]
        }
        None => all_calendars.into_iter().filter(|calendar| calendar.has_events).collect(),
    };
    let window = Window { start, end };
    let objects = fetch_all(&call.nextcloud, &calendars, window).await?;
    let mut found = Vec::new();
    let mut incomplete = false;
    for (calendar_index, object) in objects {
        let Ok(ical) = ical::parse(&object.data) else {
            tracing::warn!(object = %object.uri, "unreadable calendar object skipped");
            continue;
        };
        let expansion = ical::expand(&ical, window, zone);
        incomplete |= expansion.incomplete;
        for occurrence in &expansion.occurrences {
            let Some(component) = ical.components.get(occurrence.component as usize) else {
                continue;
            };
            if component.component_type != ICalendarComponentType::VEvent {
                continue;
            }
            let text_of = |name| {
                ical::text(component, &name)
                    .map(|text| text.trim().to_string())
                    .filter(|text| !text.is_empty())
            };
            let summary = text_of(ICalendarProperty::Summary).unwrap_or_default();
            let location = text_of(ICalendarProperty::Location);
            let description = text_of(ICalendarProperty::Description)
                .map(|description| shorten(&description, DESCRIPTION_LENGTH_MAX));
            if let Some(query) = query {
                let needle = query.to_lowercase();
                let matches = [Some(&summary), location.as_ref(), description.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|text| text.to_lowercase().contains(&needle));
                if !matches {
                    continue;
                }
            }
            let calendar = &calendars[calendar_index];
            let uid = component.uid().unwrap_or(object.uri.trim_end_matches(".ics")).to_string();
            let (start_text, end_text) = shown_times(&occurrence.start, &occurrence.end);
            let mut json = json!({
                "uid": uid,
                "calendar": calendar_json(calendar, false),
                "summary": summary,
                "start": start_text,
                "end": end_text,
                "time_zone": occurrence.start.time_zone(),
                "all_day": matches!(occurrence.start, EventTime::Date(_)),
                "recurring": occurrence.recurrence_id.is_some(),
            });
            if let Some(location) = &location {
                json["location"] = json!(location);
            }
            if let Some(description) = &description {
                json["description"] = json!(description);
            }
            if let Some(status) = ical::status(component) {
                json["status"] = json!(status);
            }
            if let Some(recurrence_id) = &occurrence.recurrence_id {
                json["recurrence_id"] = json!(recurrence_id.to_rfc3339());
            }
            let mut line = describe(
                &occurrence.start,
                &occurrence.end,
                &summary,
                location.as_deref(),
                calendar,
                &uid,
                occurrence.recurrence_id.is_some(),
                ical::status(component),
            );
            if let Some(description) = &description {
                let one_line = description.split_whitespace().collect::<Vec<_>>().join(" ");
                line.push_str(&format!("\n  {}", shorten(&one_line, TEXT_DESCRIPTION_LENGTH_MAX)));
            }
            found.push(Found {
                start_instant: occurrence.start_instant,
                calendar_index,
                json,
                summary,
                line,
            });
        }
    }
    found.sort_by(|a, b| {
        (a.start_instant, &a.summary, a.calendar_index).cmp(&(
            b.start_instant,
            &b.summary,
            b.calendar_index,
        ))
    });
    let truncated = found.len() > limit as usize || incomplete;
    found.truncate(limit as usize);
    let range_start = format_instant(start, zone);
    let range_end = format_instant(end, zone);
    let searched = calendars
        .iter()
        .map(|calendar| format!("{} [{}]", calendar.name, calendar.uri))
        .collect::<Vec<_>>()
        .join(", ");
    let matching = query.map(|query| format!(" matching \"{query}\"")).unwrap_or_default();
    let mut text = if found.is_empty() {
        format!(
            "No events{matching} between {range_start} and {range_end} in {}.",
            if calendars.is_empty() {
                "the user's calendars (they have none)".to_string()
            } else {
                searched
            }
        )
    } else {
        let mut lines = vec![format!(
            "{} event occurrence{}{matching} between {range_start} and {range_end} (calendars: {searched}):",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        )];
        lines.extend(found.iter().map(|found| found.line.clone()));
        lines.join("\n")
    };
    if incomplete {
        text.push_str("\nA very frequent recurring event could not be expanded completely; some of its occurrences may be missing.");
    } else if truncated {
        text.push_str(&format!(
            "\nMore than {limit} occurrences; narrow the range, add a query, or raise limit (at most {LIMIT_MAX})."
        ));
    }
    Ok(ToolOutput {
        text,
        structured: json!({
            "range": {"start": range_start, "end": range_end, "time_zone": zone_label(zone)},
            "calendars": calendars.iter().map(|calendar| calendar_json(calendar, true)).collect::<Vec<_>>(),
            "occurrences": found.into_iter().map(|found| found.json).collect::<Vec<_>>(),
            "truncated": truncated,
        }),
    })
}

/// How far the server's time range reaches beyond ours on each side:
/// sabre reads dates and floating times as UTC, we read them in the
/// caller's zone (up to 14 hours away), so the server pre-filters a day
/// wider and [`ical::expand`] cuts exactly.
const SERVER_RANGE_MARGIN_SECONDS: i64 = 86_400;

/// Runs the REPORT of every calendar at once; returns the objects with the
/// index of their calendar. The first failure wins: they share a cause.
async fn fetch_all(
    nextcloud: &Nextcloud,
    calendars: &[Calendar],
    window: Window,
) -> Result<Vec<(usize, caldav::CalendarObject)>, ToolFailure> {
    let start = format_utc(window.start - SERVER_RANGE_MARGIN_SECONDS);
    let end = format_utc(window.end + SERVER_RANGE_MARGIN_SECONDS);
    let mut queries = tokio::task::JoinSet::new();
    for (index, calendar) in calendars.iter().enumerate() {
        let nextcloud = nextcloud.clone();
        let uri = calendar.uri.clone();
        let (start, end) = (start.clone(), end.clone());
        queries.spawn(async move { (index, nextcloud.events_between(&uri, &start, &end).await) });
    }
    let mut objects = Vec::new();
    let mut failure = None;
    while let Some(joined) = queries.join_next().await {
        match joined {
            Ok((index, Ok(found))) => {
                objects.extend(found.into_iter().map(|object| (index, object)))
            }
            Ok((_, Err(error))) => {
                failure.get_or_insert(error);
            }
            Err(error) => {
                tracing::error!(%error, "calendar query task failed");
                failure.get_or_insert(crate::nextcloud::unreachable_failure());
            }
        }
    }
    match failure {
        Some(failure) => Err(failure),
        None => Ok(objects),
    }
}

/// A `time_zone` argument; UTC when absent.
pub fn parse_time_zone(name: Option<&str>) -> Result<Tz, ToolFailure> {
    match name.map(str::trim) {
        None => Ok(Tz::UTC),
        Some(name) => name.parse::<chrono_tz::Tz>().map(Tz::Tz).map_err(|_| {
            ToolFailure::invalid_arguments(format!(
                "\"{name}\" is not an IANA time zone name. Use one like Europe/Berlin, America/New_York or UTC."
            ))
        }),
    }
}

/// A date or time argument, as the model may write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeArgument {
    Date(NaiveDate),
    Local(NaiveDateTime),
    Instant(DateTime<chrono::FixedOffset>),
}

pub fn parse_time_argument(text: &str, field: &str) -> Result<TimeArgument, ToolFailure> {
    let text = text.trim();
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(TimeArgument::Instant(instant));
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(TimeArgument::Date(date));
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(TimeArgument::Local(local));
        }
    }
    Err(ToolFailure::invalid_arguments(format!(
        "{field} \"{text}\" is not a date or time. Use an RFC 3339 date-time such as 2026-03-09T09:00:00+01:00, a local date-time such as 2026-03-09T09:00:00 with time_zone, or a date such as 2026-03-09."
    )))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Start,
    End,
}

/// A range bound as Unix seconds; a date is its midnight, or for the end
/// the next midnight (so the date itself is included).
fn parse_bound(text: &str, zone: Tz, bound: Bound) -> Result<i64, ToolFailure> {
    let field = match bound {
        Bound::Start => "start",
        Bound::End => "end",
    };
    Ok(match parse_time_argument(text, field)? {
        TimeArgument::Instant(instant) => instant.timestamp(),
        TimeArgument::Local(local) => ical::local_to_moment(zone, local).timestamp(),
        TimeArgument::Date(date) => {
            let date = match bound {
                Bound::Start => date,
                Bound::End => date + TimeDelta::days(1),
            };
            ical::local_to_moment(zone, date.and_time(chrono::NaiveTime::MIN)).timestamp()
        }
    })
}

/// Checks a `calendar` argument and finds it; an unknown uri lists the
/// user's calendars so the model can pick one.
pub fn find_calendar<'a>(
    calendars: &'a [Calendar],
    uri: &str,
) -> Result<&'a Calendar, ToolFailure> {
    let uri = uri.trim().trim_matches('/');
    if uri.is_empty() || uri.contains('/') || uri == "." || uri == ".." {
        return Err(ToolFailure::invalid_arguments(format!(
            "calendar takes a calendar's uri, such as \"personal\", not a path. {}",
            list_calendars(calendars)
        )));
    }
    calendars.iter().find(|calendar| calendar.uri == uri).ok_or_else(|| {
        ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "The user has no calendar \"{uri}\". {} Call again with one of these uris, or without calendar.",
                list_calendars(calendars)
            ),
        )
    })
}

/// "Their calendars are: personal (Personal), …" for failure messages.
pub fn list_calendars(calendars: &[Calendar]) -> String {
    if calendars.is_empty() {
        return "The user has no calendars.".to_string();
    }
    let names: Vec<String> = calendars
        .iter()
        .map(|calendar| {
            let mut notes = Vec::new();
            if !calendar.has_events {
                notes.push("tasks only");
            }
            if !calendar.writable {
                notes.push("read-only");
            }
            let notes =
                if notes.is_empty() { String::new() } else { format!(", {}", notes.join(", ")) };
            format!("\"{}\" ({}{notes})", calendar.uri, calendar.name)
        })
        .collect();
    format!("Their calendars are: {}.", names.join(", "))
}

/// A calendar as the tools report it.
pub fn calendar_json(calendar: &Calendar, with_rights: bool) -> Value {
    let mut json = json!({"uri": calendar.uri, "name": calendar.name});
    if let Some(color) = &calendar.color {
        json["color"] = json!(color);
    }
    if with_rights {
        json["writable"] = json!(calendar.writable);
    }
    json
}

/// Start and end as shown: RFC 3339, or dates with the end inclusive.
pub fn shown_times(start: &EventTime, end: &EventTime) -> (String, String) {
    let end = match (start, end) {
        (EventTime::Date(first), EventTime::Date(after)) => {
            EventTime::Date((*after - TimeDelta::days(1)).max(*first))
        }
        (_, end) => *end,
    };
    (start.to_rfc3339(), end.to_rfc3339())
}

/// "Mon 2026-03-09 09:00–09:15 (Europe/Berlin, UTC+01:00)" or
/// "Tue 2026-03-10, all day".
pub fn describe_when(start: &EventTime, end: &EventTime) -> String {
    match (start, end) {
        (EventTime::Date(first), EventTime::Date(after)) => {
            let last = (*after - TimeDelta::days(1)).max(*first);
            if last == *first {
                format!("{}, all day", first.format("%a %Y-%m-%d"))
            } else {
                format!(
                    "{} to {}, all day",
                    first.format("%a %Y-%m-%d"),
                    last.format("%a %Y-%m-%d")
                )
            }
        }
        (EventTime::Moment(start), EventTime::Moment(end)) => {
            let end = end.with_timezone(&start.timezone());
            let zone = zone_name_or_offset(start);
            if end.date_naive() == start.date_naive() {
                format!("{}–{} ({zone})", start.format("%a %Y-%m-%d %H:%M"), end.format("%H:%M"))
            } else {
                format!(
                    "{} – {} ({zone})",
                    start.format("%a %Y-%m-%d %H:%M"),
                    end.format("%a %Y-%m-%d %H:%M")
                )
            }
        }
        (start, _) => start.to_rfc3339(),
    }
}

fn zone_name_or_offset(moment: &DateTime<Tz>) -> String {
    let offset = moment.fixed_offset().format("UTC%:z").to_string();
    match ical::zone_name(moment.timezone()) {
        Some(name) if name == "UTC" => "UTC".to_string(),
        Some(name) => format!("{name}, {offset}"),
        None => offset,
    }
}

#[allow(clippy::too_many_arguments)]
fn describe(
    start: &EventTime,
    end: &EventTime,
    summary: &str,
    location: Option<&str>,
    calendar: &Calendar,
    uid: &str,
    recurring: bool,
    status: Option<&str>,
) -> String {
    let mut line = format!(
        "- {}: {}",
        describe_when(start, end),
        if summary.is_empty() { "(untitled)" } else { summary }
    );
    if let Some(location) = location {
        line.push_str(&format!(" @ {location}"));
    }
    line.push_str(&format!(" — {} [{}]; uid {uid}", calendar.name, calendar.uri));
    if recurring {
        line.push_str("; recurring");
    }
    if status == Some("cancelled") {
        line.push_str("; CANCELLED");
    }
    line
}

fn shorten(text: &str, length_max: usize) -> String {
    match text.char_indices().nth(length_max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn format_utc(instant: i64) -> String {
    DateTime::from_timestamp(instant, 0).unwrap_or_default().format("%Y%m%dT%H%M%SZ").to_string()
}

/// An instant in RFC 3339, in `zone`.
fn format_instant(instant: i64, zone: Tz) -> String {
    let moment = DateTime::from_timestamp(instant, 0).unwrap_or_default().with_timezone(&zone);
    EventTime::Moment(moment).to_rfc3339()
}

fn zone_label(zone: Tz) -> String {
    ical::zone_name(zone).unwrap_or_else(|| "UTC".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_accept_instants_local_times_and_whole_days() {
        let berlin = parse_time_zone(Some("Europe/Berlin")).unwrap();
        let at = |text, bound| parse_bound(text, berlin, bound).unwrap();
        assert_eq!(at("2026-03-09T08:00:00Z", Bound::Start), 1_773_043_200);
        assert_eq!(at("2026-03-09T09:00:00", Bound::Start), 1_773_043_200);
        assert_eq!(at("2026-03-09T09:00", Bound::Start), 1_773_043_200);
        assert_eq!(at("2026-03-09", Bound::Start), 1_773_043_200 - 9 * 3600);
        assert_eq!(at("2026-03-09", Bound::End), 1_773_043_200 + 15 * 3600);
        for wrong in ["tomorrow", "2026-13-01", "09/03/2026", "2026-03-09 09:00"] {
            assert!(parse_bound(wrong, berlin, Bound::Start).is_err(), "{wrong}");
        }
        assert!(parse_time_zone(Some("Europe/Atlantis")).is_err());
        assert!(parse_time_zone(Some("CET")).is_ok());
    }

    #[test]
    fn all_day_ends_are_shown_inclusive() {
        let day = |text: &str| EventTime::Date(text.parse().unwrap());
        assert_eq!(
            shown_times(&day("2026-03-10"), &day("2026-03-11")),
            ("2026-03-10".to_string(), "2026-03-10".to_string())
        );
        assert_eq!(
            describe_when(&day("2026-03-10"), &day("2026-03-11")),
            "Tue 2026-03-10, all day"
        );
        assert_eq!(
            describe_when(&day("2026-03-10"), &day("2026-03-13")),
            "Tue 2026-03-10 to Thu 2026-03-12, all day"
        );
    }

    #[test]
    fn descriptions_are_cut_on_a_character_boundary() {
        assert_eq!(shorten("équipe", 3), "équ…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
