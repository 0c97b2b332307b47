//! OpenDocument text, presentations and spreadsheets: the body of
//! `content.xml`, read with one walker.
//!
//! Text is what sits in `text:p` and `text:h` (ODF collapses whitespace in
//! its XML, `text:s` and `text:tab` carry the real spaces and tabs). `text:h`
//! becomes a Markdown heading by its outline level. Each slide of a
//! presentation opens with `## Slide N: title` (the text of its title frame),
//! then its other text, speaker notes included. Each sheet of a spreadsheet
//! opens with `## Sheet N: name`, then one ` | `-separated line per row. A
//! spreadsheet may say "this empty row 1 048 576 times": empty rows and cells
//! are never repeated, and non-empty ones at most [`TABLE_REPEAT_MAX`] times.
//! Tracked deletions, comments, note citations and tables of contents are
//! left out: they are not the document's own running text, or repeat it.

use crate::docx::row_line;
use crate::package::Package;
use crate::text::{Block, Paragraph, TextBuilder, append_spaced};
use std::collections::{HashMap, HashSet};

use crate::xml::{self, DRAW, Descend, Element, OFFICE, PRESENTATION, STYLE, TABLE, TEXT, Visitor};
use crate::{DocumentKind, ExtractError, Limits};

/// The most times a repeated non-empty row or cell is written out.
pub const TABLE_REPEAT_MAX: usize = 1000;
/// The longest run of spaces one `text:s` writes.
const SPACE_RUN_MAX: usize = 100;
/// How far a chain of parent styles is followed.
const STYLE_INHERITANCE_DEPTH_MAX: usize = 16;

pub(crate) fn extract(
    bytes: &[u8],
    kind: DocumentKind,
    limits: &Limits,
) -> Result<String, ExtractError> {
    let mut package = Package::open(bytes, limits)?;
    let content_xml = package.read_required("content.xml")?;
    let mut styles = StyleReader::default();
    if kind == DocumentKind::Odt {
        if let Some(styles_xml) = package.read("styles.xml")? {
            xml::walk(&styles_xml, &mut styles)?;
        }
        xml::walk(&content_xml, &mut styles)?;
    }
    let mut body = Body::new(kind, limits.text_length_max);
    body.heading_styles = styles.heading_levels();
    body.defined_styles = styles.styles.into_keys().collect();
    xml::walk(&content_xml, &mut body)?;
    Ok(body.builder.finish())
}

/// A paragraph style as declared: its own outline level (`Some(None)` for
/// an explicit empty one), whether its name makes it a heading, its parent.
#[derive(Debug, Default)]
struct StyleDefinition {
    outline_level: Option<Option<usize>>,
    named_level: Option<usize>,
    parent: Option<String>,
}

/// The paragraph styles of `styles.xml` and of `content.xml`'s automatic
/// styles.
#[derive(Debug, Default)]
struct StyleReader {
    styles: HashMap<String, StyleDefinition>,
}

impl StyleReader {
    /// Style name → heading level, for every paragraph style that is a
    /// heading.
    fn heading_levels(&self) -> HashMap<String, usize> {
        let mut levels = HashMap::new();
        for name in self.styles.keys() {
            let mut current = name.as_str();
            for _ in 0..STYLE_INHERITANCE_DEPTH_MAX {
                let Some(style) = self.styles.get(current) else { break };
                if let Some(outline) = style.outline_level {
                    if let Some(level) = outline {
                        levels.insert(name.clone(), level);
                    }
                    break;
                }
                if let Some(level) = style.named_level {
                    levels.insert(name.clone(), level);
                    break;
                }
                match &style.parent {
                    Some(parent) => current = parent,
                    None => break,
                }
            }
        }
        levels
    }
}

impl Visitor for StyleReader {
    fn start(&mut self, element: &Element) -> Result<Descend, ExtractError> {
        match (element.ns.as_str(), element.local.as_str()) {
            // The body is not styles; skip it whole.
            (OFFICE, "body") => Ok(Descend::Skip),
            (STYLE, "style") => {
                let is_paragraph = element.attribute(STYLE, "family") == Some("paragraph");
                if let (true, Some(name)) = (is_paragraph, element.attribute(STYLE, "name")) {
                    let outline_level = element
                        .attribute(STYLE, "default-outline-level")
                        .map(|level| level.trim().parse::<usize>().ok().filter(|level| *level > 0));
                    let display = element.attribute(STYLE, "display-name").unwrap_or(name);
                    let named_level = level_from_style_name(display);
                    let parent = element.attribute(STYLE, "parent-style-name").map(str::to_string);
                    let style = StyleDefinition { outline_level, named_level, parent };
                    self.styles.insert(name.to_string(), style);
                }
                Ok(Descend::Skip)
            }
            _ => Ok(Descend::Into),
        }
    }

    fn end(&mut self, _ns: &str, _local: &str) -> Result<(), ExtractError> {
        Ok(())
    }

    fn text(&mut self, _text: &str) -> Result<(), ExtractError> {
        Ok(())
    }
}

/// "Title" is 1, "Heading 2" (or its encoded name "Heading_20_2") is 2.
fn level_from_style_name(name: &str) -> Option<usize> {
    let name = name.replace("_20_", " ");
    if name.trim() == "Title" {
        return Some(1);
    }
    let level: usize = name.strip_prefix("Heading")?.trim().parse().ok()?;
    (1..=10).contains(&level).then_some(level)
}

#[derive(Debug, Default)]
struct Table {
    rows: Vec<String>,
    cells: Vec<String>,
    cell: String,
    /// The open cell's `office:value`, shown when its paragraphs are empty.
    cell_value: Option<String>,
    cell_repeat: usize,
    row_repeat: usize,
    /// Bytes held in `cells` and `rows`: repeats multiply, so this is
    /// checked as the table grows rather than when it is written out.
    length: usize,
}

#[derive(Debug, Default)]
struct Slide {
    number: usize,
    title: String,
    blocks: Vec<Block>,
}

struct Body {
    kind: DocumentKind,
    /// Paragraph style name → heading level (text documents only).
    heading_styles: HashMap<String, usize>,
    /// Every paragraph style the document defines.
    defined_styles: HashSet<String>,
    builder: TextBuilder,
    text_length_max: usize,
    paragraphs: Vec<Paragraph>,
    tables: Vec<Table>,
    /// The slide being read, in a presentation.
    slide: Option<Slide>,
    slide_count: usize,
    sheet_count: usize,
    /// Depth inside a presentation title frame.
    title_depth: usize,
    /// A list item opened and its first paragraph not yet seen.
    bullet_pending: bool,
}

impl Body {
    fn new(kind: DocumentKind, text_length_max: usize) -> Body {
        Body {
            kind,
            heading_styles: HashMap::new(),
            defined_styles: HashSet::new(),
            builder: TextBuilder::new(text_length_max),
            text_length_max,
            paragraphs: Vec::new(),
            tables: Vec::new(),
            slide: None,
            slide_count: 0,
            sheet_count: 0,
            title_depth: 0,
            bullet_pending: false,
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            paragraph.text.push_str(text);
        }
    }

    /// The heading level a paragraph's style gives it.
    fn style_level(&self, element: &Element) -> Option<usize> {
        let name = element.attribute(TEXT, "style-name")?;
        match self.heading_styles.get(name) {
            Some(level) => Some(*level),
            // A style the document does not define is known by its name.
            None if self.kind == DocumentKind::Odt && !self.defined_styles.contains(name) => {
                level_from_style_name(name)
            }
            None => None,
        }
    }

    fn emit(&mut self, block: Block) -> Result<(), ExtractError> {
        if let Some(slide) = self.slide.as_mut() {
            slide.blocks.push(block);
            return Ok(());
        }
        self.builder.write(&block)
    }

    fn end_paragraph(&mut self) -> Result<(), ExtractError> {
        let Some(paragraph) = self.paragraphs.pop() else { return Ok(()) };
        if let Some(table) = self.tables.last_mut() {
            let text = crate::text::collapse_whitespace(&paragraph.text);
            append_spaced(&mut table.cell, &text);
            return Ok(());
        }
        if self.title_depth > 0 {
            if let Some(slide) = self.slide.as_mut() {
                append_spaced(&mut slide.title, &crate::text::collapse_whitespace(&paragraph.text));
            }
            return Ok(());
        }
        self.emit(paragraph.into_block())
    }

    fn end_cell(&mut self) -> Result<(), ExtractError> {
        let Some(table) = self.tables.last_mut() else { return Ok(()) };
        let mut cell = std::mem::take(&mut table.cell);
        if let (true, Some(value)) = (cell.trim().is_empty(), table.cell_value.take()) {
            cell = value;
        }
        let repeat = if cell.trim().is_empty() { 1 } else { table.cell_repeat };
        push_repeated(&mut table.cells, &cell, repeat, &mut table.length, self.text_length_max)
    }

    fn end_row(&mut self) -> Result<(), ExtractError> {
        let Some(table) = self.tables.last_mut() else { return Ok(()) };
        let cells = std::mem::take(&mut table.cells);
        let cells_length: usize = cells.iter().map(String::len).sum();
        table.length = table.length.saturating_sub(cells_length);
        let line = row_line(&cells);
        if line.is_empty() {
            return Ok(());
        }
        let repeat = table.row_repeat;
        push_repeated(&mut table.rows, &line, repeat, &mut table.length, self.text_length_max)
    }

    fn end_table(&mut self) -> Result<(), ExtractError> {
        let Some(table) = self.tables.pop() else { return Ok(()) };
        let rows = table.rows.join("\n");
        match self.tables.last_mut() {
            Some(outer) => {
                append_spaced(&mut outer.cell, &crate::text::collapse_whitespace(&rows));
                Ok(())
            }
            None => self.emit(Block::Text(rows)),
        }
    }

    fn end_slide(&mut self) -> Result<(), ExtractError> {
        let Some(slide) = self.slide.take() else { return Ok(()) };
        let heading = if slide.title.is_empty() {
            format!("Slide {}", slide.number)
        } else {
            format!("Slide {}: {}", slide.number, slide.title)
        };
        self.emit(Block::Heading(2, heading))?;
        for block in slide.blocks {
            self.emit(block)?;
        }
        Ok(())
    }
}

impl Visitor for Body {
    fn start(&mut self, element: &Element) -> Result<Descend, ExtractError> {
        match (element.ns.as_str(), element.local.as_str()) {
            (TEXT, "tracked-changes" | "note-citation" | "table-of-content")
            | (OFFICE, "annotation") => return Ok(Descend::Skip),
            (TEXT, "p") => {
                let is_list_item = std::mem::take(&mut self.bullet_pending);
                let level = self.style_level(element);
                self.paragraphs.push(Paragraph { is_list_item, level, ..Paragraph::default() });
            }
            (TEXT, "h") => {
                self.bullet_pending = false;
                let level = element
                    .attribute(TEXT, "outline-level")
                    .and_then(|level| level.trim().parse::<usize>().ok())
                    .or_else(|| self.style_level(element))
                    .unwrap_or(1);
                self.paragraphs.push(Paragraph { level: Some(level), ..Paragraph::default() });
            }
            (TEXT, "list-item") => self.bullet_pending = true,
            (TEXT, "s") => {
                let count = element
                    .attribute(TEXT, "c")
                    .and_then(|count| count.trim().parse::<usize>().ok())
                    .unwrap_or(1);
                self.push_text(&" ".repeat(count.clamp(1, SPACE_RUN_MAX)));
            }
            (TEXT, "tab") => self.push_text("\t"),
            (TEXT, "line-break") => self.push_text("\n"),
            (TABLE, "table") => {
                if self.kind == DocumentKind::Ods && self.tables.is_empty() {
                    self.sheet_count += 1;
                    let heading = match element.attribute(TABLE, "name") {
                        Some(name) if !name.trim().is_empty() => {
                            format!("Sheet {}: {}", self.sheet_count, name.trim())
                        }
                        _ => format!("Sheet {}", self.sheet_count),
                    };
                    self.emit(Block::Heading(2, heading))?;
                }
                self.tables.push(Table::default());
            }
            (TABLE, "table-row") => {
                if let Some(table) = self.tables.last_mut() {
                    table.row_repeat = repeat(element.attribute(TABLE, "number-rows-repeated"));
                }
            }
            (TABLE, "table-cell" | "covered-table-cell") => {
                if let Some(table) = self.tables.last_mut() {
                    table.cell_repeat = repeat(element.attribute(TABLE, "number-columns-repeated"));
                    table.cell_value = ["value", "date-value", "time-value", "boolean-value"]
                        .iter()
                        .find_map(|name| element.attribute(OFFICE, name))
                        .map(str::to_string);
                }
            }
            (DRAW, "page") if self.kind == DocumentKind::Odp && self.slide.is_none() => {
                self.slide_count += 1;
                self.slide = Some(Slide { number: self.slide_count, ..Slide::default() });
            }
            // Frames nested in a title frame are part of the title.
            (DRAW, "frame")
                if self.title_depth > 0
                    || (self.slide.is_some()
                        && element.attribute(PRESENTATION, "class") == Some("title")) =>
            {
                self.title_depth += 1;
            }
            _ => {}
        }
        Ok(Descend::Into)
    }

    fn end(&mut self, ns: &str, local: &str) -> Result<(), ExtractError> {
        match (ns, local) {
            (TEXT, "p" | "h") => self.end_paragraph()?,
            (TEXT, "list-item") => self.bullet_pending = false,
            (TABLE, "table-cell" | "covered-table-cell") => self.end_cell()?,
            (TABLE, "table-row") => self.end_row()?,
            (TABLE, "table") => self.end_table()?,
            (DRAW, "page") if self.kind == DocumentKind::Odp => self.end_slide()?,
            (DRAW, "frame") => self.title_depth = self.title_depth.saturating_sub(1),
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), ExtractError> {
        if self.paragraphs.is_empty() {
            return Ok(());
        }
        // Whitespace in ODF markup is insignificant beyond one space.
        let mut collapsed = String::with_capacity(text.len());
        let mut in_space = false;
        for character in text.chars() {
            if matches!(character, ' ' | '\t' | '\n' | '\r') {
                if !in_space {
                    collapsed.push(' ');
                }
                in_space = true;
            } else {
                collapsed.push(character);
                in_space = false;
            }
        }
        self.push_text(&collapsed);
        Ok(())
    }
}

/// Pushes `item` `times` times (a repeated cell or row), counting each copy
/// against the table's bound before it is made.
fn push_repeated(
    into: &mut Vec<String>,
    item: &str,
    times: usize,
    length: &mut usize,
    length_max: usize,
) -> Result<(), ExtractError> {
    for _ in 0..times {
        *length += item.len();
        if *length > length_max {
            return Err(ExtractError::TooLarge);
        }
        into.push(item.to_string());
    }
    Ok(())
}

fn repeat(attribute: Option<&str>) -> usize {
    attribute
        .and_then(|count| count.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, TABLE_REPEAT_MAX)
}
