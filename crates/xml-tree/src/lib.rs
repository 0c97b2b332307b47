//! A small namespace-resolved XML tree for the DAV protocols.
//!
//! [`parse`] resolves namespace prefixes itself, so an undeclared prefix is an
//! error (sabre/dav answers 400), DOCTYPE is refused (no entity expansion) and
//! nesting is bounded. [`Element::write_to`] writes a tree back with explicit
//! namespace declarations on every element, which is how a dead property's
//! value survives a round trip. Both the fake Nextcloud (parsing requests) and
//! the MCP servers (parsing Nextcloud's multistatus answers) use it; we
//! rejected serde-based XML mapping because DAV bodies are open-ended
//! (unknown properties must be reported, not dropped).

use quick_xml::Reader;
use quick_xml::events::Event;

pub const DAV: &str = "DAV:";
pub const SABRE: &str = "http://sabredav.org/ns";
pub const OC: &str = "http://owncloud.org/ns";
pub const NC: &str = "http://nextcloud.org/ns";
pub const CALDAV: &str = "urn:ietf:params:xml:ns:caldav";
pub const CARDDAV: &str = "urn:ietf:params:xml:ns:carddav";
pub const CALSERVER: &str = "http://calendarserver.org/ns/";
pub const APPLE: &str = "http://apple.com/ns/ical/";

/// The largest request body parsed as XML.
pub const BODY_LENGTH_MAX: usize = 4 * 1024 * 1024;
/// The deepest nesting accepted.
const DEPTH_MAX: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub ns: String,
    pub local: String,
    /// (namespace, local name, value); namespace declarations excluded.
    pub attributes: Vec<(String, String, String)>,
    pub content: Vec<Content>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Element(Element),
    Text(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlError {
    #[error("the body is not well-formed XML: {0}")]
    Malformed(String),
    #[error("undeclared namespace prefix {0:?}")]
    UnknownPrefix(String),
    #[error("the body is empty")]
    Empty,
    #[error("the body is too large or too deep")]
    TooLarge,
}

impl Element {
    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    pub fn children(&self) -> impl Iterator<Item = &Element> {
        self.content.iter().filter_map(|content| match content {
            Content::Element(element) => Some(element),
            Content::Text(_) => None,
        })
    }

    pub fn child(&self, ns: &str, local: &str) -> Option<&Element> {
        self.children().find(|child| child.is(ns, local))
    }

    pub fn children_named<'a>(
        &'a self,
        ns: &'a str,
        local: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children().filter(move |child| child.is(ns, local))
    }

    /// All text inside, concatenated.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for content in &self.content {
            match content {
                Content::Text(piece) => text.push_str(piece),
                Content::Element(element) => text.push_str(&element.text()),
            }
        }
        text
    }

    pub fn attribute(&self, local: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(ns, name, _)| ns.is_empty() && name == local)
            .map(|(_, _, value)| value.as_str())
    }

    /// The element's content written back as XML with explicit namespace
    /// declarations on every element (what a dead property stores).
    pub fn inner_xml(&self) -> String {
        let mut out = String::new();
        for content in &self.content {
            match content {
                Content::Text(text) => out.push_str(&escape(text)),
                Content::Element(element) => element.write_to(&mut out),
            }
        }
        out
    }

    /// The element itself as XML with explicit namespace declarations.
    pub fn write_to(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.local);
        out.push_str(" xmlns=\"");
        out.push_str(&escape(&self.ns));
        out.push('"');
        for (index, (ns, local, value)) in self.attributes.iter().enumerate() {
            if ns.is_empty() {
                out.push_str(&format!(" {local}=\"{}\"", escape(value)));
            } else {
                out.push_str(&format!(
                    " xmlns:a{index}=\"{}\" a{index}:{local}=\"{}\"",
                    escape(ns),
                    escape(value)
                ));
            }
        }
        if self.content.is_empty() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        out.push_str(&self.inner_xml());
        out.push_str("</");
        out.push_str(&self.local);
        out.push('>');
    }
}

/// Parses a request body. Namespace prefixes are resolved by us, and an
/// undeclared one is an error.
pub fn parse(body: &[u8]) -> Result<Element, XmlError> {
    parse_limited(body, BODY_LENGTH_MAX)
}

/// [`parse`] with a caller-chosen size limit (a client reading a large
/// multistatus answer needs more than a server accepts in a request).
pub fn parse_limited(body: &[u8], length_max: usize) -> Result<Element, XmlError> {
    if body.len() > length_max {
        return Err(XmlError::TooLarge);
    }
    let text = std::str::from_utf8(body).map_err(|_| XmlError::Malformed("not UTF-8".into()))?;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    // Stack of (element, namespace bindings it introduced).
    let mut stack: Vec<(Element, Vec<(String, String)>)> = Vec::new();
    let mut scopes: Vec<(String, String)> =
        vec![("xml".into(), "http://www.w3.org/XML/1998/namespace".into())];
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|error| XmlError::Malformed(error.to_string()))?;
        match event {
            Event::Start(start) | Event::Empty(start) if root.is_some() => {
                let _ = start;
                return Err(XmlError::Malformed("content after the root element".into()));
            }
            Event::Start(ref start) | Event::Empty(ref start) => {
                if stack.len() >= DEPTH_MAX {
                    return Err(XmlError::TooLarge);
                }
                let is_empty = matches!(event, Event::Empty(_));
                let mut declared = Vec::new();
                let mut raw_attributes = Vec::new();
                for attribute in start.attributes() {
                    let attribute =
                        attribute.map_err(|error| XmlError::Malformed(error.to_string()))?;
                    let key = attribute.key.as_ref().to_string();
                    let value = attribute
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|error| XmlError::Malformed(error.to_string()))?
                        .into_owned();
                    if key == "xmlns" {
                        declared.push((String::new(), value));
                    } else if let Some(prefix) = key.strip_prefix("xmlns:") {
                        if value.is_empty() {
                            return Err(XmlError::Malformed("empty namespace for a prefix".into()));
                        }
                        declared.push((prefix.to_string(), value));
                    } else {
                        raw_attributes.push((key, value));
                    }
                }
                scopes.extend(declared.iter().cloned());
                let name = start.name().as_ref().to_string();
                let (ns, local) = resolve(&scopes, &name, true)?;
                let mut attributes = Vec::new();
                for (key, value) in raw_attributes {
                    let (ns, local) = resolve(&scopes, &key, false)?;
                    attributes.push((ns, local, value));
                }
                let element = Element { ns, local, attributes, content: Vec::new() };
                if is_empty {
                    scopes.truncate(scopes.len() - declared.len());
                    attach(&mut stack, &mut root, element);
                } else {
                    stack.push((element, declared));
                }
            }
            Event::End(_) => {
                let (element, declared) =
                    stack.pop().ok_or(XmlError::Malformed("stray end tag".into()))?;
                scopes.truncate(scopes.len() - declared.len());
                attach(&mut stack, &mut root, element);
            }
            Event::Text(text) => {
                let text = text.xml10_content().into_owned();
                push_text(&mut stack, &text)?;
            }
            Event::CData(data) => {
                let text = data.into_inner().into_owned();
                push_text(&mut stack, &text)?;
            }
            Event::GeneralRef(reference) => {
                let text = match reference.resolve_char_ref() {
                    Ok(Some(character)) => character.to_string(),
                    Ok(None) => {
                        let name = reference.as_ref();
                        match name {
                            "lt" => "<".into(),
                            "gt" => ">".into(),
                            "amp" => "&".into(),
                            "apos" => "'".into(),
                            "quot" => "\"".into(),
                            other => {
                                return Err(XmlError::Malformed(format!(
                                    "unknown entity &{other};"
                                )));
                            }
                        }
                    }
                    Err(error) => return Err(XmlError::Malformed(error.to_string())),
                };
                push_text(&mut stack, &text)?;
            }
            Event::DocType(_) => return Err(XmlError::Malformed("DOCTYPE is not accepted".into())),
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(XmlError::Malformed("unclosed element".into()));
    }
    root.ok_or(XmlError::Empty)
}

fn push_text(stack: &mut [(Element, Vec<(String, String)>)], text: &str) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some((element, _)) => {
            if let Some(Content::Text(last)) = element.content.last_mut() {
                last.push_str(text);
            } else {
                element.content.push(Content::Text(text.to_string()));
            }
            Ok(())
        }
        None if text.trim().is_empty() => Ok(()),
        None => Err(XmlError::Malformed("text outside the root element".into())),
    }
}

fn attach(
    stack: &mut [(Element, Vec<(String, String)>)],
    root: &mut Option<Element>,
    element: Element,
) {
    match stack.last_mut() {
        Some((parent, _)) => parent.content.push(Content::Element(element)),
        None => *root = Some(element),
    }
}

fn resolve(
    scopes: &[(String, String)],
    name: &str,
    is_element: bool,
) -> Result<(String, String), XmlError> {
    let (prefix, local) = match name.split_once(':') {
        Some((prefix, local)) => (prefix, local),
        None => ("", name),
    };
    if prefix.is_empty() && !is_element {
        // Unprefixed attributes have no namespace.
        return Ok((String::new(), local.to_string()));
    }
    let binding = scopes.iter().rev().find(|(bound, _)| bound == prefix);
    match binding {
        Some((_, ns)) => Ok((ns.clone(), local.to_string())),
        None if prefix.is_empty() => Ok((String::new(), local.to_string())),
        None => Err(XmlError::UnknownPrefix(prefix.to_string())),
    }
}

/// Escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
