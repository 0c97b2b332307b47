//! iCalendar semantics for CalDAV, on top of calcard's parser, writer and
//! recurrence expansion: validating a PUT body the way sabre/dav's CalDAV
//! plugin does, Nextcloud's denormalised first/last occurrence (its database
//! pre-filter, bugs included), RFC 4791 time-range tests with sabre/vobject's
//! rules, and `cal:expand` output shaped like `VCalendar::expand`.
//!
//! All instants are Unix seconds. Floating times and dates count as UTC, as
//! they do on a Nextcloud whose PHP default time zone is UTC.

use calcard::common::PartialDateTime;
use calcard::common::timezone::Tz;
use calcard::icalendar::timezone::TzResolver;
use calcard::icalendar::{
    ICalendar, ICalendarComponent, ICalendarComponentType, ICalendarEntry, ICalendarParameter,
    ICalendarParameterName, ICalendarParameterValue, ICalendarProperty, ICalendarRelated,
    ICalendarValue, ICalendarValueType,
};
use calcard::{Entry, Parser};

/// The PRODID sabre/vobject writes into objects it (re)serialises.
pub const PRODID: &str = "-//Sabre//Sabre VObject 4.5.6//EN";
/// sabre/vobject's `Settings::$maxRecurrences`: expansion stops here.
pub const RECURRENCE_INSTANCES_MAX: usize = 3500;
/// Nextcloud's `CalDavBackend::MAX_DATE` (2038-01-01): the last occurrence
/// of an endless series, so searches beyond it never find the series.
pub const MAX_DATE: i64 = 2_145_916_800;
/// The bounds sabre substitutes for an open time range (1900 and 3000).
pub const OPEN_START: i64 = -2_208_988_800;
pub const OPEN_END: i64 = 32_503_680_000;

const DAY_SECONDS: i64 = 86_400;
/// The deepest component nesting accepted; real objects need 3 (VCALENDAR,
/// VEVENT, VALARM) and copying for `cal:expand` recurses this deep.
const COMPONENT_DEPTH_MAX: usize = 8;

/// The three component types a calendar collection stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ComponentKind {
    Event,
    Todo,
    Journal,
}

impl ComponentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Event => "VEVENT",
            ComponentKind::Todo => "VTODO",
            ComponentKind::Journal => "VJOURNAL",
        }
    }

    pub fn parse(name: &str) -> Option<ComponentKind> {
        match name.to_ascii_uppercase().as_str() {
            "VEVENT" => Some(ComponentKind::Event),
            "VTODO" => Some(ComponentKind::Todo),
            "VJOURNAL" => Some(ComponentKind::Journal),
            _ => None,
        }
    }

    fn of(component_type: &ICalendarComponentType) -> Option<ComponentKind> {
        match component_type {
            ICalendarComponentType::VEvent => Some(ComponentKind::Event),
            ICalendarComponentType::VTodo => Some(ComponentKind::Todo),
            ICalendarComponentType::VJournal => Some(ComponentKind::Journal),
            _ => None,
        }
    }
}

/// A validated calendar object resource.
#[derive(Debug, Clone)]
pub struct CalendarData {
    /// What is stored and served: the body as sent, or re-serialised when
    /// validation repaired it.
    pub text: String,
    /// Validation changed the body (sabre then sends no ETag on the PUT).
    pub repaired: bool,
    pub ical: ICalendar,
    pub uid: String,
    pub kind: ComponentKind,
    /// Nextcloud's `firstoccurence` / `lastoccurence` columns.
    pub first_occurrence: Option<i64>,
    pub last_occurrence: Option<i64>,
}

/// Why a body is not an acceptable calendar object, in sabre's categories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidCalendarData {
    /// 415 "... Parse error: ..."
    Parse(String),
    /// 415: not a VCALENDAR.
    NotACalendar,
    /// 403 `cal:supported-calendar-component`.
    MissingComponent,
    /// 415 "Validation error in iCalendar: ..."
    Validation(String),
    /// 403: a recurring event whose every instance is excluded.
    NoInstances,
}

impl std::fmt::Display for InvalidCalendarData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InvalidCalendarData::Parse(message) => write!(f, "parse error: {message}"),
            InvalidCalendarData::NotACalendar => write!(f, "not a VCALENDAR"),
            InvalidCalendarData::MissingComponent => {
                write!(f, "no VEVENT, VTODO or VJOURNAL the calendar supports")
            }
            InvalidCalendarData::Validation(message) => write!(f, "{message}"),
            InvalidCalendarData::NoInstances => write!(f, "the recurring event has no instances"),
        }
    }
}

/// Parses, validates (repairing what sabre repairs) and denormalises a
/// calendar object body.
pub fn parse_calendar_data(
    text: &str,
    supported: &[ComponentKind],
    now: i64,
) -> Result<CalendarData, InvalidCalendarData> {
    let mut ical = parse_icalendar(text)?;
    let root = &ical.components[0];
    if root.component_type != ICalendarComponentType::VCalendar {
        return Err(InvalidCalendarData::NotACalendar);
    }
    let mut found_kind = None;
    let mut kinds = Vec::new();
    for (_, child) in children(&ical, 0) {
        if let Some(kind) = ComponentKind::of(&child.component_type) {
            found_kind = Some(kind);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    let Some(found_kind) = found_kind else {
        return Err(InvalidCalendarData::MissingComponent);
    };
    if !supported.contains(&found_kind) {
        return Err(InvalidCalendarData::MissingComponent);
    }
    if root.properties(&ICalendarProperty::Version).count() != 1 {
        return Err(InvalidCalendarData::Validation(
            "VERSION MUST appear exactly once in a VCALENDAR component".into(),
        ));
    }
    if root.has_property(&ICalendarProperty::Method) {
        return Err(InvalidCalendarData::Validation(
            "A calendar object on a CalDAV server MUST NOT have a METHOD property.".into(),
        ));
    }
    if kinds.len() > 1 {
        return Err(InvalidCalendarData::Validation(
            "A calendar object on a CalDAV server may only have 1 type of component (VEVENT, VTODO or VJOURNAL)."
                .into(),
        ));
    }
    let mut uids: Vec<String> = Vec::new();
    for (_, child) in children(&ical, 0) {
        if ComponentKind::of(&child.component_type).is_some()
            && let Some(uid) = child.uid()
            && !uids.iter().any(|known| known == uid)
        {
            uids.push(uid.to_string());
        }
    }
    if uids.len() > 1 {
        return Err(InvalidCalendarData::Validation(
            "A calendar object on a CalDAV server may only have components with the same UID."
                .into(),
        ));
    }
    for (_, child) in children(&ical, 0) {
        if child.component_type == ICalendarComponentType::VEvent
            && !child.has_property(&ICalendarProperty::Dtstart)
        {
            return Err(InvalidCalendarData::Validation(
                "DTSTART MUST appear exactly once in a VEVENT component".into(),
            ));
        }
    }

    // sabre validates with REPAIR unless the client sent
    // `Prefer: handling=strict`: a missing PRODID, UID or DTSTAMP is added.
    let mut repaired = false;
    if !ical.components[0].has_property(&ICalendarProperty::Prodid) {
        ical.components[0].entries.push(text_entry(ICalendarProperty::Prodid, PRODID));
        repaired = true;
    }
    let uid = match uids.first() {
        Some(uid) => uid.clone(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    let child_ids: Vec<u32> = ical.components[0].component_ids.clone();
    for child_id in child_ids {
        let child = &mut ical.components[child_id as usize];
        if ComponentKind::of(&child.component_type).is_none() {
            continue;
        }
        if !child.has_property(&ICalendarProperty::Uid) {
            child.entries.push(text_entry(ICalendarProperty::Uid, &uid));
            repaired = true;
        }
        if !child.has_property(&ICalendarProperty::Dtstamp) {
            child.entries.push(
                ICalendarEntry::new(ICalendarProperty::Dtstamp)
                    .with_value(PartialDateTime::from_utc_timestamp(now)),
            );
            repaired = true;
        }
    }
    let text = if repaired { serialize(&ical) } else { text.to_string() };
    let (first_occurrence, last_occurrence) = denormalized_occurrences(&ical)?;
    Ok(CalendarData {
        text,
        repaired,
        ical,
        uid,
        kind: found_kind,
        first_occurrence,
        last_occurrence,
    })
}

/// Parses exactly one iCalendar (or other) object, refusing trailing data.
fn parse_icalendar(text: &str) -> Result<ICalendar, InvalidCalendarData> {
    let mut parser = Parser::new(text);
    let ical = match parser.entry() {
        Entry::ICalendar(ical) => ical,
        Entry::VCard(_) => return Err(InvalidCalendarData::NotACalendar),
        Entry::InvalidLine(line) => {
            return Err(InvalidCalendarData::Parse(format!("invalid line {:?}", truncate(&line))));
        }
        Entry::UnexpectedComponentEnd { expected, found } => {
            return Err(InvalidCalendarData::Parse(format!(
                "expected END:{} but found END:{}",
                expected.as_str(),
                found.as_str()
            )));
        }
        Entry::UnterminatedComponent(name) => {
            return Err(InvalidCalendarData::Parse(format!("missing END:{name}")));
        }
        Entry::TooManyComponents => {
            return Err(InvalidCalendarData::Parse("too many components".into()));
        }
        Entry::Eof => {
            return Err(InvalidCalendarData::Parse("the body holds no iCalendar object".into()));
        }
        _ => return Err(InvalidCalendarData::Parse("unexpected content".into())),
    };
    if !matches!(parser.entry(), Entry::Eof) {
        return Err(InvalidCalendarData::Parse("more than one object in the body".into()));
    }
    if nesting_depth(&ical) > COMPONENT_DEPTH_MAX {
        return Err(InvalidCalendarData::Parse("components are nested too deeply".into()));
    }
    // calcard accepts a body that stops before its END line; sabre/vobject
    // does not.
    let end = format!("END:{}", ical.components[0].component_type.as_str());
    if !ends_with_line(text, &end) {
        return Err(InvalidCalendarData::Parse(format!("the body does not end with {end}")));
    }
    Ok(ical)
}

/// How deeply components nest (VCALENDAR > VEVENT > VALARM is 3), walked
/// without recursion; cycles cannot occur as the parser numbers children
/// after their parents.
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

/// Whether the last non-empty line of a text is `line` (case-insensitive).
pub fn ends_with_line(text: &str, line: &str) -> bool {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|candidate| !candidate.is_empty())
        .is_some_and(|last| last.eq_ignore_ascii_case(line))
}

fn truncate(text: &str) -> String {
    text.chars().take(60).collect()
}

fn text_entry(name: ICalendarProperty, value: &str) -> ICalendarEntry {
    ICalendarEntry::new(name).with_value(value)
}

/// Writes an iCalendar object (CRLF lines, folded).
pub fn serialize(ical: &ICalendar) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = ical.write_to(&mut out);
    out
}

/// The direct children of a component, with their ids.
pub fn children(ical: &ICalendar, id: u32) -> impl Iterator<Item = (u32, &ICalendarComponent)> {
    let ids: &[u32] = ical
        .components
        .get(id as usize)
        .map(|component| component.component_ids.as_slice())
        .unwrap_or(&[]);
    ids.iter().filter_map(move |child_id| {
        ical.components.get(*child_id as usize).map(|child| (*child_id, child))
    })
}

/// The parent of a component, if it has one.
fn parent_of(ical: &ICalendar, id: u32) -> Option<u32> {
    ical.components
        .iter()
        .position(|component| component.component_ids.contains(&id))
        .map(|index| index as u32)
}

/// Time zones of the object, with UTC for floating times.
pub fn resolver(ical: &ICalendar) -> TzResolver<&str> {
    ical.build_tz_resolver().with_default(Tz::UTC)
}

/// A date or date-time value as an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    pub instant: i64,
    /// `false` for DATE values (all-day).
    pub has_time: bool,
}

/// The first value of a date/date-time property as an instant.
pub fn entry_moment(entry: &ICalendarEntry, resolver: &TzResolver<&str>) -> Option<Moment> {
    let Some(ICalendarValue::PartialDateTime(value)) = entry.values.first() else {
        return None;
    };
    moment_of(value, entry.tz_id(), resolver)
}

fn moment_of(
    value: &PartialDateTime,
    tz_id: Option<&str>,
    resolver: &TzResolver<&str>,
) -> Option<Moment> {
    let result = value.to_date_time()?;
    let has_time = value.has_time();
    let tz = if has_time { resolver.resolve_or_default(tz_id) } else { Tz::UTC };
    let instant = result.to_date_time_with_tz(tz)?.timestamp();
    Some(Moment { instant, has_time })
}

fn property_moment(
    component: &ICalendarComponent,
    name: &ICalendarProperty,
    resolver: &TzResolver<&str>,
) -> Option<Moment> {
    component.property(name).and_then(|entry| entry_moment(entry, resolver))
}

fn property_duration(component: &ICalendarComponent, name: &ICalendarProperty) -> Option<i64> {
    match component.property(name)?.values.first()? {
        ICalendarValue::Duration(duration) => Some(duration.as_seconds()),
        _ => None,
    }
}

/// How long each instance of an event lasts, as sabre's EventIterator
/// computes it: DTEND - DTSTART, else DURATION, else a day for all-day
/// events, else nothing.
fn event_duration(component: &ICalendarComponent, resolver: &TzResolver<&str>) -> i64 {
    let start = property_moment(component, &ICalendarProperty::Dtstart, resolver);
    if let (Some(start), Some(end)) =
        (start, property_moment(component, &ICalendarProperty::Dtend, resolver))
    {
        return end.instant - start.instant;
    }
    if let Some(duration) = property_duration(component, &ICalendarProperty::Duration) {
        return duration;
    }
    match start {
        Some(start) if !start.has_time => DAY_SECONDS,
        _ => 0,
    }
}

/// One occurrence of a (possibly recurring) component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instance {
    /// The component this occurrence comes from: the master, or the
    /// RECURRENCE-ID override that replaced it.
    pub comp_id: u32,
    pub start: i64,
    pub end: i64,
    pub start_has_time: bool,
}

/// Every occurrence of every VEVENT/VTODO/VJOURNAL of the object, sorted by
/// start, with EXDATEs dropped and overridden instances replaced.
///
/// calcard pairs an override with its master only when their SEQUENCE
/// values agree; clients raise SEQUENCE on overrides, so SEQUENCE is dropped
/// from the copy that is expanded.
pub fn instances(ical: &ICalendar) -> Vec<Instance> {
    let mut unsequenced = ical.clone();
    for component in &mut unsequenced.components {
        component.entries.retain(|entry| entry.name != ICalendarProperty::Sequence);
    }
    let resolver = resolver(ical);
    let expansion = unsequenced.expand_dates(Tz::UTC, RECURRENCE_INSTANCES_MAX);
    let mut instances: Vec<Instance> = expansion
        .events
        .iter()
        .filter_map(|event| {
            let component = ical.components.get(event.comp_id as usize)?;
            let start = event.start.timestamp();
            let has_time = property_moment(component, &ICalendarProperty::Dtstart, &resolver)
                .map(|moment| moment.has_time)
                .unwrap_or(true);
            Some(Instance {
                comp_id: event.comp_id,
                start,
                end: start + event_duration(component, &resolver),
                start_has_time: has_time,
            })
        })
        .collect();
    instances.sort_by_key(|instance| (instance.start, instance.comp_id));
    instances
}

fn is_recurring_master(component: &ICalendarComponent) -> bool {
    component.has_property(&ICalendarProperty::Rrule)
}

fn is_infinite(component: &ICalendarComponent) -> bool {
    component.properties(&ICalendarProperty::Rrule).any(|entry| {
        matches!(entry.values.first(), Some(ICalendarValue::RecurrenceRule(rule)) if rule.count.is_none() && rule.until.is_none())
    })
}

/// Nextcloud's `getDenormalizedData`: the first and last occurrence it
/// stores for the database pre-filter of time-range queries.
///
/// Reproduces a Nextcloud bug on purpose: for a single event with DURATION
/// and no DTEND, `clone DTSTART->getDateTime()` is immutable, so the `add()`
/// is lost and the last occurrence is the start. Real clients meet that bug
/// (a time range starting inside such an event misses it), so the fake does.
fn denormalized_occurrences(
    ical: &ICalendar,
) -> Result<(Option<i64>, Option<i64>), InvalidCalendarData> {
    let resolver = resolver(ical);
    let events: Vec<(u32, &ICalendarComponent)> = children(ical, 0)
        .filter(|(_, child)| child.component_type == ICalendarComponentType::VEvent)
        .collect();
    let has_start = events.iter().any(|(_, event)| event.has_property(&ICalendarProperty::Dtstart));
    if !has_start {
        return Ok((None, None));
    }
    let (_, first_event) = events[0];
    let (first, last) = if !is_recurring_master(first_event) && events.len() == 1 {
        let Some(start) = property_moment(first_event, &ICalendarProperty::Dtstart, &resolver)
        else {
            return Ok((None, None));
        };
        let last =
            if let Some(end) = property_moment(first_event, &ICalendarProperty::Dtend, &resolver) {
                end.instant
            } else if first_event.has_property(&ICalendarProperty::Duration) {
                start.instant
            } else if !start.has_time {
                start.instant + DAY_SECONDS
            } else {
                start.instant
            };
        (start.instant, last)
    } else {
        let occurrences: Vec<Instance> = instances(ical)
            .into_iter()
            .filter(|instance| {
                ical.components[instance.comp_id as usize].component_type
                    == ICalendarComponentType::VEvent
            })
            .collect();
        let Some(first) = occurrences.first() else {
            return Err(InvalidCalendarData::NoInstances);
        };
        let last = if events.iter().any(|(_, event)| is_infinite(event)) {
            MAX_DATE
        } else {
            let mut last = first.end;
            for occurrence in &occurrences {
                last = occurrence.end;
                if last >= MAX_DATE {
                    break;
                }
            }
            last
        };
        (first.start, last)
    };
    Ok((Some(first.max(0)), Some(last.max(0))))
}

/// A `cal:time-range`: open bounds are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub start: Option<i64>,
    pub end: Option<i64>,
}

impl TimeRange {
    fn bounds(self) -> (i64, i64) {
        (self.start.unwrap_or(OPEN_START), self.end.unwrap_or(OPEN_END))
    }
}

/// Why a time-range filter cannot be evaluated (sabre answers these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeRangeError {
    /// 400: no time-range filters on this component or property.
    BadRequest(String),
    /// 501: VFREEBUSY time ranges.
    NotImplemented(String),
}

/// Whether a component overlaps a time range (RFC 4791 9.9, with
/// sabre/vobject's `isInTimeRange` of each component type).
pub fn component_in_time_range(
    ical: &ICalendar,
    comp_id: u32,
    range: TimeRange,
    instances_of_object: &dyn Fn() -> Vec<Instance>,
) -> Result<bool, TimeRangeError> {
    let resolver = resolver(ical);
    let component = &ical.components[comp_id as usize];
    let (start, end) = range.bounds();
    match &component.component_type {
        ICalendarComponentType::VEvent => {
            if is_recurring_master(component) {
                return Ok(instances_of_object()
                    .iter()
                    .filter(|instance| instance.comp_id == comp_id)
                    .any(|instance| instance.start < end && instance.end > start));
            }
            let Some(event_start) =
                property_moment(component, &ICalendarProperty::Dtstart, &resolver)
            else {
                return Ok(false);
            };
            let event_end = if let Some(event_end) =
                property_moment(component, &ICalendarProperty::Dtend, &resolver)
            {
                event_end.instant
            } else if let Some(duration) =
                property_duration(component, &ICalendarProperty::Duration)
            {
                event_start.instant + duration
            } else if !event_start.has_time {
                event_start.instant + DAY_SECONDS
            } else {
                event_start.instant
            };
            Ok(start < event_end && end > event_start.instant)
        }
        ICalendarComponentType::VTodo => Ok(todo_in_time_range(component, &resolver, start, end)),
        ICalendarComponentType::VJournal => {
            let Some(journal_start) =
                property_moment(component, &ICalendarProperty::Dtstart, &resolver)
            else {
                return Ok(false);
            };
            let effective_end = if journal_start.has_time {
                journal_start.instant
            } else {
                journal_start.instant + DAY_SECONDS
            };
            Ok(start <= effective_end && end > journal_start.instant)
        }
        ICalendarComponentType::VAlarm => {
            Ok(alarm_in_time_range(ical, comp_id, start, end, instances_of_object))
        }
        ICalendarComponentType::VFreebusy => Err(TimeRangeError::NotImplemented(
            "time-range filters are currently not supported on VFREEBUSY components".into(),
        )),
        other => Err(TimeRangeError::BadRequest(format!(
            "You cannot create a time-range filter on a {} component",
            other.as_str()
        ))),
    }
}

/// sabre/vobject's `VTodo::isInTimeRange`.
fn todo_in_time_range(
    todo: &ICalendarComponent,
    resolver: &TzResolver<&str>,
    start: i64,
    end: i64,
) -> bool {
    let dtstart =
        property_moment(todo, &ICalendarProperty::Dtstart, resolver).map(|moment| moment.instant);
    let duration = property_duration(todo, &ICalendarProperty::Duration);
    let due = property_moment(todo, &ICalendarProperty::Due, resolver).map(|moment| moment.instant);
    let completed =
        property_moment(todo, &ICalendarProperty::Completed, resolver).map(|moment| moment.instant);
    let created =
        property_moment(todo, &ICalendarProperty::Created, resolver).map(|moment| moment.instant);
    if let Some(dtstart) = dtstart {
        if let Some(duration) = duration {
            let effective_end = dtstart + duration;
            return start <= effective_end && end > dtstart;
        }
        if let Some(due) = due {
            return (start < due || start <= dtstart) && (end > dtstart || end >= due);
        }
        return start <= dtstart && end > dtstart;
    }
    if let Some(due) = due {
        return start < due && end >= due;
    }
    match (completed, created) {
        (Some(completed), Some(created)) => {
            (start <= created || start <= completed) && (end >= created || end >= completed)
        }
        (Some(completed), None) => start <= completed && end >= completed,
        (None, Some(created)) => end > created,
        (None, None) => true,
    }
}

/// sabre/vobject's `VAlarm::isInTimeRange`, over every instance when the
/// alarm belongs to a recurring event.
fn alarm_in_time_range(
    ical: &ICalendar,
    alarm_id: u32,
    start: i64,
    end: i64,
    instances_of_object: &dyn Fn() -> Vec<Instance>,
) -> bool {
    let resolver = resolver(ical);
    let alarm = &ical.components[alarm_id as usize];
    let Some(parent_id) = parent_of(ical, alarm_id) else {
        return false;
    };
    let parent = &ical.components[parent_id as usize];
    let Some(trigger) = alarm.property(&ICalendarProperty::Trigger) else {
        return false;
    };
    let repetitions = alarm_repetitions(alarm);
    let fires_in_range = |trigger_time: i64| {
        repetitions.iter().any(|offset| {
            let time = trigger_time + offset;
            start <= time && end > time
        })
    };
    match trigger.values.first() {
        Some(ICalendarValue::PartialDateTime(_)) => {
            entry_moment(trigger, &resolver).is_some_and(|moment| fires_in_range(moment.instant))
        }
        Some(ICalendarValue::Duration(offset)) => {
            let offset = offset.as_seconds();
            let related_end = trigger.params.iter().any(|param| {
                param.name == ICalendarParameterName::Related
                    && matches!(
                        param.value,
                        ICalendarParameterValue::Related(ICalendarRelated::End)
                    )
            });
            if parent.component_type == ICalendarComponentType::VEvent
                && is_recurring_master(parent)
            {
                return instances_of_object()
                    .iter()
                    .filter(|instance| instance.comp_id == parent_id)
                    .any(|instance| {
                        fires_in_range(
                            if related_end { instance.end } else { instance.start } + offset,
                        )
                    });
            }
            let anchor = if parent.component_type == ICalendarComponentType::VTodo {
                property_moment(parent, &ICalendarProperty::Due, &resolver)
                    .map(|moment| moment.instant)
            } else if related_end {
                let dtstart = property_moment(parent, &ICalendarProperty::Dtstart, &resolver);
                property_moment(parent, &ICalendarProperty::Dtend, &resolver)
                    .map(|moment| moment.instant)
                    .or_else(|| {
                        let duration =
                            property_duration(parent, &ICalendarProperty::Duration).unwrap_or(0);
                        dtstart.map(|moment| moment.instant + duration)
                    })
            } else {
                property_moment(parent, &ICalendarProperty::Dtstart, &resolver)
                    .map(|moment| moment.instant)
            };
            anchor.is_some_and(|anchor| fires_in_range(anchor + offset))
        }
        _ => false,
    }
}

/// Offsets (from the trigger) at which an alarm fires, REPEAT included.
fn alarm_repetitions(alarm: &ICalendarComponent) -> Vec<i64> {
    let Some(duration) = property_duration(alarm, &ICalendarProperty::Duration) else {
        return vec![0];
    };
    let repeat =
        match alarm.property(&ICalendarProperty::Repeat).and_then(|entry| entry.values.first()) {
            Some(ICalendarValue::Integer(repeat)) if *repeat > 0 => (*repeat).min(1000),
            _ => 1,
        };
    (0..repeat).map(|index| index * duration).collect()
}

/// Whether a date property (DTSTART, DUE, ...) lies in a time range, as
/// sabre's validator tests property time ranges.
pub fn property_in_time_range(
    entry: &ICalendarEntry,
    ical: &ICalendar,
    range: TimeRange,
) -> Result<bool, TimeRangeError> {
    let allowed = matches!(
        entry.name,
        ICalendarProperty::Completed
            | ICalendarProperty::Created
            | ICalendarProperty::Dtend
            | ICalendarProperty::Dtstamp
            | ICalendarProperty::Dtstart
            | ICalendarProperty::Due
            | ICalendarProperty::LastModified
    );
    if !allowed {
        return Err(TimeRangeError::BadRequest(format!(
            "You cannot create a time-range filter on a {} component",
            entry.name.as_str()
        )));
    }
    let (start, end) = range.bounds();
    Ok(entry_moment(entry, &resolver(ical))
        .is_some_and(|moment| start <= moment.instant && end >= moment.instant))
}

/// A property's value as sabre/vobject's `getValue()` gives it to text
/// matching: text values unescaped (several joined with commas), anything
/// else as written.
pub fn entry_text(entry: &ICalendarEntry) -> String {
    let all_text = entry.values.iter().all(|value| matches!(value, ICalendarValue::Text(_)));
    if all_text {
        return entry
            .values
            .iter()
            .filter_map(|value| match value {
                ICalendarValue::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(",");
    }
    let mut written = String::new();
    let _ = entry.write_to(&mut written);
    let unfolded = written.replace("\r\n ", "").replace("\r\n", "");
    raw_value(&unfolded).to_string()
}

/// The part of a content line after the first colon outside quotes.
fn raw_value(line: &str) -> &str {
    let mut quoted = false;
    for (index, character) in line.char_indices() {
        match character {
            '"' => quoted = !quoted,
            ':' if !quoted => return &line[index + 1..],
            _ => {}
        }
    }
    ""
}

/// The values of a parameter on a property (all parts), as text.
pub fn parameter_values(entry: &ICalendarEntry, name: &str) -> Option<Vec<String>> {
    values_named(&entry.params, name, |param| param.name.as_str(), parameter_text)
}

/// The text of each of `params` named `name` (case-insensitive), or `None`
/// where none is: how a param-filter reads a parameter, in iCalendar and
/// vCard alike.
pub fn values_named<P>(
    params: &[P],
    name: &str,
    name_of: impl Fn(&P) -> &str,
    text: impl Fn(&P) -> String,
) -> Option<Vec<String>> {
    let values: Vec<String> =
        params.iter().filter(|param| name_of(param).eq_ignore_ascii_case(name)).map(text).collect();
    if values.is_empty() { None } else { Some(values) }
}

fn parameter_text(param: &ICalendarParameter) -> String {
    match &param.value {
        ICalendarParameterValue::Integer(value) => value.to_string(),
        ICalendarParameterValue::Duration(value) => value.to_string(),
        other => other.as_text().unwrap_or_default().to_string(),
    }
}

/// The expanded form of an object for `cal:expand` (sabre/vobject's
/// `VCalendar::expand`): every VEVENT instance overlapping the range as its
/// own component with a RECURRENCE-ID, all date-times in UTC, VTIMEZONEs and
/// non-VEVENT components dropped.
pub fn expand(ical: &ICalendar, start: i64, end: i64) -> String {
    let resolver = resolver(ical);
    let mut out =
        ICalendar { components: vec![ICalendarComponent::new(ICalendarComponentType::VCalendar)] };
    let source_root = &ical.components[0];
    out.components[0].entries.push(text_entry(ICalendarProperty::Prodid, PRODID));
    if !source_root.has_property(&ICalendarProperty::Calscale) {
        out.components[0].entries.push(text_entry(ICalendarProperty::Calscale, "GREGORIAN"));
    }
    for entry in &source_root.entries {
        if entry.name != ICalendarProperty::Prodid {
            out.components[0].entries.push(entry.clone());
        }
    }

    let mut recurring_ids = Vec::new();
    for (child_id, child) in children(ical, 0) {
        if child.component_type != ICalendarComponentType::VEvent {
            continue;
        }
        let recurring = child.has_property(&ICalendarProperty::RecurrenceId)
            || child.has_property(&ICalendarProperty::Rrule)
            || child.has_property(&ICalendarProperty::Rdate);
        if recurring {
            recurring_ids.push(child_id);
            continue;
        }
        let in_range = component_in_time_range(
            ical,
            child_id,
            TimeRange { start: Some(start), end: Some(end) },
            &Vec::new,
        )
        .unwrap_or(false);
        if in_range {
            let new_id = copy_tree(&mut out, ical, child_id, &resolver, None);
            out.components[0].component_ids.push(new_id);
        }
    }
    if !recurring_ids.is_empty() {
        for instance in instances(ical) {
            if !recurring_ids.contains(&instance.comp_id) {
                continue;
            }
            if !(instance.start < end && instance.end > start) {
                continue;
            }
            let component = &ical.components[instance.comp_id as usize];
            let occurrence = if is_recurring_master(component)
                || component.has_property(&ICalendarProperty::Rdate)
            {
                Some(instance)
            } else {
                None
            };
            let new_id = copy_tree(&mut out, ical, instance.comp_id, &resolver, occurrence);
            out.components[0].component_ids.push(new_id);
        }
    }
    serialize(&out)
}

/// Copies a component and its subcomponents into `out` with every
/// date-time in UTC; for a master's occurrence, the recurrence properties
/// are replaced by this occurrence's DTSTART/DTEND/RECURRENCE-ID.
fn copy_tree(
    out: &mut ICalendar,
    source: &ICalendar,
    comp_id: u32,
    resolver: &TzResolver<&str>,
    occurrence: Option<Instance>,
) -> u32 {
    let original = &source.components[comp_id as usize];
    let mut component = ICalendarComponent::new(original.component_type.clone());
    for entry in &original.entries {
        if occurrence.is_some()
            && matches!(
                entry.name,
                ICalendarProperty::Rrule
                    | ICalendarProperty::Exdate
                    | ICalendarProperty::Rdate
                    | ICalendarProperty::Exrule
                    | ICalendarProperty::RecurrenceId
            )
        {
            continue;
        }
        let mut entry = entry.clone();
        if let Some(occurrence) = occurrence {
            match entry.name {
                ICalendarProperty::Dtstart => {
                    set_moment(&mut entry, occurrence.start, occurrence.start_has_time)
                }
                ICalendarProperty::Dtend => {
                    let has_time =
                        entry_moment(&entry, resolver).is_none_or(|moment| moment.has_time);
                    set_moment(&mut entry, occurrence.end, has_time);
                }
                _ => to_utc(&mut entry, resolver),
            }
        } else {
            to_utc(&mut entry, resolver);
        }
        component.entries.push(entry);
    }
    if let Some(occurrence) = occurrence {
        let mut recurrence_id = ICalendarEntry::new(ICalendarProperty::RecurrenceId);
        set_moment(&mut recurrence_id, occurrence.start, occurrence.start_has_time);
        component.entries.push(recurrence_id);
    }
    out.components.push(component);
    let new_id = (out.components.len() - 1) as u32;
    let child_ids: Vec<u32> = original.component_ids.clone();
    for child_id in child_ids {
        let new_child = copy_tree(out, source, child_id, resolver, None);
        out.components[new_id as usize].component_ids.push(new_child);
    }
    new_id
}

/// Sets a date(-time) property to an instant: UTC date-time, or a DATE.
fn set_moment(entry: &mut ICalendarEntry, instant: i64, has_time: bool) {
    entry.params.retain(|param| {
        param.name != ICalendarParameterName::Tzid && param.name != ICalendarParameterName::Value
    });
    if has_time {
        entry.values = vec![ICalendarValue::PartialDateTime(Box::new(
            PartialDateTime::from_utc_timestamp(instant),
        ))];
    } else {
        entry.params.push(ICalendarParameter::value(ICalendarValueType::Date));
        entry.values = vec![ICalendarValue::PartialDateTime(Box::new(
            PartialDateTime::from_date_timestamp(instant),
        ))];
    }
}

/// Rewrites the date-time values of a property in UTC (dates stay dates).
fn to_utc(entry: &mut ICalendarEntry, resolver: &TzResolver<&str>) {
    let tz_id = entry.tz_id().map(str::to_string);
    let mut changed = false;
    for value in &mut entry.values {
        if let ICalendarValue::PartialDateTime(date_time) = value
            && date_time.has_time()
            && let Some(moment) = moment_of(date_time, tz_id.as_deref(), resolver)
        {
            **date_time = PartialDateTime::from_utc_timestamp(moment.instant);
            changed = true;
        }
    }
    if changed {
        entry.params.retain(|param| param.name != ICalendarParameterName::Tzid);
    }
}

/// A busy period for free-busy: (start, end, FBTYPE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusyPeriod {
    pub start: i64,
    pub end: i64,
    pub busy_type: &'static str,
}

/// The busy periods of an object's events inside a range, as sabre's
/// FreeBusyGenerator computes them: transparent and cancelled events do not
/// count, tentative ones are BUSY-TENTATIVE.
pub fn busy_periods(ical: &ICalendar, start: i64, end: i64) -> Vec<BusyPeriod> {
    let mut periods = Vec::new();
    for instance in instances(ical) {
        let component = &ical.components[instance.comp_id as usize];
        if component.component_type != ICalendarComponentType::VEvent {
            continue;
        }
        let transparent = component
            .property(&ICalendarProperty::Transp)
            .map(entry_text)
            .is_some_and(|value| value.eq_ignore_ascii_case("TRANSPARENT"));
        let status =
            component.property(&ICalendarProperty::Status).map(entry_text).unwrap_or_default();
        if transparent || status.eq_ignore_ascii_case("CANCELLED") {
            continue;
        }
        if instance.start < end && instance.end > start {
            let busy_type =
                if status.eq_ignore_ascii_case("TENTATIVE") { "BUSY-TENTATIVE" } else { "BUSY" };
            periods.push(BusyPeriod {
                start: instance.start.max(start),
                end: instance.end.min(end),
                busy_type,
            });
        }
    }
    periods
}

/// Formats an instant as an iCalendar UTC date-time (`20260309T080000Z`).
pub fn format_utc(instant: i64) -> String {
    chrono::DateTime::from_timestamp(instant, 0)
        .unwrap_or_default()
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// Parses a CalDAV UTC date-time attribute (`20260301T000000Z`); a value
/// without `Z` counts as UTC too, as sabre's default time zone is UTC.
pub fn parse_utc(text: &str) -> Option<i64> {
    let text = text.trim();
    let naive = text.strip_suffix('Z').unwrap_or(text);
    chrono::NaiveDateTime::parse_from_str(naive, "%Y%m%dT%H%M%S")
        .ok()
        .map(|date_time| date_time.and_utc().timestamp())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(naive, "%Y%m%d")
                .ok()
                .and_then(|date| date.and_hms_opt(0, 0, 0))
                .map(|date_time| date_time.and_utc().timestamp())
        })
}

#[cfg(test)]
mod tests;
