//! Text as text: decoding Markdown and plain-text files, normalising
//! newlines, and the builder every structured format writes its blocks into.

use crate::ExtractError;
use crate::heading::{HEADING_LEVEL_MAX, escape_structure};

/// Decodes a text file. UTF-8 is what Nextcloud users mostly have; a file that
/// is not valid UTF-8 is read as Windows-1252, which is what older French and
/// German text files are, rather than refused or filled with U+FFFD. A NUL
/// byte means the file is binary whatever its name says.
pub(crate) fn decode(bytes: &[u8]) -> Result<String, ExtractError> {
    if bytes.contains(&0) {
        return Err(ExtractError::Malformed("a text file with NUL bytes is binary".into()));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_string()),
        Err(_) => Ok(bytes.iter().map(|&byte| windows_1252(byte)).collect()),
    }
}

/// `\r\n` and lone `\r` become `\n`, so byte offsets mean the same thing on
/// every platform a file was written on.
pub(crate) fn normalise_newlines(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn windows_1252(byte: u8) -> char {
    // Only 0x80..=0x9F differ from Latin-1; five of them are unassigned and
    // map to themselves, as the WHATWG encoding standard does.
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž',
        '\u{8F}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}',
        'ž', 'Ÿ',
    ];
    match byte {
        0x80..=0x9F => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// A paragraph of a structured document while it is read: its text so far,
/// its heading level, whether it is a list item.
#[derive(Debug, Default)]
pub(crate) struct Paragraph {
    pub(crate) text: String,
    pub(crate) level: Option<usize>,
    pub(crate) is_list_item: bool,
}

/// What a finished paragraph becomes in the text.
#[derive(Debug)]
pub(crate) enum Block {
    Heading(usize, String),
    Text(String),
    ListItem(String),
}

impl Paragraph {
    pub(crate) fn into_block(self) -> Block {
        match self.level {
            Some(level) => Block::Heading(level, self.text),
            None if self.is_list_item => Block::ListItem(self.text),
            None => Block::Text(self.text),
        }
    }
}

/// Appends `text` to `target` after one space, unless `text` is empty.
pub(crate) fn append_spaced(target: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !target.is_empty() {
        target.push(' ');
    }
    target.push_str(text);
}

/// Collects a structured document's blocks into its text: blocks separated by
/// one blank line, each line trimmed, empty blocks dropped, and the total
/// bounded while it grows (a document cannot make us build a huge string
/// before we notice).
#[derive(Debug)]
pub(crate) struct TextBuilder {
    text: String,
    length_max: usize,
    /// The last block written was a list item: the next item continues the
    /// list on the next line instead of opening a new paragraph.
    in_list: bool,
}

impl TextBuilder {
    pub(crate) fn new(length_max: usize) -> TextBuilder {
        TextBuilder { text: String::new(), length_max, in_list: false }
    }

    /// A finished paragraph, as what it is.
    pub(crate) fn write(&mut self, block: &Block) -> Result<(), ExtractError> {
        match block {
            Block::Heading(level, title) => self.heading(*level, title),
            Block::Text(text) => self.block(text),
            Block::ListItem(item) => self.list_item(item),
        }
    }

    /// A paragraph, list item or table: its lines, trimmed, kept together;
    /// a line that would read as a heading, an underline or a code fence is
    /// escaped ([`escape_structure`]).
    pub(crate) fn block(&mut self, block: &str) -> Result<(), ExtractError> {
        let mut lines = block.lines().map(str::trim).filter(|line| !line.is_empty()).peekable();
        if lines.peek().is_none() {
            return Ok(());
        }
        self.separate();
        self.in_list = false;
        for (index, line) in lines.enumerate() {
            if index > 0 {
                self.text.push('\n');
            }
            self.text.push_str(&escape_structure(line));
        }
        self.check()
    }

    /// A heading as a Markdown ATX line; its text on one line.
    pub(crate) fn heading(&mut self, level: usize, title: &str) -> Result<(), ExtractError> {
        let title = collapse_whitespace(title);
        if title.is_empty() {
            return Ok(());
        }
        self.separate();
        self.in_list = false;
        for _ in 0..level.clamp(1, HEADING_LEVEL_MAX) {
            self.text.push('#');
        }
        self.text.push(' ');
        self.text.push_str(&title);
        self.check()
    }

    /// A list item as `- text` on one line; consecutive items form one block.
    pub(crate) fn list_item(&mut self, item: &str) -> Result<(), ExtractError> {
        let item = collapse_whitespace(item);
        if item.is_empty() {
            return Ok(());
        }
        if self.in_list {
            self.text.push('\n');
        } else {
            self.separate();
        }
        self.in_list = true;
        self.text.push_str("- ");
        self.text.push_str(&item);
        self.check()
    }

    pub(crate) fn finish(self) -> String {
        self.text
    }

    fn separate(&mut self) {
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
    }

    fn check(&self) -> Result<(), ExtractError> {
        if self.text.len() > self.length_max {
            return Err(ExtractError::TooLarge);
        }
        Ok(())
    }
}

/// Runs of whitespace (newlines included) become one space; ends trimmed.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
