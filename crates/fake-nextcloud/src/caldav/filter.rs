//! The `cal:filter` of a calendar-query REPORT: parsed like sabre/dav's
//! XML deserialisers (same 400s), evaluated like its `CalendarQueryValidator`
//! — including its habit of ignoring a comp-filter's sub-filters when the
//! comp-filter carries a time range, which is why Nextcloud's "time range
//! AND text" searches behave like time-range-only searches — and pre-filtered
//! like Nextcloud's `calendarQuery` (component type and the denormalised
//! first/last occurrence), which decides what a time-range-only query finds.

use super::ical::{self, CalendarData, Instance, TimeRange, TimeRangeError};
use crate::xml::{self, Element};
use calcard::icalendar::{ICalendar, ICalendarComponent};

/// A text comparison (`cal:text-match`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    pub value: String,
    pub collation: Collation,
    pub negate: bool,
    pub match_type: MatchType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collation {
    AsciiCasemap,
    Octet,
    UnicodeCasemap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    Contains,
    Equals,
    StartsWith,
    EndsWith,
}

impl Collation {
    pub fn parse(name: &str) -> Result<Collation, String> {
        match name {
            "i;ascii-casemap" => Ok(Collation::AsciiCasemap),
            "i;octet" => Ok(Collation::Octet),
            "i;unicode-casemap" => Ok(Collation::UnicodeCasemap),
            other => Err(format!("Collation type: {other} is not supported")),
        }
    }
}

impl MatchType {
    pub fn parse(name: &str) -> Result<MatchType, String> {
        match name {
            "contains" => Ok(MatchType::Contains),
            "equals" => Ok(MatchType::Equals),
            "starts-with" => Ok(MatchType::StartsWith),
            "ends-with" => Ok(MatchType::EndsWith),
            other => Err(format!("Unknown match-type: {other}")),
        }
    }
}

impl TextMatch {
    /// sabre's `StringUtil::textMatch`, then the negation.
    pub fn matches(&self, haystack: &str) -> bool {
        let (haystack, needle) = match self.collation {
            Collation::AsciiCasemap => {
                (haystack.to_ascii_uppercase(), self.value.to_ascii_uppercase())
            }
            Collation::Octet => (haystack.to_string(), self.value.clone()),
            Collation::UnicodeCasemap => (haystack.to_uppercase(), self.value.to_uppercase()),
        };
        let found = match self.match_type {
            MatchType::Contains => haystack.contains(&needle),
            MatchType::Equals => haystack == needle,
            MatchType::StartsWith => haystack.starts_with(&needle),
            MatchType::EndsWith => haystack.ends_with(&needle),
        };
        found != self.negate
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompFilter {
    pub name: String,
    pub is_not_defined: bool,
    pub time_range: Option<TimeRange>,
    pub comp_filters: Vec<CompFilter>,
    pub prop_filters: Vec<PropFilter>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropFilter {
    pub name: String,
    pub is_not_defined: bool,
    pub time_range: Option<TimeRange>,
    pub text_match: Option<TextMatch>,
    pub param_filters: Vec<ParamFilter>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamFilter {
    pub name: String,
    pub is_not_defined: bool,
    pub text_match: Option<TextMatch>,
}

/// A filter that cannot be evaluated: 400 or 501, as sabre answers.
pub type FilterError = TimeRangeError;

/// Parses the top-level `cal:comp-filter` of a `cal:filter`.
pub fn parse_filter(filter: &Element) -> Result<CompFilter, String> {
    let mut top = None;
    for child in filter.children_named(xml::CALDAV, "comp-filter") {
        if top.is_some() {
            return Err("Only one top-level comp-filter may be defined".into());
        }
        top = Some(parse_comp_filter(child)?);
    }
    top.ok_or_else(|| {
        "The {urn:ietf:params:xml:ns:caldav}filter element is required for this request".into()
    })
}

fn name_of(element: &Element) -> Result<String, String> {
    element.attribute("name").map(str::to_string).ok_or_else(|| {
        format!("The {{{}}}{} element needs a name attribute", element.ns, element.local)
    })
}

fn parse_comp_filter(element: &Element) -> Result<CompFilter, String> {
    let name = name_of(element)?;
    let mut filter = CompFilter {
        name,
        is_not_defined: false,
        time_range: None,
        comp_filters: Vec::new(),
        prop_filters: Vec::new(),
    };
    for child in element.children().filter(|child| child.ns == xml::CALDAV) {
        match child.local.as_str() {
            "comp-filter" => filter.comp_filters.push(parse_comp_filter(child)?),
            "prop-filter" => filter.prop_filters.push(parse_prop_filter(child)?),
            "is-not-defined" => filter.is_not_defined = true,
            "time-range" => {
                if filter.name == "VCALENDAR" {
                    return Err(
                        "You cannot add time-range filters on the VCALENDAR component".into()
                    );
                }
                filter.time_range = Some(parse_time_range(child)?);
            }
            _ => {}
        }
    }
    Ok(filter)
}

fn parse_prop_filter(element: &Element) -> Result<PropFilter, String> {
    let name = name_of(element)?;
    let mut filter = PropFilter {
        name,
        is_not_defined: false,
        time_range: None,
        text_match: None,
        param_filters: Vec::new(),
    };
    for child in element.children().filter(|child| child.ns == xml::CALDAV) {
        match child.local.as_str() {
            "param-filter" => filter.param_filters.push(parse_param_filter(child)?),
            "is-not-defined" => filter.is_not_defined = true,
            "time-range" => filter.time_range = Some(parse_time_range(child)?),
            "text-match" => filter.text_match = Some(parse_text_match(child, "i;ascii-casemap")?),
            _ => {}
        }
    }
    Ok(filter)
}

fn parse_param_filter(element: &Element) -> Result<ParamFilter, String> {
    let name = name_of(element)?;
    let mut filter = ParamFilter { name, is_not_defined: false, text_match: None };
    for child in element.children().filter(|child| child.ns == xml::CALDAV) {
        match child.local.as_str() {
            "is-not-defined" => filter.is_not_defined = true,
            "text-match" => filter.text_match = Some(parse_text_match(child, "i;ascii-casemap")?),
            _ => {}
        }
    }
    Ok(filter)
}

/// Parses a `text-match`; CalDAV and CardDAV differ only in the default
/// collation.
pub fn parse_text_match(element: &Element, default_collation: &str) -> Result<TextMatch, String> {
    let collation = Collation::parse(element.attribute("collation").unwrap_or(default_collation))?;
    let match_type = MatchType::parse(element.attribute("match-type").unwrap_or("contains"))?;
    Ok(TextMatch {
        value: element.text(),
        collation,
        negate: element.attribute("negate-condition") == Some("yes"),
        match_type,
    })
}

/// Parses `start`/`end` attributes of a time range (or `cal:expand`).
pub fn parse_time_range(element: &Element) -> Result<TimeRange, String> {
    let bound = |name: &str| -> Result<Option<i64>, String> {
        match element.attribute(name) {
            None => Ok(None),
            Some(text) => ical::parse_utc(text).map(Some).ok_or_else(|| {
                format!("The supplied iCalendar datetime value is incorrect: {text}")
            }),
        }
    };
    let range = TimeRange { start: bound("start")?, end: bound("end")? };
    if let (Some(start), Some(end)) = (range.start, range.end)
        && end <= start
    {
        return Err("The end-date must be larger than the start-date".into());
    }
    Ok(range)
}

/// Whether an object passes the filter, with Nextcloud's database
/// pre-filter first.
pub fn object_matches(data: &CalendarData, filter: &CompFilter) -> Result<bool, FilterError> {
    let (component_type, time_range, needs_post_filter) = prefilter_plan(filter);
    // `componenttype = ?` in SQL: a type no object has finds nothing.
    if let Some(component_type) = component_type
        && !component_type.eq_ignore_ascii_case(data.kind.as_str())
    {
        return Ok(false);
    }
    if let Some(range) = time_range {
        // `lastoccurence > start AND firstoccurence < end`; NULL never matches.
        if let Some(start) = range.start
            && data.last_occurrence.is_none_or(|last| last <= start)
        {
            return Ok(false);
        }
        if let Some(end) = range.end
            && data.first_occurrence.is_none_or(|first| first >= end)
        {
            return Ok(false);
        }
    }
    if !needs_post_filter {
        return Ok(true);
    }
    let instances = std::cell::OnceCell::new();
    let instances_of_object = || instances.get_or_init(|| ical::instances(&data.ical)).clone();
    validate(&data.ical, filter, &instances_of_object)
}

/// What Nextcloud's `calendarQuery` does in SQL: the component type of the
/// first comp-filter, a VEVENT time range, and whether sabre's validator
/// still has to run.
fn prefilter_plan(filter: &CompFilter) -> (Option<String>, Option<TimeRange>, bool) {
    let mut needs_post_filter = !(filter.prop_filters.is_empty() && filter.comp_filters.is_empty());
    let mut component_type = None;
    let mut time_range = None;
    if let Some(first) = filter.comp_filters.first()
        && !first.is_not_defined
    {
        component_type = Some(first.name.clone());
        if filter.prop_filters.is_empty()
            && first.comp_filters.is_empty()
            && first.time_range.is_none()
            && first.prop_filters.is_empty()
        {
            needs_post_filter = false;
        }
        if first.name == "VEVENT"
            && let Some(range) = first.time_range
        {
            time_range = Some(range);
            if filter.prop_filters.is_empty()
                && first.comp_filters.is_empty()
                && first.prop_filters.is_empty()
                && (range.start.is_none() || range.end.is_none())
            {
                needs_post_filter = false;
            }
        }
    }
    (component_type, time_range, needs_post_filter)
}

/// sabre's `CalendarQueryValidator::validate`.
pub fn validate(
    ical: &ICalendar,
    filter: &CompFilter,
    instances_of_object: &dyn Fn() -> Vec<Instance>,
) -> Result<bool, FilterError> {
    let root = &ical.components[0];
    if !root.component_type.as_str().eq_ignore_ascii_case(&filter.name) {
        return Ok(false);
    }
    Ok(validate_comp_filters(ical, 0, &filter.comp_filters, instances_of_object)?
        && validate_prop_filters(ical, root, &filter.prop_filters)?)
}

fn named_children<'a>(
    ical: &'a ICalendar,
    parent: u32,
    name: &'a str,
) -> Vec<(u32, &'a ICalendarComponent)> {
    ical::children(ical, parent)
        .filter(|(_, child)| child.component_type.as_str().eq_ignore_ascii_case(name))
        .collect()
}

fn validate_comp_filters(
    ical: &ICalendar,
    parent: u32,
    filters: &[CompFilter],
    instances_of_object: &dyn Fn() -> Vec<Instance>,
) -> Result<bool, FilterError> {
    'filters: for filter in filters {
        let matching = named_children(ical, parent, &filter.name);
        let is_defined = !matching.is_empty();
        if filter.is_not_defined {
            if is_defined {
                return Ok(false);
            }
            continue;
        }
        if !is_defined {
            return Ok(false);
        }
        if let Some(range) = filter.time_range {
            // sabre checks only the time range here and skips the
            // sub-filters of this comp-filter altogether.
            for (id, _) in &matching {
                if ical::component_in_time_range(ical, *id, range, instances_of_object)? {
                    continue 'filters;
                }
            }
            return Ok(false);
        }
        if filter.comp_filters.is_empty() && filter.prop_filters.is_empty() {
            continue;
        }
        for (id, component) in &matching {
            if validate_comp_filters(ical, *id, &filter.comp_filters, instances_of_object)?
                && validate_prop_filters(ical, component, &filter.prop_filters)?
            {
                continue 'filters;
            }
        }
        return Ok(false);
    }
    Ok(true)
}

fn validate_prop_filters(
    ical: &ICalendar,
    component: &ICalendarComponent,
    filters: &[PropFilter],
) -> Result<bool, FilterError> {
    'filters: for filter in filters {
        let properties: Vec<_> = component
            .entries
            .iter()
            .filter(|entry| entry.name.as_str().eq_ignore_ascii_case(&filter.name))
            .collect();
        let is_defined = !properties.is_empty();
        if filter.is_not_defined {
            if is_defined {
                return Ok(false);
            }
            continue;
        }
        if !is_defined {
            return Ok(false);
        }
        if let Some(range) = filter.time_range {
            for property in &properties {
                if ical::property_in_time_range(property, ical, range)? {
                    continue 'filters;
                }
            }
            return Ok(false);
        }
        if filter.param_filters.is_empty() && filter.text_match.is_none() {
            continue;
        }
        for property in &properties {
            let params_hold = validate_param_filters(property, &filter.param_filters);
            let text_holds = filter
                .text_match
                .as_ref()
                .is_none_or(|text_match| text_match.matches(&ical::entry_text(property)));
            if params_hold && text_holds {
                continue 'filters;
            }
        }
        return Ok(false);
    }
    Ok(true)
}

fn validate_param_filters(
    property: &calcard::icalendar::ICalendarEntry,
    filters: &[ParamFilter],
) -> bool {
    for filter in filters {
        let values = ical::parameter_values(property, &filter.name);
        if filter.is_not_defined {
            if values.is_some() {
                return false;
            }
            continue;
        }
        let Some(values) = values else {
            return false;
        };
        let Some(text_match) = &filter.text_match else {
            continue;
        };
        if !values.iter().any(|value| text_match.matches(value)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caldav::ical::{ComponentKind, parse_calendar_data};

    const BOTH: &[ComponentKind] = &[ComponentKind::Event, ComponentKind::Todo];

    fn filter(xml_text: &str) -> CompFilter {
        let element = xml::parse(
            format!(r#"<c:filter xmlns:c="urn:ietf:params:xml:ns:caldav">{xml_text}</c:filter>"#)
                .as_bytes(),
        )
        .expect("xml");
        parse_filter(&element).expect("filter")
    }

    fn data(body: &str) -> CalendarData {
        parse_calendar_data(body, BOTH, 0).expect("valid")
    }

    fn event(props: &str) -> CalendarData {
        data(&format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:e\r\nDTSTAMP:20260101T000000Z\r\n{props}END:VEVENT\r\nEND:VCALENDAR\r\n"
        ))
    }

    #[test]
    fn component_type_filters_select_objects() {
        let meeting =
            event("DTSTART:20260107T100000Z\r\nSUMMARY:Meeting\r\nCATEGORIES:hands,feet\r\n");
        let events = filter(
            r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter>"#,
        );
        let todos = filter(
            r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter>"#,
        );
        let everything = filter(r#"<c:comp-filter name="VCALENDAR"/>"#);
        assert!(object_matches(&meeting, &events).unwrap());
        assert!(!object_matches(&meeting, &todos).unwrap());
        assert!(object_matches(&meeting, &everything).unwrap());
    }

    #[test]
    fn text_matches_use_the_collation() {
        let meeting = event(
            "DTSTART:20260107T100000Z\r\nSUMMARY:Budget Meeting\r\nCATEGORIES:hands,feet\r\n",
        );
        let query = |text_match: &str| {
            filter(&format!(
                r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY">{text_match}</c:prop-filter></c:comp-filter></c:comp-filter>"#
            ))
        };
        assert!(object_matches(&meeting, &query("<c:text-match>budget</c:text-match>")).unwrap());
        assert!(
            !object_matches(
                &meeting,
                &query(r#"<c:text-match collation="i;octet">budget</c:text-match>"#)
            )
            .unwrap()
        );
        assert!(
            object_matches(
                &meeting,
                &query(r#"<c:text-match negate-condition="yes">holiday</c:text-match>"#)
            )
            .unwrap()
        );
        let categories = filter(
            r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="CATEGORIES"><c:text-match>hands</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>"#,
        );
        assert!(object_matches(&meeting, &categories).unwrap());
    }

    #[test]
    fn a_time_range_hides_sibling_sub_filters_like_sabre() {
        let meeting =
            event("DTSTART:20260107T100000Z\r\nDTEND:20260107T110000Z\r\nSUMMARY:Meeting\r\n");
        let combined = filter(
            r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match>nothing like it</c:text-match></c:prop-filter><c:time-range start="20260101T000000Z" end="20260201T000000Z"/></c:comp-filter></c:comp-filter>"#,
        );
        assert!(object_matches(&meeting, &combined).unwrap(), "sabre ignores the text-match");
    }

    #[test]
    fn open_ranges_use_only_the_denormalised_occurrences() {
        let meeting = event("DTSTART:20260107T100000Z\r\nDURATION:PT1H\r\n");
        let from = |start: &str| {
            filter(&format!(
                r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="{start}"/></c:comp-filter></c:comp-filter>"#
            ))
        };
        assert!(object_matches(&meeting, &from("20260107T090000Z")).unwrap());
        // Nextcloud's DURATION bug: the event's stored end is its start.
        assert!(!object_matches(&meeting, &from("20260107T103000Z")).unwrap());
    }

    #[test]
    fn malformed_filters_are_refused() {
        let parse = |xml_text: &str| {
            let element = xml::parse(
                format!(
                    r#"<c:filter xmlns:c="urn:ietf:params:xml:ns:caldav">{xml_text}</c:filter>"#
                )
                .as_bytes(),
            )
            .expect("xml");
            parse_filter(&element)
        };
        assert!(parse("").is_err());
        assert!(parse(r#"<c:comp-filter name="VCALENDAR"><c:time-range start="20260101T000000Z"/></c:comp-filter>"#).is_err());
        assert!(parse(r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20260102T000000Z" end="20260101T000000Z"/></c:comp-filter></c:comp-filter>"#).is_err());
        assert!(parse(r#"<c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match collation="i;klingon">x</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter>"#).is_err());
    }
}
