//! A streaming, namespace-resolved walk over an XML part, for the office
//! formats.
//!
//! Office documents are matched by namespace, not by prefix: `w:` and `text:`
//! are conventions, and a producer may bind other prefixes. We stream instead
//! of building a tree (the `xml-tree` crate) because a document part can be
//! tens of megabytes and only its text is wanted. DOCTYPE is refused, so no
//! entity is ever expanded but the five predefined ones and character
//! references.

use quick_xml::NsReader;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;

use crate::ExtractError;

/// The deepest element nesting accepted; real documents stay far below.
const DEPTH_MAX: usize = 1024;

pub(crate) const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
pub(crate) const MC: &str = "http://schemas.openxmlformats.org/markup-compatibility/2006";
pub(crate) const OFFICE: &str = "urn:oasis:names:tc:opendocument:xmlns:office:1.0";
pub(crate) const TEXT: &str = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";
pub(crate) const TABLE: &str = "urn:oasis:names:tc:opendocument:xmlns:table:1.0";
pub(crate) const DRAW: &str = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0";
pub(crate) const PRESENTATION: &str = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0";
pub(crate) const STYLE: &str = "urn:oasis:names:tc:opendocument:xmlns:style:1.0";

/// A start tag with its name and attributes resolved to namespaces.
#[derive(Debug)]
pub(crate) struct Element {
    pub(crate) ns: String,
    pub(crate) local: String,
    /// (namespace, local name, value); unprefixed attributes have namespace "".
    attributes: Vec<(String, String, String)>,
}

impl Element {
    pub(crate) fn attribute(&self, ns: &str, local: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(attribute_ns, name, _)| attribute_ns == ns && name == local)
            .map(|(_, _, value)| value.as_str())
    }
}

/// What a format does with the walk.
pub(crate) trait Visitor {
    /// An element opens; [`Descend::Skip`] passes over everything inside
    /// it (its children, its text and its end) — tracked changes, notes.
    fn start(&mut self, element: &Element) -> Result<Descend, ExtractError>;
    fn end(&mut self, ns: &str, local: &str) -> Result<(), ExtractError>;
    fn text(&mut self, text: &str) -> Result<(), ExtractError>;
}

/// Whether the walk goes inside the element that just opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Descend {
    Into,
    Skip,
}

/// Walks `xml`, calling the visitor for each start tag, end tag and piece of
/// text in document order; an empty element is a start then an end.
pub(crate) fn walk(xml: &str, visitor: &mut impl Visitor) -> Result<(), ExtractError> {
    let xml = xml.strip_prefix('\u{FEFF}').unwrap_or(xml);
    let mut reader = NsReader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut open: Vec<(String, String)> = Vec::new();
    // The depth of `open` at which a skipped element opened, while inside it.
    let mut skipped_at: Option<usize> = None;
    loop {
        let (resolved, event) = reader.read_resolved_event().map_err(malformed)?;
        let ns = namespace(resolved)?;
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                if open.len() >= DEPTH_MAX {
                    return Err(ExtractError::Malformed("elements nest too deeply".into()));
                }
                let mut attributes = Vec::new();
                for attribute in start.attributes() {
                    let attribute = attribute.map_err(malformed)?;
                    let key = attribute.key;
                    if key.as_ref() == "xmlns" || key.as_ref().starts_with("xmlns:") {
                        continue;
                    }
                    let (resolved, local) = reader.resolver().resolve_attribute(key);
                    let attribute_ns = namespace(resolved)?;
                    let value = attribute
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(malformed)?
                        .into_owned();
                    attributes.push((attribute_ns, local.as_ref().to_string(), value));
                }
                let local = start.local_name().as_ref().to_string();
                let element = Element { ns, local, attributes };
                let empty = matches!(event, Event::Empty(_));
                if skipped_at.is_none() && visitor.start(&element)? == Descend::Skip && !empty {
                    skipped_at = Some(open.len());
                } else if skipped_at.is_none() && empty {
                    visitor.end(&element.ns, &element.local)?;
                }
                if !empty {
                    open.push((element.ns, element.local));
                }
            }
            Event::End(_) => {
                let (ns, local) =
                    open.pop().ok_or_else(|| ExtractError::Malformed("a stray end tag".into()))?;
                match skipped_at {
                    Some(depth) if depth == open.len() => skipped_at = None,
                    Some(_) => {}
                    None => visitor.end(&ns, &local)?,
                }
            }
            _ if skipped_at.is_some() && matches!(event, Event::Text(_) | Event::CData(_)) => {}
            Event::Text(text) => visitor.text(&text.xml10_content())?,
            Event::CData(data) => visitor.text(&data.into_inner())?,
            Event::GeneralRef(reference) => {
                let character = match reference.resolve_char_ref().map_err(malformed)? {
                    Some(character) => character,
                    None => match reference.as_ref() {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "apos" => '\'',
                        "quot" => '"',
                        other => {
                            return Err(ExtractError::Malformed(format!(
                                "unknown entity &{other};"
                            )));
                        }
                    },
                };
                if skipped_at.is_none() {
                    visitor.text(character.encode_utf8(&mut [0; 4]))?;
                }
            }
            Event::DocType(_) => {
                return Err(ExtractError::Malformed("DOCTYPE is not accepted".into()));
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
    }
    if !open.is_empty() {
        return Err(ExtractError::Malformed("an element is never closed".into()));
    }
    Ok(())
}

fn namespace(resolved: ResolveResult<'_>) -> Result<String, ExtractError> {
    match resolved {
        ResolveResult::Bound(ns) => Ok(ns.as_ref().to_string()),
        ResolveResult::Unbound => Ok(String::new()),
        ResolveResult::Unknown(prefix) => {
            Err(ExtractError::Malformed(format!("undeclared namespace prefix {prefix:?}")))
        }
    }
}

fn malformed(error: impl std::fmt::Display) -> ExtractError {
    ExtractError::Malformed(format!("not well-formed XML: {error}"))
}
