//! The `d:basicsearch` query: parsed from XML into a [`Query`], checked the
//! way Nextcloud's FileSearchBackend checks it, and evaluated against one
//! entry at a time.
//!
//! Evaluation costs one pass over the condition per entry, with one
//! exception: an `or` made only of `oc:fileid` equalities becomes a set
//! lookup ([`Condition::FileIdIn`]), as Nextcloud's QueryOptimizer turns it
//! into SQL `IN`. Nextcloud still refuses a query with more than
//! [`OPERATOR_COUNT_MAX`] comparisons before any of that (a 400), so a
//! client checking many file ids sends them in batches of at most that.

use crate::files::properties::Selection;
use crate::xml::{DAV, Element, NC, OC};
use std::collections::HashSet;

/// FileSearchBackend::OPERATOR_LIMIT.
pub const OPERATOR_COUNT_MAX: usize = 100;
/// Nextcloud's result cap when the query gives no `d:nresults`.
pub const RESULT_COUNT_DEFAULT: usize = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub selection: Selection,
    /// `d:href` of each `d:scope`, as sent.
    pub scopes: Vec<String>,
    pub condition: Condition,
    pub order: Vec<Order>,
    /// `d:nresults`; `None` = Nextcloud's default cap.
    pub result_count_max: Option<usize>,
    /// `firstresult` (SearchDAV's namespace; any namespace accepted).
    pub first_result: usize,
    /// Set when the query had `oc:owner-id = <self>`: only the caller's own
    /// files, no shares.
    pub limit_to_home: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    And(Vec<Condition>),
    Or(Vec<Condition>),
    Not(Box<Condition>),
    Compare {
        comparison: Comparison,
        property: Property,
        literal: String,
    },
    IsCollection,
    /// An `or` of `oc:fileid` equalities, made by [`parse`] after the
    /// operator count: a file matches when its id equals one of the
    /// literals. The set holds each literal exactly as [`compare`] compares
    /// it with a file id — as an `f64`, keyed by its bits (two `f64`s are
    /// equal under `total_cmp` exactly when their bits are) — so it answers
    /// what the `or` would, in one lookup.
    FileIdIn(HashSet<u64>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
    Like,
}

/// The properties FileSearchBackend knows, for `where` and `orderby`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    DisplayName,
    ContentType,
    LastModified,
    CreationDate,
    UploadTime,
    LastActivity,
    Size,
    Favorite,
    FileId,
    OwnerId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub property: Property,
    pub descending: bool,
}

/// Why a query was refused, with the status and the body kind Nextcloud
/// uses for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// SearchDAV answers parse problems as a plain-text 400 "Parse error: ...".
    Parse(String),
    /// A plain-text 400 whose body is the message alone (a document that is
    /// not a search request).
    DocumentType(String),
    /// Everything else FileSearchBackend refuses.
    Invalid(String),
}

impl Property {
    fn from_name(ns: &str, local: &str) -> Option<Property> {
        Some(match (ns, local) {
            (DAV, "displayname") => Property::DisplayName,
            (DAV, "getcontenttype") => Property::ContentType,
            (DAV, "getlastmodified") => Property::LastModified,
            (DAV, "creationdate") => Property::CreationDate,
            (NC, "upload_time") => Property::UploadTime,
            (NC, "last_activity") => Property::LastActivity,
            (OC, "size") => Property::Size,
            (OC, "favorite") => Property::Favorite,
            (OC, "fileid") => Property::FileId,
            (OC, "owner-id") => Property::OwnerId,
            _ => return None,
        })
    }

    fn searchable(self) -> bool {
        self != Property::LastActivity
    }

    /// FileSearchBackend marks `oc:fileid` unsortable but maps it to a
    /// column all the same; ordering by it is accepted here.
    fn sortable(self) -> bool {
        self != Property::OwnerId
    }
}

/// Parses a `d:searchrequest` document. `uid` is the caller, for the
/// `oc:owner-id` rule.
pub fn parse(root: &Element, uid: &str) -> Result<Query, QueryError> {
    if !root.is(DAV, "searchrequest") {
        return Err(QueryError::DocumentType(format!(
            "Unexpected document type: {{{}}}{} for this Content-Type, expected {{DAV:}}searchrequest or {{DAV:}}query-schema-discovery",
            root.ns, root.local
        )));
    }
    let Some(search) = root.child(DAV, "basicsearch") else {
        return Err(QueryError::Invalid(
            "Unexpected xml content for searchrequest, expected basicsearch".into(),
        ));
    };
    let Some(from) = search.child(DAV, "from") else {
        return Err(QueryError::Parse("Missing {DAV:}from when parsing {DAV:}basicsearch".into()));
    };
    let scopes: Vec<String> = from
        .children_named(DAV, "scope")
        .map(|scope| scope.child(DAV, "href").map(Element::text).unwrap_or_default())
        .collect();
    if scopes.is_empty() {
        return Err(QueryError::Invalid("You need to specify a scope for the search.".into()));
    }
    let Some(where_element) = search.child(DAV, "where") else {
        return Err(QueryError::Parse("Missing {DAV:}where from {DAV:}basicsearch".into()));
    };
    let Some(select) = search.child(DAV, "select") else {
        return Err(QueryError::Parse("Missing {DAV:}select from {DAV:}basicsearch".into()));
    };
    let selection = match select.child(DAV, "prop") {
        Some(prop) => Selection::from_prop_element(prop),
        None => Selection::All { include: Vec::new() },
    };
    let mut operators = where_element.children();
    let condition = match operators.next() {
        Some(operator) => parse_condition(operator)?,
        None => return Err(QueryError::Parse("Missing {DAV:}where from {DAV:}basicsearch".into())),
    };
    if count_operators(&condition) > OPERATOR_COUNT_MAX {
        return Err(QueryError::Invalid(format!(
            "Invalid search query, maximum operator limit of {OPERATOR_COUNT_MAX} exceeded, got {} operators",
            count_operators(&condition)
        )));
    }
    let (condition, owner) = extract_owner(condition, true)?;
    let condition = optimize(condition);
    let limit_to_home = match owner {
        None => false,
        Some(owner) if owner == uid => true,
        Some(_) => {
            return Err(QueryError::Invalid(
                "Invalid search value for '{http://owncloud.org/ns}owner-id', only the current user id is allowed"
                    .into(),
            ));
        }
    };
    let mut order = Vec::new();
    if let Some(orderby) = search.child(DAV, "orderby") {
        for order_element in orderby.children_named(DAV, "order") {
            let property_element = order_element
                .child(DAV, "prop")
                .and_then(|prop| prop.children().next())
                .ok_or_else(|| QueryError::Invalid("An order needs a property".into()))?;
            let property = Property::from_name(&property_element.ns, &property_element.local)
                .filter(|property| property.sortable())
                .ok_or_else(|| unsupported(property_element))?;
            let descending = order_element.child(DAV, "descending").is_some();
            order.push(Order { property, descending });
        }
    }
    let mut result_count_max = None;
    let mut first_result = 0;
    if let Some(limit) = search.child(DAV, "limit") {
        for child in limit.children() {
            let number = child.text().trim().parse::<usize>();
            match (child.local.as_str(), number) {
                ("nresults", Ok(0)) => {}
                ("nresults", Ok(count)) => result_count_max = Some(count),
                ("firstresult", Ok(offset)) => first_result = offset,
                (_, _) => {}
            }
        }
    }
    Ok(Query { selection, scopes, condition, order, result_count_max, first_result, limit_to_home })
}

fn unsupported(property: &Element) -> QueryError {
    QueryError::Invalid(format!(
        "Unsupported property for search or order: {{{}}}{}",
        property.ns, property.local
    ))
}

fn parse_condition(element: &Element) -> Result<Condition, QueryError> {
    if element.ns != DAV {
        return Err(QueryError::Invalid(format!(
            "Unsupported operation {{{}}}{}",
            element.ns, element.local
        )));
    }
    let comparison = match element.local.as_str() {
        "and" | "or" | "not" => {
            let arguments = element
                .children()
                .map(parse_condition)
                .collect::<Result<Vec<Condition>, QueryError>>()?;
            return Ok(match element.local.as_str() {
                "and" => Condition::And(arguments),
                "or" => Condition::Or(arguments),
                _ => Condition::Not(Box::new(match arguments.len() {
                    1 => arguments.into_iter().next().expect("one argument"),
                    _ => Condition::And(arguments),
                })),
            });
        }
        "is-collection" => return Ok(Condition::IsCollection),
        "eq" => Comparison::Eq,
        "gt" => Comparison::Gt,
        "gte" => Comparison::Gte,
        "lt" => Comparison::Lt,
        "lte" => Comparison::Lte,
        "like" => Comparison::Like,
        other => {
            return Err(QueryError::Invalid(format!(
                "Unsupported operation {other} ({{DAV:}}{other})"
            )));
        }
    };
    let arguments: Vec<&Element> = element.children().collect();
    if arguments.len() != 2 {
        return Err(QueryError::Invalid(format!(
            "Invalid number of arguments for {} operation",
            element.local
        )));
    }
    let Some(property_element) =
        arguments[0].is(DAV, "prop").then(|| arguments[0].children().next()).flatten()
    else {
        return Err(QueryError::Invalid(format!(
            "Invalid argument 1 for {} operation, expected property",
            element.local
        )));
    };
    if !arguments[1].is(DAV, "literal") {
        return Err(QueryError::Invalid(format!(
            "Invalid argument 2 for {} operation, expected literal",
            element.local
        )));
    }
    let property = Property::from_name(&property_element.ns, &property_element.local)
        .filter(|property| property.searchable())
        .ok_or_else(|| unsupported(property_element))?;
    let literal = arguments[1].text();
    if property == Property::ContentType && comparison == Comparison::Like {
        // Only "major/%" or an exact type (SearchBuilder's mimetype rule).
        let wildcard_count = literal.matches('%').count();
        if wildcard_count > 0
            && !(wildcard_count == 1 && literal.ends_with("/%") && literal.len() > 2)
        {
            return Err(QueryError::Invalid(format!(
                "Unsupported query value for mimetype: {literal}, only values in the format \"mime/type\" or \"mime/%\" are supported"
            )));
        }
    }
    if matches!(property, Property::Size | Property::FileId)
        && literal.trim().parse::<f64>().is_err()
        && !literal.is_empty()
    {
        return Err(QueryError::Invalid(format!(
            "Invalid property value for {}",
            property_element.local
        )));
    }
    Ok(Condition::Compare { comparison, property, literal })
}

fn count_operators(condition: &Condition) -> usize {
    match condition {
        Condition::And(arguments) | Condition::Or(arguments) => {
            arguments.iter().map(count_operators).sum()
        }
        Condition::Not(argument) => count_operators(argument),
        Condition::Compare { .. } | Condition::IsCollection => 1,
        // Made after counting; were it counted, each distinct id is one.
        Condition::FileIdIn(ids) => ids.len(),
    }
}

/// QueryOptimizer's OrEqualsToIn, for the one case that matters here: an
/// `or` whose arguments are all `oc:fileid` equalities becomes
/// [`Condition::FileIdIn`]. Everything else keeps its shape.
fn optimize(condition: Condition) -> Condition {
    match condition {
        Condition::Or(arguments)
            if arguments.iter().all(|argument| fileid_equality(argument).is_some()) =>
        {
            Condition::FileIdIn(
                arguments
                    .iter()
                    .filter_map(fileid_equality)
                    .map(|literal| fileid_key(number_literal(literal)))
                    .collect(),
            )
        }
        Condition::Or(arguments) => Condition::Or(arguments.into_iter().map(optimize).collect()),
        Condition::And(arguments) => Condition::And(arguments.into_iter().map(optimize).collect()),
        Condition::Not(argument) => Condition::Not(Box::new(optimize(*argument))),
        other => other,
    }
}

/// The literal of an `oc:fileid` equality.
fn fileid_equality(condition: &Condition) -> Option<&str> {
    match condition {
        Condition::Compare { comparison: Comparison::Eq, property: Property::FileId, literal } => {
            Some(literal)
        }
        _ => None,
    }
}

/// The key [`Condition::FileIdIn`] stores for a number compared with a file id.
fn fileid_key(number: f64) -> u64 {
    number.to_bits()
}

/// FileSearchBackend::extractWhereValue for `oc:owner-id`: allowed only as an
/// `eq` reachable through `and`s; it is removed from the condition (replaced
/// by an empty `and`) and its value returned.
fn extract_owner(
    condition: Condition,
    acceptable: bool,
) -> Result<(Condition, Option<String>), QueryError> {
    match condition {
        Condition::And(arguments) | Condition::Or(arguments) if arguments.is_empty() => {
            Ok((Condition::And(arguments), None))
        }
        Condition::And(arguments) => extract_from_list(arguments, acceptable, Condition::And),
        Condition::Or(arguments) => extract_from_list(arguments, false, Condition::Or),
        Condition::Not(argument) => {
            let (argument, owner) = extract_owner(*argument, false)?;
            Ok((Condition::Not(Box::new(argument)), owner))
        }
        Condition::Compare { comparison, property: Property::OwnerId, literal } => {
            if comparison != Comparison::Eq {
                return Err(QueryError::Invalid(
                    "searching by '{http://owncloud.org/ns}owner-id' is only allowed inside a '{DAV:}eq'".into(),
                ));
            }
            if !acceptable {
                return Err(QueryError::Invalid(
                    "searching by '{http://owncloud.org/ns}owner-id' is not allowed inside a '{DAV:}or' or '{DAV:}not'"
                        .into(),
                ));
            }
            Ok((Condition::And(Vec::new()), Some(literal)))
        }
        other => Ok((other, None)),
    }
}

fn extract_from_list(
    arguments: Vec<Condition>,
    acceptable: bool,
    rebuild: fn(Vec<Condition>) -> Condition,
) -> Result<(Condition, Option<String>), QueryError> {
    let mut owner = None;
    let mut rebuilt = Vec::with_capacity(arguments.len());
    for argument in arguments {
        if owner.is_some() {
            rebuilt.push(argument);
            continue;
        }
        let (argument, found) = extract_owner(argument, acceptable)?;
        owner = found;
        rebuilt.push(argument);
    }
    Ok((rebuild(rebuilt), owner))
}

/// What the condition needs to know about one entry.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    /// The name the viewer sees.
    pub name: &'a str,
    pub mime: &'a str,
    pub mtime: i64,
    pub ctime: i64,
    pub size: u64,
    pub favorite: bool,
    pub fileid: u64,
    pub is_folder: bool,
}

impl Condition {
    pub fn matches(&self, candidate: &Candidate<'_>) -> bool {
        match self {
            Condition::And(arguments) => {
                arguments.iter().all(|argument| argument.matches(candidate))
            }
            Condition::Or(arguments) => {
                arguments.iter().any(|argument| argument.matches(candidate))
            }
            Condition::Not(argument) => !argument.matches(candidate),
            Condition::IsCollection => candidate.is_folder,
            Condition::FileIdIn(ids) => ids.contains(&fileid_key(candidate.fileid as f64)),
            Condition::Compare { comparison, property, literal } => {
                compare(*comparison, *property, literal, candidate)
            }
        }
    }
}

fn compare(
    comparison: Comparison,
    property: Property,
    literal: &str,
    candidate: &Candidate<'_>,
) -> bool {
    use std::cmp::Ordering;
    let ordering_matches = |ordering: Ordering| match comparison {
        Comparison::Eq | Comparison::Like => ordering == Ordering::Equal,
        Comparison::Gt => ordering == Ordering::Greater,
        Comparison::Gte => ordering != Ordering::Less,
        Comparison::Lt => ordering == Ordering::Less,
        Comparison::Lte => ordering != Ordering::Greater,
    };
    match property {
        Property::DisplayName => match comparison {
            // SearchBuilder maps `like` to a case-insensitive ILIKE.
            Comparison::Like => like(&candidate.name.to_lowercase(), &literal.to_lowercase()),
            _ => ordering_matches(candidate.name.cmp(literal)),
        },
        Property::ContentType => match (comparison, literal.strip_suffix("/%")) {
            (Comparison::Like, Some(major)) => candidate.mime.split('/').next() == Some(major),
            (Comparison::Like, None) => candidate.mime == literal,
            _ => ordering_matches(candidate.mime.cmp(literal)),
        },
        Property::LastModified | Property::LastActivity => {
            ordering_matches(candidate.mtime.cmp(&datetime_literal(literal)))
        }
        Property::CreationDate => ordering_matches(candidate.ctime.cmp(&datetime_literal(literal))),
        // Nextcloud does not track upload times for these files: all zero.
        Property::UploadTime => ordering_matches(0.cmp(&datetime_literal(literal))),
        Property::Size => {
            ordering_matches((candidate.size as f64).total_cmp(&number_literal(literal)))
        }
        Property::FileId => {
            ordering_matches((candidate.fileid as f64).total_cmp(&number_literal(literal)))
        }
        // SearchBuilder turns any favorite comparison into "has the
        // favorite tag" and ignores the literal.
        Property::Favorite => candidate.favorite,
        // Removed by `extract_owner` before evaluation.
        Property::OwnerId => true,
    }
}

/// FileSearchBackend::castValue for datetimes: a number of seconds, or an
/// ATOM date, anything else 0.
fn datetime_literal(literal: &str) -> i64 {
    let literal = literal.trim();
    if let Ok(number) = literal.parse::<f64>() {
        return number.max(0.0) as i64;
    }
    crate::clock::parse_rfc3339(literal).unwrap_or(0)
}

fn number_literal(literal: &str) -> f64 {
    literal.trim().parse::<f64>().unwrap_or(0.0)
}

/// SQL LIKE: `%` any run, `_` one character, `\` escapes the next.
pub fn like(text: &str, pattern: &str) -> bool {
    #[derive(Clone, Copy)]
    enum Token {
        Any,
        One,
        Literal(char),
    }
    let mut tokens = Vec::new();
    let mut characters = pattern.chars();
    while let Some(character) = characters.next() {
        tokens.push(match character {
            '%' => Token::Any,
            '_' => Token::One,
            '\\' => Token::Literal(characters.next().unwrap_or('\\')),
            other => Token::Literal(other),
        });
    }
    let text: Vec<char> = text.chars().collect();
    // matched[i] = the first i text characters match the tokens so far.
    let mut matched = vec![false; text.len() + 1];
    matched[0] = true;
    for token in tokens {
        let mut next = vec![false; text.len() + 1];
        match token {
            Token::Any => {
                let mut reachable = false;
                for index in 0..=text.len() {
                    reachable |= matched[index];
                    next[index] = reachable;
                }
            }
            Token::One => next[1..].copy_from_slice(&matched[..text.len()]),
            Token::Literal(expected) => {
                for index in 0..text.len() {
                    next[index + 1] = matched[index] && text[index] == expected;
                }
            }
        }
        matched = next;
    }
    matched[text.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A searchrequest whose `d:where` holds `condition`.
    fn request(condition: &str) -> Element {
        let body = format!(
            r#"<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:basicsearch><d:select><d:prop><oc:fileid/></d:prop></d:select><d:from><d:scope><d:href>/files/alice</d:href><d:depth>infinity</d:depth></d:scope></d:from><d:where>{condition}</d:where></d:basicsearch></d:searchrequest>"#
        );
        crate::xml::parse(body.as_bytes()).expect("the request is XML")
    }

    fn fileid_equals(literal: &str) -> String {
        format!("<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{literal}</d:literal></d:eq>")
    }

    fn fileid_or(ids: impl Iterator<Item = u64>) -> String {
        let arguments: String = ids.map(|id| fileid_equals(&id.to_string())).collect();
        format!("<d:or>{arguments}</d:or>")
    }

    fn candidate(fileid: u64) -> Candidate<'static> {
        Candidate {
            name: "a.txt",
            mime: "text/plain",
            mtime: 0,
            ctime: 0,
            size: 0,
            favorite: false,
            fileid,
            is_folder: false,
        }
    }

    #[test]
    fn an_or_of_fileids_becomes_a_set() {
        let query = parse(&request(&fileid_or(1..=OPERATOR_COUNT_MAX as u64)), "alice").unwrap();
        let Condition::FileIdIn(ids) = &query.condition else {
            panic!("not a set: {:?}", query.condition);
        };
        assert_eq!(ids.len(), OPERATOR_COUNT_MAX);
        assert!(query.condition.matches(&candidate(1)));
        assert!(query.condition.matches(&candidate(OPERATOR_COUNT_MAX as u64)));
        assert!(!query.condition.matches(&candidate(0)));
        assert!(!query.condition.matches(&candidate(OPERATOR_COUNT_MAX as u64 + 1)));
        // One argument is an `or` as well.
        let single = parse(&request(&fileid_or([7].into_iter())), "alice").unwrap();
        assert_eq!(single.condition, Condition::FileIdIn(HashSet::from([fileid_key(7.0)])));
        assert!(single.condition.matches(&candidate(7)));
        // Inside other operators too; a mixed `or` keeps its shape.
        let nested = format!("<d:and><d:not><d:is-collection/></d:not>{}</d:and>", fileid_or(1..3));
        let nested = parse(&request(&nested), "alice").unwrap();
        assert!(
            matches!(&nested.condition, Condition::And(arguments) if matches!(arguments[1], Condition::FileIdIn(_)))
        );
        let mixed = format!("<d:or>{}<d:is-collection/></d:or>", fileid_equals("1"));
        let mixed = parse(&request(&mixed), "alice").unwrap();
        assert!(matches!(mixed.condition, Condition::Or(_)));
    }

    #[test]
    fn the_operator_limit_counts_every_equality_of_a_large_or() {
        // Nextcloud counts before it optimises: 5000 ids parse, then are
        // refused, like any query past the limit.
        let error = parse(&request(&fileid_or(1..=5000)), "alice").unwrap_err();
        let QueryError::Invalid(message) = error else { panic!("{error:?}") };
        assert!(message.contains("got 5000 operators"), "{message}");
        assert!(parse(&request(&fileid_or(1..=OPERATOR_COUNT_MAX as u64 + 1)), "alice").is_err());
        assert_eq!(OPERATOR_COUNT_MAX, 100, "FileSearchBackend::OPERATOR_LIMIT");
    }

    fn literal_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            (0_u64..24).prop_map(|id| id.to_string()),
            (0_u64..24).prop_map(|id| format!(" {id}.0 ")),
            (0_u64..24).prop_map(|id| format!("{id}.5")),
            Just("-0".to_string()),
            Just("-3".to_string()),
            Just("1e1".to_string()),
            Just(String::new()),
        ]
    }

    proptest! {
        /// The set answers exactly what the `or` of comparisons answers.
        #[test]
        fn the_fileid_set_agrees_with_the_or(
            literals in proptest::collection::vec(literal_strategy(), 0..12)
        ) {
            let or = Condition::Or(
                literals
                    .into_iter()
                    .map(|literal| Condition::Compare {
                        comparison: Comparison::Eq,
                        property: Property::FileId,
                        literal,
                    })
                    .collect(),
            );
            let set = optimize(or.clone());
            prop_assert!(matches!(set, Condition::FileIdIn(_)));
            for fileid in 0..26 {
                prop_assert_eq!(set.matches(&candidate(fileid)), or.matches(&candidate(fileid)), "{}", fileid);
            }
        }
    }

    #[test]
    fn like_follows_sql() {
        assert!(like("notes.md", "%.md"));
        assert!(like("notes.md", "notes%"));
        assert!(like("notes.md", "n_tes.md"));
        assert!(!like("notes.md", "%.txt"));
        assert!(like("50%", "50\\%"));
        assert!(!like("500", "50\\%"));
        assert!(like("", "%"));
        assert!(!like("", "_"));
    }

    #[test]
    fn owner_id_only_in_and() {
        let owner = || Condition::Compare {
            comparison: Comparison::Eq,
            property: Property::OwnerId,
            literal: "alice".into(),
        };
        let (rest, found) =
            extract_owner(Condition::And(vec![owner(), Condition::IsCollection]), true).unwrap();
        assert_eq!(found.as_deref(), Some("alice"));
        assert_eq!(rest, Condition::And(vec![Condition::And(Vec::new()), Condition::IsCollection]));
        assert!(extract_owner(Condition::Or(vec![owner()]), true).is_err());
        assert!(extract_owner(Condition::Not(Box::new(owner())), true).is_err());
    }
}
