//! CalDAV as the calendar tools use it: the user's calendars (PROPFIND on
//! the calendar home), the objects with an event in a time range
//! (calendar-query REPORT), and creating an object (PUT with
//! `If-None-Match: *`). Answers are turned into failures that say what to
//! do next, in calendar terms.

use super::dav::{self, DavResponse};
use super::{Nextcloud, Subject, encode, status_failure, unreachable_failure};
use http::{Method, StatusCode};
use wire::{FailureKind, ToolFailure};
use xml_tree::{APPLE, CALDAV, DAV};

/// The most calendars one call looks at.
pub const CALENDARS_MAX: usize = 100;
/// The most objects one calendar may return for one range.
pub const OBJECTS_MAX: usize = 5_000;
/// Children of a calendar home that are never calendars (sabre's scheduling
/// inbox and outbox, Nextcloud's trash bin).
const NOT_CALENDARS: &[&str] = &["inbox", "outbox", "trashbin"];

/// One of the user's calendars.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    /// The last path segment: what the tools take and return.
    pub uri: String,
    pub name: String,
    pub color: Option<String>,
    /// `calendar-order`, Nextcloud's sort key for the calendar list.
    pub order: i64,
    /// It can hold VEVENTs (a calendar without a component set can).
    pub has_events: bool,
    /// The user may add objects (`current-user-privilege-set` grants write
    /// or bind; a server that does not say is trusted to refuse at PUT).
    pub writable: bool,
}

/// A calendar object resource as the REPORT returned it.
#[derive(Debug, Clone)]
pub struct CalendarObject {
    /// The object's file name in its calendar.
    pub uri: String,
    pub data: String,
}

impl Nextcloud {
    /// `/remote.php/dav/calendars/{uid}/` plus an optional calendar and
    /// object.
    pub fn calendar_url(&self, calendar: Option<&str>, object: Option<&str>) -> String {
        let mut url = format!("{}/remote.php/dav/calendars/{}/", self.base_url, encode(&self.uid));
        if let Some(calendar) = calendar {
            url.push_str(&encode(calendar));
            url.push('/');
            if let Some(object) = object {
                url.push_str(&encode(object));
            }
        }
        url
    }

    /// The user's event calendars and other calendars, in Nextcloud's
    /// order (calendar-order, then as listed).
    pub async fn calendars(&self) -> Result<Vec<Calendar>, ToolFailure> {
        let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<d:propfind xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:x1="http://apple.com/ns/ical/">
<d:prop><d:resourcetype/><d:displayname/><cal:supported-calendar-component-set/><d:current-user-privilege-set/><x1:calendar-color/><x1:calendar-order/></d:prop>
</d:propfind>"#;
        let answer = self
            .send(
                Method::from_bytes(b"PROPFIND").expect("valid method"),
                &self.calendar_url(None, None),
                &[("depth", "1"), ("content-type", "application/xml; charset=utf-8")],
                Some(body.as_bytes().to_vec()),
            )
            .await?;
        if answer.status.as_u16() != 207 {
            return Err(calendar_failure(answer.status));
        }
        let responses = dav::parse_multistatus(&answer.body).map_err(|_| unreachable_failure())?;
        Ok(calendars_from(&responses, &self.uid))
    }

    /// The objects of `calendar` with a VEVENT occurrence in
    /// `[start, end)` (UTC, `YYYYMMDDTHHMMSSZ`), as Nextcloud filters them.
    pub async fn events_between(
        &self,
        calendar: &str,
        start: &str,
        end: &str,
    ) -> Result<Vec<CalendarObject>, ToolFailure> {
        let body = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<cal:calendar-query xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav">
<d:prop><d:getetag/><cal:calendar-data/></d:prop>
<cal:filter><cal:comp-filter name="VCALENDAR"><cal:comp-filter name="VEVENT"><cal:time-range start="{start}" end="{end}"/></cal:comp-filter></cal:comp-filter></cal:filter>
</cal:calendar-query>"#
        );
        let answer = self
            .send(
                Method::from_bytes(b"REPORT").expect("valid method"),
                &self.calendar_url(Some(calendar), None),
                &[("depth", "1"), ("content-type", "application/xml; charset=utf-8")],
                Some(body.into_bytes()),
            )
            .await?;
        if answer.status.as_u16() != 207 {
            return Err(calendar_failure(answer.status));
        }
        let responses = dav::parse_multistatus(&answer.body).map_err(|_| unreachable_failure())?;
        Ok(responses
            .iter()
            .filter_map(|response| {
                let data = response.property(CALDAV, "calendar-data")?.text();
                let uri = response.href.trim_end_matches('/').rsplit('/').next()?.to_string();
                Some(CalendarObject { uri, data })
            })
            .take(OBJECTS_MAX)
            .collect())
    }

    /// Stores a new object; refuses to replace an existing one.
    pub async fn create_object(
        &self,
        calendar: &str,
        object: &str,
        data: String,
    ) -> Result<(), ToolFailure> {
        let answer = self
            .send(
                Method::PUT,
                &self.calendar_url(Some(calendar), Some(object)),
                &[("content-type", "text/calendar; charset=utf-8"), ("if-none-match", "*")],
                Some(data.into_bytes()),
            )
            .await?;
        match answer.status {
            StatusCode::CREATED | StatusCode::NO_CONTENT | StatusCode::OK => Ok(()),
            StatusCode::FORBIDDEN => Err(read_only_failure(calendar)),
            StatusCode::PRECONDITION_FAILED => Err(ToolFailure::new(
                FailureKind::Conflict,
                "An event with the same identifier already exists in that calendar. Call calendar_create_event again; it picks a new identifier.",
            )),
            StatusCode::UNSUPPORTED_MEDIA_TYPE | StatusCode::BAD_REQUEST => {
                Err(ToolFailure::invalid_arguments(
                    "Nextcloud rejected the event as invalid. Check the summary, times and time zone, then try again.",
                ))
            }
            // A calendar that vanished: sabre answers 409 for a PUT into a
            // missing collection.
            StatusCode::NOT_FOUND | StatusCode::CONFLICT => {
                Err(calendar_failure(StatusCode::NOT_FOUND))
            }
            status => Err(calendar_failure(status)),
        }
    }
}

/// Reads the calendar home's PROPFIND answer: collections that are
/// calendars, without the scheduling inbox/outbox and the trash bin.
pub fn calendars_from(responses: &[DavResponse], uid: &str) -> Vec<Calendar> {
    let prefix = format!("/remote.php/dav/calendars/{uid}/");
    let mut calendars: Vec<Calendar> = responses
        .iter()
        .filter_map(|response| {
            let start = response.href.find(&prefix)? + prefix.len();
            let uri = response.href[start..].trim_end_matches('/');
            if uri.is_empty() || uri.contains('/') || NOT_CALENDARS.contains(&uri) {
                return None;
            }
            let is_calendar = response
                .property(DAV, "resourcetype")
                .is_some_and(|resource_type| resource_type.child(CALDAV, "calendar").is_some());
            if !is_calendar {
                return None;
            }
            let has_events = match response.property(CALDAV, "supported-calendar-component-set") {
                Some(set) => set.children_named(CALDAV, "comp").any(|comp| {
                    comp.attribute("name").is_some_and(|name| name.eq_ignore_ascii_case("VEVENT"))
                }),
                None => true,
            };
            let writable = match response.property(DAV, "current-user-privilege-set") {
                Some(set) => set.children_named(DAV, "privilege").any(|privilege| {
                    ["all", "write", "write-content", "bind"]
                        .iter()
                        .any(|name| privilege.child(DAV, name).is_some())
                }),
                None => true,
            };
            let name = response
                .text(DAV, "displayname")
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| uri.to_string());
            Some(Calendar {
                uri: uri.to_string(),
                name,
                color: response.text(APPLE, "calendar-color").filter(|color| !color.is_empty()),
                order: response
                    .text(APPLE, "calendar-order")
                    .and_then(|order| order.parse().ok())
                    .unwrap_or(0),
                has_events,
                writable,
            })
        })
        .take(CALENDARS_MAX)
        .collect();
    // A stable sort keeps the server's order among equal orders.
    calendars.sort_by_key(|calendar| calendar.order);
    calendars
}

/// A calendar answer that is not a success, in calendar terms.
///
/// A 401 gets its own words: some Nextcloud servers refuse token sign-ins
/// on CalDAV while accepting them elsewhere (bearer-created sessions break
/// app routes), and the fix is a setting the administrator owns.
pub fn calendar_failure(status: StatusCode) -> ToolFailure {
    match status {
        StatusCode::UNAUTHORIZED => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud refused the user's sign-in for the calendar, so it cannot be reached with the current sign-in. Tell the user; reloading the page may help, and if it keeps happening the administrator can switch Tamebi to app-password mode, which this Nextcloud accepts for calendars. Do not retry now.",
        ),
        StatusCode::NOT_FOUND => ToolFailure::new(
            FailureKind::NotFound,
            "That calendar does not exist (any more). Call calendar_events without a calendar to see the user's calendars and their uris.",
        ),
        status => status_failure(status, Subject::Calendar),
    }
}

/// The user may read `calendar` but not add to it.
pub fn read_only_failure(calendar: &str) -> ToolFailure {
    ToolFailure::new(
        FailureKind::RefusedByNextcloud,
        format!(
            "The user cannot add events to calendar \"{calendar}\": it is read-only for them (for example shared without edit rights). Do not retry; create the event in one of the user's writable calendars (calendar_events lists them with \"writable\"), or ask the owner for edit rights."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home as Nextcloud lists it: a calendar, a task list, a calendar
    /// shared read-only by another user, a subscription, and the
    /// scheduling and trash collections.
    const HOME: &str = r##"<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns" xmlns:x1="http://apple.com/ns/ical/">
 <d:response><d:href>/remote.php/dav/calendars/bob/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/personal/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><cal:calendar/></d:resourcetype><d:displayname>Personal</d:displayname><cal:supported-calendar-component-set><cal:comp name="VEVENT"/></cal:supported-calendar-component-set><d:current-user-privilege-set><d:privilege><d:read/></d:privilege><d:privilege><d:all/></d:privilege></d:current-user-privilege-set><x1:calendar-color>#e9322d</x1:calendar-color><x1:calendar-order>2</x1:calendar-order></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/tasks/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><cal:calendar/></d:resourcetype><d:displayname>Tasks</d:displayname><cal:supported-calendar-component-set><cal:comp name="VTODO"/></cal:supported-calendar-component-set><d:current-user-privilege-set><d:privilege><d:all/></d:privilege></d:current-user-privilege-set></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/personal_shared_by_alice/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><cal:calendar/><cs:shared/></d:resourcetype><d:displayname>Personnel (Alice Martin)</d:displayname><cal:supported-calendar-component-set><cal:comp name="VEVENT"/><cal:comp name="VTODO"/></cal:supported-calendar-component-set><d:current-user-privilege-set><d:privilege><d:read/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege></d:current-user-privilege-set><x1:calendar-order>1</x1:calendar-order></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/holidays/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><cs:subscribed/></d:resourcetype><d:displayname>Holidays</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/inbox/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><cal:schedule-inbox/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/remote.php/dav/calendars/bob/trashbin/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><nc:trash-bin/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>"##;

    #[test]
    fn calendars_are_read_with_components_rights_and_order() {
        let responses = dav::parse_multistatus(HOME.as_bytes()).unwrap();
        let calendars = calendars_from(&responses, "bob");
        let summary: Vec<(&str, &str, bool, bool)> = calendars
            .iter()
            .map(|calendar| {
                (
                    calendar.uri.as_str(),
                    calendar.name.as_str(),
                    calendar.has_events,
                    calendar.writable,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("tasks", "Tasks", false, true),
                ("personal_shared_by_alice", "Personnel (Alice Martin)", true, false),
                ("personal", "Personal", true, true),
            ]
        );
        assert_eq!(calendars[2].color.as_deref(), Some("#e9322d"));
    }

    #[test]
    fn another_users_home_is_never_read_as_ours() {
        let responses = dav::parse_multistatus(HOME.as_bytes()).unwrap();
        assert!(calendars_from(&responses, "alice").is_empty());
    }

    #[test]
    fn a_refused_sign_in_points_at_app_password_mode() {
        let failure = calendar_failure(StatusCode::UNAUTHORIZED);
        assert_eq!(failure.kind, FailureKind::RefusedByNextcloud);
        assert!(failure.message.contains("app-password mode"));
        assert_eq!(calendar_failure(StatusCode::NOT_FOUND).kind, FailureKind::NotFound);
        assert_eq!(
            calendar_failure(StatusCode::BAD_GATEWAY).kind,
            FailureKind::NextcloudUnreachable
        );
    }
}
