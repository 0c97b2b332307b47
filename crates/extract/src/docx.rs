//! DOCX (WordprocessingML): the body of `word/document.xml`, headings from
//! the paragraph styles of `word/styles.xml`.
//!
//! A heading is a paragraph whose style is a heading: by its English name
//! ("heading 2", "Title" — Word writes those names even in localised
//! documents, whose style ids are "Titre1" or "berschrift1"), by an outline
//! level, or by a style it is based on. Tables become one ` | `-separated
//! line per row. Deleted text (`w:delText`), field codes and the fallback copy
//! of text boxes (`mc:Fallback`) are not text the reader sees and are left
//! out. Headers, footers, footnotes and comments are left out too: they are
//! separate parts and rarely what a search is for.

use std::collections::HashMap;

use crate::package::Package;
use crate::text::{Paragraph, TextBuilder, append_spaced};
use crate::xml::{self, Descend, Element, MC, Visitor, W};
use crate::{ExtractError, Limits};

/// How far a chain of `w:basedOn` styles is followed.
const STYLE_INHERITANCE_DEPTH_MAX: usize = 16;
/// Word's outline level 9 means "body text"; 0..=8 are heading levels 1..=9.
const OUTLINE_LEVEL_COUNT: usize = 9;

pub(crate) fn extract(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    let mut package = Package::open(bytes, limits)?;
    let styles = match package.read("word/styles.xml")? {
        Some(styles_xml) => heading_styles(&styles_xml)?,
        None => HashMap::new(),
    };
    let document_xml = package.read_required("word/document.xml")?;
    let mut body = Body::new(styles, limits.text_length_max);
    xml::walk(&document_xml, &mut body)?;
    Ok(body.builder.finish())
}

/// Style id → heading level (1 = `#`), for every paragraph style that is a
/// heading.
fn heading_styles(styles_xml: &str) -> Result<HashMap<String, usize>, ExtractError> {
    let mut reader = StyleReader::default();
    xml::walk(styles_xml, &mut reader)?;
    let mut levels = HashMap::new();
    for id in reader.styles.keys() {
        let mut current = id.as_str();
        for _ in 0..STYLE_INHERITANCE_DEPTH_MAX {
            let Some(style) = reader.styles.get(current) else { break };
            if style.is_body_text {
                break;
            }
            if let Some(level) = style.level {
                levels.insert(id.clone(), level);
                break;
            }
            match &style.based_on {
                Some(parent) => current = parent,
                None => break,
            }
        }
    }
    Ok(levels)
}

#[derive(Debug, Default)]
struct StyleDefinition {
    level: Option<usize>,
    /// `w:outlineLvl` 9: body text, whatever the style it is based on.
    is_body_text: bool,
    based_on: Option<String>,
}

#[derive(Debug, Default)]
struct StyleReader {
    styles: HashMap<String, StyleDefinition>,
    /// The paragraph style being read.
    current: Option<String>,
}

impl Visitor for StyleReader {
    fn start(&mut self, element: &Element) -> Result<Descend, ExtractError> {
        if element.ns != W {
            return Ok(Descend::Into);
        }
        if element.local == "style" {
            self.current = None;
            let is_paragraph = element.attribute(W, "type").is_none_or(|kind| kind == "paragraph");
            if let (true, Some(id)) = (is_paragraph, element.attribute(W, "styleId")) {
                let level = level_from_style_id(id);
                let style = StyleDefinition { level, ..StyleDefinition::default() };
                self.styles.insert(id.to_string(), style);
                self.current = Some(id.to_string());
            }
            return Ok(Descend::Into);
        }
        let Some(style) = self.current.as_ref().and_then(|id| self.styles.get_mut(id)) else {
            return Ok(Descend::Into);
        };
        match element.local.as_str() {
            "name" => {
                if let Some(level) = element.attribute(W, "val").and_then(level_from_style_name) {
                    style.level = Some(level);
                }
            }
            "outlineLvl" => {
                let value = element.attribute(W, "val").unwrap_or("");
                style.level = level_from_outline(value);
                style.is_body_text = style.level.is_none() && is_body_text_outline(value);
            }
            "basedOn" => style.based_on = element.attribute(W, "val").map(str::to_string),
            _ => {}
        }
        Ok(Descend::Into)
    }

    fn end(&mut self, ns: &str, local: &str) -> Result<(), ExtractError> {
        if ns == W && local == "style" {
            self.current = None;
        }
        Ok(())
    }

    fn text(&mut self, _text: &str) -> Result<(), ExtractError> {
        Ok(())
    }
}

/// "Title", "Heading1" … "Heading9": the ids Word gives its built-in styles
/// in English documents, and all we have when `styles.xml` is missing.
fn level_from_style_id(id: &str) -> Option<usize> {
    level_from_style_name(id)
}

/// "title", "heading 1" … "heading 9" (case and spaces ignored).
fn level_from_style_name(name: &str) -> Option<usize> {
    let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    let name = name.to_ascii_lowercase();
    if name == "title" {
        return Some(1);
    }
    let level: usize = name.strip_prefix("heading")?.parse().ok()?;
    (1..=OUTLINE_LEVEL_COUNT).contains(&level).then_some(level)
}

fn is_body_text_outline(value: &str) -> bool {
    value.trim().parse::<usize>().is_ok_and(|outline| outline >= OUTLINE_LEVEL_COUNT)
}

fn level_from_outline(value: &str) -> Option<usize> {
    let outline: usize = value.trim().parse().ok()?;
    (outline < OUTLINE_LEVEL_COUNT).then_some(outline + 1)
}

#[derive(Debug, Default)]
struct Table {
    rows: Vec<String>,
    cells: Vec<String>,
    cell: String,
}

struct Body {
    styles: HashMap<String, usize>,
    builder: TextBuilder,
    /// Open paragraphs: a text box inside a paragraph holds paragraphs.
    paragraphs: Vec<Paragraph>,
    /// Open tables, innermost last.
    tables: Vec<Table>,
    /// Depth inside `w:t` (text is taken only there).
    text_depth: usize,
    /// Depth inside `w:r` (a `w:tab` there is a tab, elsewhere a tab stop).
    run_depth: usize,
    /// Depth inside `w:pPr` (where the style and numbering are).
    properties_depth: usize,
}

impl Body {
    fn new(styles: HashMap<String, usize>, text_length_max: usize) -> Body {
        Body {
            styles,
            builder: TextBuilder::new(text_length_max),
            paragraphs: Vec::new(),
            tables: Vec::new(),
            text_depth: 0,
            run_depth: 0,
            properties_depth: 0,
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            paragraph.text.push_str(text);
        }
    }

    fn end_paragraph(&mut self) -> Result<(), ExtractError> {
        let Some(paragraph) = self.paragraphs.pop() else { return Ok(()) };
        if let Some(table) = self.tables.last_mut() {
            append_spaced(&mut table.cell, &crate::text::collapse_whitespace(&paragraph.text));
            return Ok(());
        }
        self.builder.write(&paragraph.into_block())
    }

    fn end_table(&mut self) -> Result<(), ExtractError> {
        let Some(table) = self.tables.pop() else { return Ok(()) };
        let rows = table.rows.join("\n");
        match self.tables.last_mut() {
            // A nested table is part of the outer table's cell.
            Some(outer) => {
                if !outer.cell.is_empty() {
                    outer.cell.push(' ');
                }
                outer.cell.push_str(&crate::text::collapse_whitespace(&rows));
                Ok(())
            }
            None => self.builder.block(&rows),
        }
    }
}

impl Visitor for Body {
    fn start(&mut self, element: &Element) -> Result<Descend, ExtractError> {
        if element.ns == MC && element.local == "Fallback" {
            return Ok(Descend::Skip);
        }
        if element.ns != W {
            return Ok(Descend::Into);
        }
        match element.local.as_str() {
            // Tracked changes keep the old properties; they are not the style
            // the reader sees.
            "pPrChange" | "rPrChange" | "delText" | "instrText" => return Ok(Descend::Skip),
            "p" => self.paragraphs.push(Paragraph::default()),
            "pPr" => self.properties_depth += 1,
            "pStyle" if self.properties_depth > 0 => {
                let level = element.attribute(W, "val").and_then(|id| {
                    self.styles.get(id).copied().or_else(|| level_from_style_id(id))
                });
                if let (Some(paragraph), Some(level)) = (self.paragraphs.last_mut(), level) {
                    paragraph.level = Some(level);
                }
            }
            // The paragraph's own outline level wins over its style's; 9 is
            // body text.
            "outlineLvl" if self.properties_depth > 0 => {
                let value = element.attribute(W, "val").unwrap_or("");
                if let Some(paragraph) = self.paragraphs.last_mut() {
                    if let Some(level) = level_from_outline(value) {
                        paragraph.level = Some(level);
                    } else if is_body_text_outline(value) {
                        paragraph.level = None;
                    }
                }
            }
            "numPr" if self.properties_depth > 0 => {
                if let Some(paragraph) = self.paragraphs.last_mut() {
                    paragraph.is_list_item = true;
                }
            }
            "r" => self.run_depth += 1,
            "t" => self.text_depth += 1,
            "tab" if self.run_depth > 0 => self.push_text("\t"),
            "br" | "cr" if self.run_depth > 0 => self.push_text("\n"),
            "noBreakHyphen" if self.run_depth > 0 => self.push_text("-"),
            "tbl" => self.tables.push(Table::default()),
            _ => {}
        }
        Ok(Descend::Into)
    }

    fn end(&mut self, ns: &str, local: &str) -> Result<(), ExtractError> {
        if ns != W {
            return Ok(());
        }
        match local {
            "p" => self.end_paragraph()?,
            "pPr" => self.properties_depth = self.properties_depth.saturating_sub(1),
            "r" => self.run_depth = self.run_depth.saturating_sub(1),
            "t" => self.text_depth = self.text_depth.saturating_sub(1),
            "tc" => {
                if let Some(table) = self.tables.last_mut() {
                    let cell = std::mem::take(&mut table.cell);
                    table.cells.push(cell);
                }
            }
            "tr" => {
                if let Some(table) = self.tables.last_mut() {
                    let cells = std::mem::take(&mut table.cells);
                    table.rows.push(row_line(&cells));
                }
            }
            "tbl" => self.end_table()?,
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), ExtractError> {
        if self.text_depth > 0 {
            self.push_text(text);
        }
        Ok(())
    }
}

/// A table row as one line: cells joined by ` | `, trailing empty cells
/// dropped.
pub(crate) fn row_line(cells: &[String]) -> String {
    let used = cells.iter().rposition(|cell| !cell.trim().is_empty()).map_or(0, |last| last + 1);
    cells[..used].iter().map(|cell| cell.trim()).collect::<Vec<_>>().join(" | ")
}
