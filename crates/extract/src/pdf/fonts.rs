//! Which text a PDF draws in a bold font, and which in a monospace one.
//!
//! `pdf-extract` tells its output device each character's size and position
//! but not its font. It does announce every text-showing operation (one
//! `begin_word` per string of a `Tj`, and per string element of a `TJ`), so
//! we walk each page's content streams the way it does — in order, into form
//! XObjects on `Do`, the font saved and restored by `q`/`Q` — and list, per
//! page, whether each of those operations draws in a bold font. The output
//! device then pairs the n-th `begin_word` of a page with the n-th entry. A
//! page whose count does not match what the parser announced gets no bold
//! information at all rather than misattributed bold.
//!
//! A font is bold when its name says so (`Helvetica-Bold`,
//! `ABCDEF+SourceSans-Semibold`, `Arial,Bold`), or its descriptor's weight is
//! 600 or more, or its descriptor has the ForceBold flag. A font is
//! monospace (code, not prose: never a heading, never the body size) when
//! its descriptor has the FixedPitch flag or its name is a known monospace
//! family (`Courier`, `DejaVuSansMono`, `Consolas`, `CMTT10`, …).
//!
//! The walk also finds what the parser itself would not survive: a form
//! XObject that draws itself (directly or through others) makes
//! `pdf-extract` recurse until the thread's stack overflows, which aborts
//! the process instead of unwinding. Such a PDF is refused before the parser
//! sees it.

use std::collections::{BTreeMap, HashMap};

use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream, content::Content};

/// The deepest nesting of form XObjects followed; real documents use a few.
const FORM_DEPTH_MAX: usize = 32;
/// A descriptor weight this heavy is bold (CSS and PDF: 600 is semibold).
const BOLD_WEIGHT_MIN: f32 = 600.0;
/// The ForceBold bit of a font descriptor's flags (bit 19).
const FORCE_BOLD_FLAG: i64 = 1 << 18;
/// The FixedPitch bit of a font descriptor's flags (bit 1).
const FIXED_PITCH_FLAG: i64 = 1;
/// Words in a font name that mean a bold face.
const BOLD_NAME_PARTS: [&str; 7] =
    ["bold", "black", "heavy", "semibold", "demibold", "extrabold", "ultrabold"];
/// Parts of a font name that mean a monospace family: the base-14 Courier,
/// the `…Mono` families (DejaVu, Liberation, Noto, Nimbus, SF, Latin
/// Modern), the code faces of Windows, macOS and Adobe, TeX's typewriter.
const MONOSPACE_NAME_PARTS: [&str; 9] = [
    "courier",
    "mono",
    "consola",
    "menlo",
    "monaco",
    "inconsolata",
    "sourcecode",
    "typewriter",
    "cmtt",
];

/// The face a text-showing operation draws in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Face {
    pub(crate) bold: bool,
    pub(crate) monospace: bool,
}

/// Per page number, the face of each text-showing operation, in the order
/// `pdf-extract` runs them.
pub(crate) type ShowFonts = HashMap<u32, Vec<Face>>;

/// The PDF nests form XObjects in a cycle or too deeply for the parser.
#[derive(Debug)]
pub(crate) struct FormCycle;

/// Walks every page of `document`.
pub(crate) fn show_fonts(document: &Document) -> Result<ShowFonts, FormCycle> {
    let pages: BTreeMap<u32, ObjectId> = document.get_pages();
    let mut shows = HashMap::with_capacity(pages.len());
    for (number, id) in pages {
        let Ok(page) = document.get_dictionary(id) else { continue };
        let Ok(content) = document.get_page_content(id) else { continue };
        let resources = inherited_resources(document, page);
        let mut walk = Walk { document, shows: Vec::new(), forms: Vec::new() };
        walk.stream(&content, resources)?;
        shows.insert(number, walk.shows);
    }
    Ok(shows)
}

/// A page's resources, from the page tree when the page has none (as
/// `pdf-extract` finds them).
fn inherited_resources<'a>(document: &'a Document, page: &'a Dictionary) -> Option<&'a Dictionary> {
    let mut node = page;
    for _ in 0..FORM_DEPTH_MAX {
        if let Some(resources) = dictionary_entry(document, node, b"Resources") {
            return Some(resources);
        }
        let parent = node.get(b"Parent").ok()?.as_reference().ok()?;
        node = document.get_dictionary(parent).ok()?;
    }
    None
}

fn dictionary_entry<'a>(
    document: &'a Document,
    dictionary: &'a Dictionary,
    key: &[u8],
) -> Option<&'a Dictionary> {
    let object = dictionary.get(key).ok()?;
    document.dereference(object).ok()?.1.as_dict().ok()
}

struct Walk<'a> {
    document: &'a Document,
    shows: Vec<Face>,
    /// The form XObjects being drawn, outermost first.
    forms: Vec<ObjectId>,
}

impl<'a> Walk<'a> {
    fn stream(
        &mut self,
        content: &[u8],
        resources: Option<&'a Dictionary>,
    ) -> Result<(), FormCycle> {
        // The parser unwraps this decode; a stream it cannot decode fails
        // there, and nothing of ours is used.
        let Ok(content) = Content::decode(content) else { return Ok(()) };
        let mut face = Face::default();
        let mut saved = Vec::new();
        for operation in &content.operations {
            match operation.operator.as_str() {
                "q" => saved.push(face),
                "Q" => face = saved.pop().unwrap_or(face),
                "Tf" => {
                    face = operation
                        .operands
                        .first()
                        .and_then(|name| name.as_name().ok())
                        .and_then(|name| self.font(resources, name))
                        .map_or_else(Face::default, |font| face_of(self.document, font));
                }
                "Tj" => self.shows.push(face),
                "TJ" => {
                    if let Some(Object::Array(elements)) = operation.operands.first() {
                        let strings = elements.iter().filter(|e| matches!(e, Object::String(..)));
                        self.shows.extend(strings.map(|_| face));
                    }
                }
                "Do" => {
                    let name = operation.operands.first().and_then(|name| name.as_name().ok());
                    if let Some(name) = name {
                        self.form(resources, name)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn font(&self, resources: Option<&'a Dictionary>, name: &[u8]) -> Option<&'a Dictionary> {
        let fonts = dictionary_entry(self.document, resources?, b"Font")?;
        dictionary_entry(self.document, fonts, name)
    }

    /// A `Do`: the XObject's content, drawn with its own resources (or the
    /// caller's), from a fresh text state, as the parser does.
    fn form(&mut self, resources: Option<&'a Dictionary>, name: &[u8]) -> Result<(), FormCycle> {
        let Some(xobjects) = resources.and_then(|r| dictionary_entry(self.document, r, b"XObject"))
        else {
            return Ok(());
        };
        let Ok(entry) = xobjects.get(name) else { return Ok(()) };
        let Ok((id, object)) = self.document.dereference(entry) else { return Ok(()) };
        let Ok(stream) = object.as_stream() else { return Ok(()) };
        if id.is_some_and(|id| self.forms.contains(&id)) {
            return Err(FormCycle);
        }
        if self.forms.len() >= FORM_DEPTH_MAX {
            return Err(FormCycle);
        }
        let own = dictionary_entry(self.document, &stream.dict, b"Resources");
        let content = stream_content(stream);
        self.forms.push(id.unwrap_or((0, 0)));
        let walked = self.stream(&content, own.or(resources));
        self.forms.pop();
        walked
    }
}

/// A stream's bytes as the parser reads a form's: decompressed when its
/// filters can be, raw otherwise.
fn stream_content(stream: &Stream) -> Vec<u8> {
    if stream.filters().is_ok() {
        stream.decompressed_content().unwrap_or_else(|_| stream.content.clone())
    } else {
        stream.content.clone()
    }
}

/// A font dictionary's face: by its name, or by its descriptor (a
/// composite font's is its descendant's).
pub(crate) fn face_of(document: &Document, font: &Dictionary) -> Face {
    let name = font.get(b"BaseFont").ok().and_then(|name| name.as_name().ok());
    let descendant = font
        .get(b"DescendantFonts")
        .ok()
        .and_then(|fonts| document.dereference(fonts).ok())
        .and_then(|(_, fonts)| fonts.as_array().ok())
        .and_then(|fonts| fonts.first())
        .and_then(|first| document.dereference(first).ok())
        .and_then(|(_, first)| first.as_dict().ok());
    let descriptor = dictionary_entry(document, descendant.unwrap_or(font), b"FontDescriptor");
    let weight = descriptor
        .and_then(|descriptor| descriptor.get(b"FontWeight").ok())
        .and_then(|weight| weight.as_float().ok());
    let flags = descriptor
        .and_then(|descriptor| descriptor.get(b"Flags").ok())
        .and_then(|flags| flags.as_i64().ok());
    let has_flag = |flag: i64| flags.is_some_and(|flags| flags & flag != 0);
    Face {
        bold: name.is_some_and(is_bold_name)
            || weight.is_some_and(|weight| weight >= BOLD_WEIGHT_MIN)
            || has_flag(FORCE_BOLD_FLAG),
        monospace: name.is_some_and(is_monospace_name) || has_flag(FIXED_PITCH_FLAG),
    }
}

/// "Helvetica-Bold", "ABCDEF+OpenSans-SemiBold", "Arial,BoldItalic",
/// "Roboto-Black": a bold face by its name. The subset prefix is ignored.
fn is_bold_name(name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    let name = name.split_once('+').map_or(name.as_str(), |(_, rest)| rest);
    // The style is what follows the family: "Boldini" is a family.
    let style = name.find(['-', ',', '_']).map_or("", |at| &name[at + 1..]);
    let style = if style.is_empty() { name } else { style };
    BOLD_NAME_PARTS.iter().any(|part| style.contains(part))
}

/// "Courier-Bold", "ABCDEF+DejaVuSansMono", "Consolas,Italic", "CMTT10":
/// a monospace face by its name. The subset prefix is ignored.
fn is_monospace_name(name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    let name = name.split_once('+').map_or(name.as_str(), |(_, rest)| rest);
    // Monotype is a foundry ("MonotypeCorsiva"), not a monospace family.
    let name = name.replace("monotype", "");
    MONOSPACE_NAME_PARTS.iter().any(|part| name.contains(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bold_font_names() {
        for name in [
            "Helvetica-Bold",
            "Times-BoldItalic",
            "ABCDEF+OpenSans-SemiBold",
            "Arial,Bold",
            "Roboto-Black",
            "SourceSansPro-Heavy",
            "LiberationSans-Bold",
            "DejaVuSans-Bold",
        ] {
            assert!(is_bold_name(name.as_bytes()), "{name}");
        }
        for name in
            ["Helvetica", "Times-Italic", "ABCDEF+OpenSans-Regular", "Arial", "Boldini-Light"]
        {
            assert!(!is_bold_name(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn monospace_font_names() {
        for name in [
            "Courier",
            "Courier-Bold",
            "ABCDEF+DejaVuSansMono",
            "LiberationMono-Regular",
            "Consolas,Italic",
            "Menlo-Regular",
            "CMTT10",
            "LMMono10-Regular",
            "SourceCodePro-Regular",
            "Inconsolata",
        ] {
            assert!(is_monospace_name(name.as_bytes()), "{name}");
        }
        for name in ["Helvetica", "Times-Roman", "ABCDEF+DejaVuSans", "Arial,Bold", "Monotype"] {
            assert!(!is_monospace_name(name.as_bytes()), "{name}");
        }
    }
}
