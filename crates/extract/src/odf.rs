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
use crate::xml::{self, DRAW, Descend, Element, OFFICE, PRESENTATION, TABLE, TEXT, Visitor};
use crate::{DocumentKind, ExtractError, Limits};

/// The most times a repeated non-empty row or cell is written out.
pub const TABLE_REPEAT_MAX: usize = 1000;
/// The longest run of spaces one `text:s` writes.
const SPACE_RUN_MAX: usize = 100;

pub(crate) fn extract(
    bytes: &[u8],
    kind: DocumentKind,
    limits: &Limits,
) -> Result<String, ExtractError> {
    let mut package = Package::open(bytes, limits)?;
    let content_xml = package.read_required("content.xml")?;
    let mut body = Body::new(kind, limits.text_length_max);
    xml::walk(&content_xml, &mut body)?;
    Ok(body.builder.finish())
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
                self.paragraphs.push(Paragraph { is_list_item, ..Paragraph::default() });
            }
            (TEXT, "h") => {
                self.bullet_pending = false;
                let level = element
                    .attribute(TEXT, "outline-level")
                    .and_then(|level| level.trim().parse::<usize>().ok())
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
