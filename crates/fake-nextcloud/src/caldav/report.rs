//! CalDAV REPORTs on a calendar or one of its objects: calendar-query
//! (with `cal:expand`), calendar-multiget, sync-collection and
//! free-busy-query, answered the way sabre/dav's CalDAV and Sync plugins do.

use super::filter::{self, CompFilter};
use super::ical::{self, TimeRange, TimeRangeError};
use super::webdav::{self, PropertyRequest, PropertySet};
use super::{CalDav, CalendarObject, Caller};
use crate::dav::collection;
use crate::dav::{DavError, DavRequest, Depth};
use crate::world::World;
use crate::xml::{self, Element};
use axum::response::{IntoResponse, Response};
use http::StatusCode;

/// A REPORT on a calendar (`object` = `None`) or on one object in it.
pub(super) fn calendar_report(
    world: &World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object: Option<&str>,
) -> Result<Response, DavError> {
    let root = webdav::parse_body(&request.body)?;

    match (root.ns.as_str(), root.local.as_str()) {
        (xml::CALDAV, "calendar-query") => {
            calendar_query(world, request, caller, calendar_uri, object, &root)
        }
        (xml::CALDAV, "calendar-multiget") => calendar_multiget(world, caller, &root),
        (xml::DAV, "sync-collection") if object.is_none() => {
            let calendar = world.calendars.get(&caller.user.uid, calendar_uri);
            collection::sync_collection(caller, calendar.ok_or_else(DavError::not_found)?, &root)
        }
        (xml::CALDAV, "free-busy-query") if object.is_none() => {
            free_busy_query(world, caller, calendar_uri, &root)
        }
        (xml::CALDAV, "free-busy-query") => Err(DavError::not_implemented(
            "The free-busy-query REPORT is only implemented on calendars",
        )),
        _ => Err(DavError::report_not_supported(format!(
            "The {{{}}}{} REPORT is not supported here",
            root.ns, root.local
        ))),
    }
}

/// `cal:calendar-data` inside `d:prop` may ask for `cal:expand`.
fn expand_range(root: &Element) -> Result<Option<(i64, i64)>, DavError> {
    let Some(expand) = root
        .child(xml::DAV, "prop")
        .and_then(|prop| prop.child(xml::CALDAV, "calendar-data"))
        .and_then(|calendar_data| calendar_data.child(xml::CALDAV, "expand"))
    else {
        return Ok(None);
    };
    let range = filter::parse_time_range(expand).map_err(DavError::BadRequest)?;
    match (range.start, range.end) {
        (Some(start), Some(end)) => Ok(Some((start, end))),
        _ => Err(DavError::bad_request(
            "The \"start\" and \"end\" attributes are required when expanding calendar-data",
        )),
    }
}

fn report_properties(root: &Element) -> PropertyRequest {
    super::report_properties(root)
}

/// An object's properties, with `calendar-data` expanded when asked to.
fn object_response(
    caller: &Caller<'_>,
    object: &CalendarObject,
    href: &str,
    properties: &PropertyRequest,
    expand: Option<(i64, i64)>,
) -> String {
    let mut set: PropertySet = collection::member_properties::<CalDav>(caller, object);
    if let Some((start, end)) = expand
        && let Some(value) =
            set.values.iter_mut().find(|value| value.name.is(xml::CALDAV, "calendar-data"))
    {
        value.inner_xml = xml::escape(&ical::expand(&object.data.ical, start, end));
    }
    set.response(href, properties, caller.minimal)
}

fn filter_error(error: TimeRangeError) -> DavError {
    match error {
        TimeRangeError::BadRequest(message) => DavError::BadRequest(message),
        TimeRangeError::NotImplemented(message) => DavError::NotImplemented(message),
    }
}

fn calendar_query(
    world: &World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object: Option<&str>,
    root: &Element,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    let properties = report_properties(root);
    let Some(filter_element) = root.child(xml::CALDAV, "filter") else {
        return Err(DavError::bad_request(
            "The {urn:ietf:params:xml:ns:caldav}filter element is required for this request",
        ));
    };
    let filter: CompFilter = filter::parse_filter(filter_element).map_err(DavError::BadRequest)?;
    let expand = expand_range(root)?;
    let calendar = world.calendars.get(uid, calendar_uri).ok_or_else(DavError::not_found)?;
    let depth = request.depth(Depth::Zero);
    let mut responses = Vec::new();
    match object {
        Some(object_uri) => {
            let object = calendar.members.get(object_uri).ok_or_else(DavError::not_found)?;
            if depth == Depth::Zero
                && filter::object_matches(&object.data, &filter).map_err(filter_error)?
            {
                responses.push(object_response(
                    caller,
                    object,
                    &caller.member_href::<CalDav>(uid, calendar_uri, object_uri),
                    &properties,
                    expand,
                ));
            }
        }
        None => {
            // sabre's workaround for Microsoft clients that send Depth: 0
            // where they mean 1; everybody else gets a 400.
            let microsoft =
                request.header("user-agent").is_some_and(|agent| agent.starts_with("MSFT-"));
            if depth == Depth::Zero && !microsoft {
                return Err(DavError::bad_request(
                    "A calendar-query REPORT on a calendar with a Depth: 0 is undefined. Set Depth to 1",
                ));
            }
            for object in calendar.members.values() {
                if filter::object_matches(&object.data, &filter).map_err(filter_error)? {
                    responses.push(object_response(
                        caller,
                        object,
                        &caller.member_href::<CalDav>(uid, calendar_uri, &object.uri),
                        &properties,
                        expand,
                    ));
                }
            }
        }
    }
    Ok(webdav::varying_multistatus(&responses))
}

fn calendar_multiget(
    world: &World,
    caller: &Caller<'_>,
    root: &Element,
) -> Result<Response, DavError> {
    let properties = report_properties(root);
    let expand = expand_range(root)?;
    let responses = collection::multiget::<CalDav>(world, caller, root, |object, href| {
        object_response(caller, object, href, &properties, expand)
    });
    Ok(webdav::varying_multistatus(&responses))
}

fn free_busy_query(
    world: &World,
    caller: &Caller<'_>,
    calendar_uri: &str,
    root: &Element,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    let Some(time_range_element) = root.child(xml::CALDAV, "time-range") else {
        return Err(DavError::bad_request(
            "The {urn:ietf:params:xml:ns:caldav}time-range element is required",
        ));
    };
    let range: TimeRange =
        filter::parse_time_range(time_range_element).map_err(DavError::BadRequest)?;
    let (Some(start), Some(end)) = (range.start, range.end) else {
        return Err(DavError::bad_request("The freebusy report must have a start and an end date"));
    };
    let calendar = world.calendars.get(uid, calendar_uri).ok_or_else(DavError::not_found)?;
    let events_in_range = CompFilter {
        name: "VCALENDAR".into(),
        is_not_defined: false,
        time_range: None,
        comp_filters: vec![CompFilter {
            name: "VEVENT".into(),
            is_not_defined: false,
            time_range: Some(range),
            comp_filters: Vec::new(),
            prop_filters: Vec::new(),
        }],
        prop_filters: Vec::new(),
    };
    let mut periods = Vec::new();
    for object in calendar.members.values() {
        if filter::object_matches(&object.data, &events_in_range).map_err(filter_error)? {
            periods.extend(ical::busy_periods(&object.data.ical, start, end));
        }
    }
    periods.sort_by_key(|period| (period.start, period.end));
    let mut body = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:{}\r\nCALSCALE:GREGORIAN\r\nBEGIN:VFREEBUSY\r\nDTSTART:{}\r\nDTEND:{}\r\nDTSTAMP:{}\r\n",
        ical::PRODID,
        ical::format_utc(start),
        ical::format_utc(end),
        ical::format_utc(caller.now)
    );
    for period in &periods {
        let fbtype = if period.busy_type == "BUSY" {
            String::new()
        } else {
            format!(";FBTYPE={}", period.busy_type)
        };
        body.push_str(&format!(
            "FREEBUSY{fbtype}:{}/{}\r\n",
            ical::format_utc(period.start),
            ical::format_utc(period.end)
        ));
    }
    body.push_str("END:VFREEBUSY\r\nEND:VCALENDAR\r\n");
    Ok((
        StatusCode::OK,
        [
            (http::header::CONTENT_TYPE, "text/calendar".to_string()),
            (http::header::CONTENT_LENGTH, body.len().to_string()),
        ],
        body,
    )
        .into_response())
}
