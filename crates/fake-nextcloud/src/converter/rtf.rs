//! A small RTF reader: the body text of an RTF document as plain text, for
//! the converter's `rtf` → `txt` conversions.
//!
//! It reads the RTF 1.9 syntax — groups, control words with their optional
//! numeric parameter and delimiting space, control symbols, `\'hh` escapes,
//! `\uN` with its `\ucN` fallback count, `\bin` data — and keeps only the
//! text a reader would see: destinations that are not body text (`\*`
//! groups, the font and colour tables, the stylesheet, `\info`, pictures,
//! headers, footers, footnotes, field instructions, embedded objects'
//! data...) are skipped whole; a field's or an object's visible result is
//! kept.
//! `\par` ends a paragraph and paragraphs are separated by a blank line;
//! `\line` is a newline, `\tab` and `\cell` a tab, `\row` a table row per
//! line.
//!
//! What it does not pretend to do: bytes are decoded as Windows-1252 (the
//! default `\ansi` code page); a document that declares another code page
//! (`\ansicpg1251`, `\mac`, `\pc`) and has text in bytes above 0x7F is
//! refused rather than turned into mojibake. Per-font charsets
//! (`\fcharset`) are not followed, and no formatting survives. Malformed
//! input — not starting with `{\rtf`, unbalanced braces, a broken control
//! sequence, `\bin` data running past the end — is an error, never a panic.
//! We rejected a general RTF model (a document tree with formatting): the
//! converter only ever needs the text.

/// The deepest group nesting read; a deeper document is refused.
pub const GROUP_DEPTH_MAX: usize = 256;
/// RTF's limit on the letters of a control word.
const CONTROL_WORD_LENGTH_MAX: usize = 32;
/// RTF's limit on the digits of a control word's parameter.
const PARAMETER_DIGITS_MAX: usize = 10;
/// The code page RTF text is in unless the document says otherwise.
const WINDOWS_1252: i64 = 1252;

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtfError {
    #[error("the document does not start with {{\\rtf")]
    NotRtf,
    #[error("a group is closed at byte {0} that was never opened")]
    UnopenedGroup(usize),
    #[error("the document ends inside a group")]
    UnclosedGroup,
    #[error("groups nest deeper than {GROUP_DEPTH_MAX}")]
    TooDeep,
    #[error("content after the document's closing brace, at byte {0}")]
    TrailingContent(usize),
    #[error("a malformed control sequence at byte {0}")]
    MalformedControl(usize),
    #[error("\\bin data at byte {0} runs past the end of the document")]
    TruncatedBinary(usize),
    #[error("text in code page {0}, which this reader does not decode")]
    UnsupportedCodePage(i64),
}

/// The text of an RTF document: paragraphs separated by a blank line, with
/// a final newline when there is any text.
pub fn to_text(document: &[u8]) -> Result<String, RtfError> {
    let document = document.strip_prefix(b"\xef\xbb\xbf").unwrap_or(document);
    let start = document.iter().position(|byte| !byte.is_ascii_whitespace()).unwrap_or(0);
    let document = &document[start..];
    if !document.starts_with(b"{\\rtf") {
        return Err(RtfError::NotRtf);
    }
    Reader::new(document).read()
}

/// The state a group inherits from its parent and restores on `}`.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// Inside a destination whose text is not body text.
    skipped: bool,
    /// `\ucN`: the fallback characters that follow each `\uN`.
    fallback_count: u32,
}

struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
    /// The open groups, innermost last; empty before the first `{`.
    groups: Vec<Group>,
    /// `\ansicpgN` and friends; Windows-1252 unless declared.
    code_page: i64,
    /// Fallback characters of the last `\uN` still to be skipped.
    fallback_remaining: u32,
    text: Text,
}

/// What a control word or symbol means for the text.
enum Action {
    Nothing,
    Character(char),
    Paragraph,
    Row,
    SkipDestination,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            position: 0,
            groups: Vec::new(),
            code_page: WINDOWS_1252,
            fallback_remaining: 0,
            text: Text::default(),
        }
    }

    fn read(mut self) -> Result<String, RtfError> {
        // Each turn consumes at least one byte, so the loop ends.
        loop {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(RtfError::UnclosedGroup);
            };
            match byte {
                b'{' => {
                    if self.groups.len() >= GROUP_DEPTH_MAX {
                        return Err(RtfError::TooDeep);
                    }
                    let group = self
                        .groups
                        .last()
                        .copied()
                        .unwrap_or(Group { skipped: false, fallback_count: 1 });
                    self.groups.push(group);
                    self.fallback_remaining = 0;
                    self.position += 1;
                }
                b'}' => {
                    if self.groups.pop().is_none() {
                        return Err(RtfError::UnopenedGroup(self.position));
                    }
                    self.fallback_remaining = 0;
                    self.position += 1;
                    if self.groups.is_empty() {
                        return self.finish();
                    }
                }
                b'\\' => self.control()?,
                b'\r' | b'\n' => self.position += 1,
                _ => {
                    self.position += 1;
                    if self.consumed_as_fallback() {
                        continue;
                    }
                    let character = self.decode(byte)?;
                    self.push(character);
                }
            }
        }
    }

    /// After the document's group: only whitespace and NULs may follow.
    fn finish(self) -> Result<String, RtfError> {
        let rest = &self.bytes[self.position..];
        if let Some(offset) = rest.iter().position(|byte| !byte.is_ascii_whitespace() && *byte != 0)
        {
            return Err(RtfError::TrailingContent(self.position + offset));
        }
        Ok(self.text.finish())
    }

    fn group(&mut self) -> &mut Group {
        self.groups.last_mut().expect("text and control words come inside the document's group")
    }

    /// True when the next character is one of a `\uN`'s fallback characters
    /// (and so is dropped).
    fn consumed_as_fallback(&mut self) -> bool {
        if self.fallback_remaining == 0 {
            return false;
        }
        self.fallback_remaining -= 1;
        true
    }

    fn push(&mut self, character: Option<char>) {
        if self.group().skipped {
            return;
        }
        if let Some(character) = character {
            self.text.push(character);
        }
    }

    /// A text byte (raw or `\'hh`) in the document's code page; `None` for
    /// control characters, which carry no text.
    fn decode(&self, byte: u8) -> Result<Option<char>, RtfError> {
        Ok(match byte {
            b'\t' => Some('\t'),
            0x00..=0x1f | 0x7f => None,
            0x20..=0x7e => Some(byte as char),
            _ if self.group_is_skipped() => None,
            _ if self.code_page == WINDOWS_1252 => Some(windows_1252(byte)),
            _ => return Err(RtfError::UnsupportedCodePage(self.code_page)),
        })
    }

    fn group_is_skipped(&self) -> bool {
        self.groups.last().is_some_and(|group| group.skipped)
    }

    /// A backslash: a control word, `\'hh`, or a control symbol.
    fn control(&mut self) -> Result<(), RtfError> {
        let start = self.position;
        let Some(&first) = self.bytes.get(start + 1) else {
            return Err(RtfError::MalformedControl(start));
        };
        if first.is_ascii_alphabetic() {
            return self.control_word(start);
        }
        if first == b'\'' {
            let hex =
                self.bytes.get(start + 2..start + 4).ok_or(RtfError::MalformedControl(start))?;
            let byte = std::str::from_utf8(hex)
                .ok()
                .filter(|hex| hex.bytes().all(|digit| digit.is_ascii_hexdigit()))
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or(RtfError::MalformedControl(start))?;
            self.position = start + 4;
            if self.consumed_as_fallback() {
                return Ok(());
            }
            let character = self.decode(byte)?;
            self.push(character);
            return Ok(());
        }
        self.position = start + 2;
        if self.consumed_as_fallback() {
            return Ok(());
        }
        let action = match first {
            b'\\' | b'{' | b'}' => Action::Character(first as char),
            b'~' => Action::Character('\u{a0}'),
            b'_' => Action::Character('\u{2011}'),
            // A backslash before a line end is `\par`.
            b'\n' | b'\r' => Action::Paragraph,
            b'*' => Action::SkipDestination,
            // `\-` optional hyphen, `\:` index subentry, `\|` formula, and
            // symbols RTF does not define.
            _ => Action::Nothing,
        };
        self.act(action);
        Ok(())
    }

    fn control_word(&mut self, start: usize) -> Result<(), RtfError> {
        let bytes = self.bytes;
        let name_start = start + 1;
        let mut end = name_start;
        while bytes.get(end).is_some_and(u8::is_ascii_alphabetic) {
            end += 1;
        }
        if end - name_start > CONTROL_WORD_LENGTH_MAX {
            return Err(RtfError::MalformedControl(start));
        }
        let name = &bytes[name_start..end];
        let negative =
            bytes.get(end) == Some(&b'-') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
        let digits_start = if negative { end + 1 } else { end };
        let mut digits_end = digits_start;
        while bytes.get(digits_end).is_some_and(u8::is_ascii_digit) {
            digits_end += 1;
        }
        if digits_end - digits_start > PARAMETER_DIGITS_MAX {
            return Err(RtfError::MalformedControl(start));
        }
        let parameter = (digits_end > digits_start).then(|| {
            let magnitude = bytes[digits_start..digits_end]
                .iter()
                .fold(0_i64, |value, digit| value * 10 + i64::from(digit - b'0'));
            if negative { -magnitude } else { magnitude }
        });
        self.position =
            if bytes.get(digits_end) == Some(&b' ') { digits_end + 1 } else { digits_end };
        if name == b"bin" {
            // Binary data is skipped whatever the state: it is not text.
            let length = usize::try_from(parameter.unwrap_or(0))
                .map_err(|_| RtfError::MalformedControl(start))?;
            if self.bytes.len() - self.position < length {
                return Err(RtfError::TruncatedBinary(start));
            }
            self.position += length;
            self.consumed_as_fallback();
            return Ok(());
        }
        if self.consumed_as_fallback() {
            return Ok(());
        }
        let action = match name {
            b"par" | b"sect" | b"page" => Action::Paragraph,
            b"line" => Action::Character('\n'),
            b"tab" | b"cell" | b"nestcell" => Action::Character('\t'),
            b"row" | b"nestrow" => Action::Row,
            b"emdash" => Action::Character('—'),
            b"endash" => Action::Character('–'),
            b"emspace" => Action::Character('\u{2003}'),
            b"enspace" => Action::Character('\u{2002}'),
            b"qmspace" => Action::Character('\u{2005}'),
            b"bullet" => Action::Character('•'),
            b"lquote" => Action::Character('‘'),
            b"rquote" => Action::Character('’'),
            b"ldblquote" => Action::Character('“'),
            b"rdblquote" => Action::Character('”'),
            b"zwj" => Action::Character('\u{200d}'),
            b"zwnj" => Action::Character('\u{200c}'),
            b"ltrmark" => Action::Character('\u{200e}'),
            b"rtlmark" => Action::Character('\u{200f}'),
            b"u" => {
                if let Some(value) = parameter {
                    if !self.group_is_skipped() {
                        self.text.push_utf16(utf16_unit(value));
                    }
                    self.fallback_remaining = self.group().fallback_count;
                }
                Action::Nothing
            }
            b"uc" => {
                let count = parameter.unwrap_or(1).clamp(0, i64::from(u32::MAX));
                self.group().fallback_count = count as u32;
                Action::Nothing
            }
            b"ansi" => {
                self.code_page = WINDOWS_1252;
                Action::Nothing
            }
            b"ansicpg" => {
                self.code_page = parameter.unwrap_or(WINDOWS_1252);
                Action::Nothing
            }
            b"mac" => {
                self.code_page = 10000;
                Action::Nothing
            }
            b"pc" => {
                self.code_page = 437;
                Action::Nothing
            }
            b"pca" => {
                self.code_page = 850;
                Action::Nothing
            }
            _ if SKIPPED_DESTINATIONS.contains(&name) => Action::SkipDestination,
            _ => Action::Nothing,
        };
        self.act(action);
        Ok(())
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Nothing => {}
            Action::Character(character) => self.push(Some(character)),
            Action::SkipDestination => self.group().skipped = true,
            Action::Paragraph if !self.group_is_skipped() => self.text.end_block(Block::Paragraph),
            Action::Row if !self.group_is_skipped() => self.text.end_block(Block::Row),
            Action::Paragraph | Action::Row => {}
        }
    }
}

/// Destinations whose content is not body text. A `\*` destination is
/// skipped as well, whatever its name.
const SKIPPED_DESTINATIONS: &[&[u8]] = &[
    b"fonttbl",
    b"colortbl",
    b"stylesheet",
    b"listtable",
    b"listoverridetable",
    b"revtbl",
    b"rsidtbl",
    b"filetbl",
    b"info",
    b"pict",
    b"nonshppict",
    b"objdata",
    b"objclass",
    b"objname",
    b"header",
    b"headerl",
    b"headerr",
    b"headerf",
    b"footer",
    b"footerl",
    b"footerr",
    b"footerf",
    b"footnote",
    b"ftnsep",
    b"ftnsepc",
    b"ftncn",
    b"aftnsep",
    b"aftnsepc",
    b"aftncn",
    b"annotation",
    b"atnid",
    b"atnauthor",
    b"atndate",
    b"atnref",
    b"atrfstart",
    b"atrfend",
    b"fldinst",
    b"pn",
    b"pntxta",
    b"pntxtb",
    b"xe",
    b"tc",
    b"txe",
    b"bkmkstart",
    b"bkmkend",
    b"template",
    b"docvar",
    b"userprops",
    b"private",
    b"generator",
    b"xmlnstbl",
    b"themedata",
    b"colorschememapping",
    b"datastore",
    b"latentstyles",
];

/// `\uN`: a signed 16-bit UTF-16 unit (negative N means N + 65536);
/// `None` for a value outside 16 bits.
fn utf16_unit(value: i64) -> Option<u16> {
    let unit = if value < 0 { value + 65_536 } else { value };
    u16::try_from(unit).ok()
}

/// Windows-1252, as Windows decodes it; its five unassigned bytes (0x81,
/// 0x8D, 0x8F, 0x90, 0x9D) become U+FFFD.
fn windows_1252(byte: u8) -> char {
    const HIGH_CONTROLS: [char; 32] = [
        '€', '\u{fffd}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{fffd}', 'Ž',
        '\u{fffd}', '\u{fffd}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ',
        '\u{fffd}', 'ž', 'Ÿ',
    ];
    match byte {
        0x80..=0x9f => HIGH_CONTROLS[usize::from(byte - 0x80)],
        // The rest is Latin-1.
        _ => char::from(byte),
    }
}

/// How a block of text ended, which decides how it is joined to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Paragraph,
    Row,
}

/// The text so far: finished blocks in `out`, the open one in `block`.
/// Paragraphs are separated by a blank line, consecutive table rows by a
/// newline; blocks with no visible text are dropped (RTF writers use empty
/// paragraphs for spacing).
#[derive(Debug, Default)]
struct Text {
    out: String,
    block: String,
    last: Option<Block>,
    /// The first half of a surrogate pair sent as two `\uN`.
    high_surrogate: Option<u16>,
}

impl Text {
    fn push(&mut self, character: char) {
        self.flush_surrogate();
        self.block.push(character);
    }

    /// One UTF-16 unit from `\uN`: pairs of surrogates make one character,
    /// a lone half (or no unit at all) is U+FFFD.
    fn push_utf16(&mut self, unit: Option<u16>) {
        let Some(unit) = unit else {
            self.push(char::REPLACEMENT_CHARACTER);
            return;
        };
        match unit {
            0xd800..=0xdbff => {
                self.flush_surrogate();
                self.high_surrogate = Some(unit);
            }
            0xdc00..=0xdfff => {
                let character = match self.high_surrogate.take() {
                    Some(high) => char::decode_utf16([high, unit])
                        .next()
                        .and_then(Result::ok)
                        .expect("a high and a low surrogate make a character"),
                    None => char::REPLACEMENT_CHARACTER,
                };
                self.block.push(character);
            }
            _ => self.push(char::from_u32(u32::from(unit)).expect("not a surrogate")),
        }
    }

    fn flush_surrogate(&mut self) {
        if self.high_surrogate.take().is_some() {
            self.block.push(char::REPLACEMENT_CHARACTER);
        }
    }

    fn end_block(&mut self, kind: Block) {
        self.flush_surrogate();
        if kind == Block::Row && self.block.ends_with('\t') {
            // The row's last `\cell`.
            self.block.pop();
        }
        if self.block.trim().is_empty() {
            self.block.clear();
            return;
        }
        match self.last {
            None => {}
            Some(Block::Row) if kind == Block::Row => self.out.push('\n'),
            Some(_) => self.out.push_str("\n\n"),
        }
        self.out.push_str(&self.block);
        self.block.clear();
        self.last = Some(kind);
    }

    fn finish(mut self) -> String {
        self.end_block(Block::Paragraph);
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(rtf: &str, expect: &str) {
        assert_eq!(to_text(rtf.as_bytes()), Ok(expect.to_string()), "{rtf}");
    }

    fn check_error(rtf: &[u8], expect: RtfError) {
        assert_eq!(to_text(rtf), Err(expect), "{}", String::from_utf8_lossy(rtf));
    }

    /// What WordPad writes, more or less.
    const WORDPAD: &str = concat!(
        "{\\rtf1\\ansi\\ansicpg1252\\deff0\\nouicompat\\deflang1036",
        "{\\fonttbl{\\f0\\fnil\\fcharset0 Calibri;}{\\f1\\fnil\\fcharset2 Symbol;}}\r\n",
        "{\\colortbl ;\\red255\\green0\\blue0;}\r\n",
        "{\\*\\generator Riched20 10.0.19041}\\viewkind4\\uc1 \r\n",
        "\\pard\\sa200\\sl276\\slmult1\\b\\f0\\fs22\\lang12 Caf\\'e9 cr\\u232?me\\b0\\par\r\n",
        "Deuxi\\'e8me paragraphe\\line m\\'eame paragraphe\\par\r\n",
        "\\par\r\n",
        "Prix\\tab 40\\~\\'80\\par\r\n",
        "}\r\n\0",
    );

    #[test]
    fn a_wordpad_document() {
        check(WORDPAD, "Café crème\n\nDeuxième paragraphe\nmême paragraphe\n\nPrix\t40\u{a0}€\n");
    }

    #[test]
    fn control_words_take_a_parameter_and_one_delimiting_space() {
        check(r"{\rtf1 a\b1 b\b0  c\fs-24d}", "ab cd\n");
        check(r"{\rtf1 x\li-\par}", "x-\n");
        check(r"{\rtf1 \par\par a}", "a\n");
        check(r"{\rtf1}", "");
        check("{\\rtf1 a\r\nb\n}", "ab\n");
    }

    #[test]
    fn control_symbols() {
        check(r"{\rtf1 a\\b\{c\}d}", "a\\b{c}d\n");
        check(
            r"{\rtf1 40\~km, self\-evident, non\_breaking}",
            "40\u{a0}km, selfevident, non\u{2011}breaking\n",
        );
        check("{\\rtf1 one\\\ntwo}", "one\n\ntwo\n");
        check(r"{\rtf1 a\:b\|c}", "abc\n");
    }

    #[test]
    fn hex_escapes_are_windows_1252() {
        check(r"{\rtf1 \'e9\'c9\'ff\'a0}", "éÉÿ\u{a0}\n");
        check(r"{\rtf1 \'80 \'92\'93\'94\'96\'97\'85}", "€ ’“”–—…\n");
        check(r"{\rtf1 \'81}", "\u{fffd}\n");
        check(r"{\rtf1 \'E9}", "é\n");
        // Raw bytes above 0x7F are read the same way.
        assert_eq!(to_text(b"{\\rtf1 caf\xe9}"), Ok("café\n".into()));
    }

    #[test]
    fn unicode_escapes_skip_their_fallback() {
        check(r"{\rtf1 caf\u233?}", "café\n");
        check(r"{\rtf1\uc2 caf\u233\'e9\'e9!}", "café!\n");
        check(r"{\rtf1\uc0 caf\u233 x}", "caféx\n");
        check(r"{\rtf1 \u8364\'80 \u-4064?}", "€ \u{f020}\n");
        check(r"{\rtf1 \u-10179?\u-8704?}", "\u{1f600}\n");
        check(r"{\rtf1 \u-10179?x\u-8704?}", "\u{fffd}x\u{fffd}\n");
        check(r"{\rtf1 \u70000?}", "\u{fffd}\n");
        // A control word counts as one fallback character; a brace ends
        // the fallback.
        check(r"{\rtf1 \u233\par x}", "éx\n");
        check(r"{\rtf1 {\u233}?}", "é?\n");
        // `\uc` belongs to its group.
        check(r"{\rtf1 {\uc2 \u233??}\u233??}", "éé?\n");
    }

    #[test]
    fn destinations_are_skipped() {
        check(
            r"{\rtf1{\fonttbl{\f0 Arial;}}{\colortbl;\red0;}{\stylesheet{\s0 Normal;}}{\info{\title T}{\author A}}{\header head}{\footer foot}{\*\unknown x}{\pict 0123}body}",
            "body\n",
        );
        check(
            r"{\rtf1 a{\*\bkmkstart here}b{\field{\*\fldinst HYPERLINK x}{\fldrslt link}}}",
            "ablink\n",
        );
        check(r"{\rtf1 note{\footnote\chftn text}.}", "note.\n");
        check(r"{\rtf1 {\pict\bin4 {}\\}after}", "after\n");
        check(
            r"{\rtf1 {\object\objemb{\*\objclass Paint}{\objdata 0102}{\result shown}}}",
            "shown\n",
        );
    }

    #[test]
    fn tables_are_one_row_per_line() {
        check(
            r"{\rtf1 Before\par\trowd\intbl a\cell b\cell\row\intbl c\cell d\cell\row\pard After\par}",
            "Before\n\na\tb\nc\td\n\nAfter\n",
        );
    }

    #[test]
    fn another_code_page_with_high_bytes_is_refused() {
        check_error(br"{\rtf1\ansi\ansicpg1251 \'cf}", RtfError::UnsupportedCodePage(1251));
        check_error(br"{\rtf1\mac caf\'8e}", RtfError::UnsupportedCodePage(10000));
        // ASCII, \u escapes (whose fallback is skipped) and skipped
        // destinations are readable in any code page.
        check(r"{\rtf1\ansi\ansicpg1251{\fonttbl{\f0 \'cf;}}\u1055\'cf ok}", "\u{41f} ok\n");
    }

    #[test]
    fn malformed_documents_are_errors() {
        check_error(b"", RtfError::NotRtf);
        check_error(b"hello", RtfError::NotRtf);
        check_error(b"{\\rtx1 a}", RtfError::NotRtf);
        check_error(b"{\\rtf1 a", RtfError::UnclosedGroup);
        check_error(b"{\\rtf1 {a}", RtfError::UnclosedGroup);
        check_error(b"{\\rtf1 a}}", RtfError::TrailingContent(9));
        check_error(b"{\\rtf1 a} b", RtfError::TrailingContent(10));
        check_error(b"{\\rtf1 a\\", RtfError::MalformedControl(8));
        check_error(b"{\\rtf1 \\'e}", RtfError::MalformedControl(7));
        check_error(b"{\\rtf1 \\'zz}", RtfError::MalformedControl(7));
        check_error(b"{\\rtf1 \\bin99 ab}", RtfError::TruncatedBinary(7));
        check_error(b"{\\rtf1 \\bin-1 ab}", RtfError::MalformedControl(7));
        check_error(b"{\\rtf1 \\fs12345678901 a}", RtfError::MalformedControl(7));
        let long_word = format!("{{\\rtf1 \\{} a}}", "a".repeat(CONTROL_WORD_LENGTH_MAX + 1));
        check_error(long_word.as_bytes(), RtfError::MalformedControl(7));
        let deep =
            format!("{{\\rtf1 {}x{}}}", "{".repeat(GROUP_DEPTH_MAX), "}".repeat(GROUP_DEPTH_MAX));
        check_error(deep.as_bytes(), RtfError::TooDeep);
        let deepest = format!(
            "{{\\rtf1 {}x{}}}",
            "{".repeat(GROUP_DEPTH_MAX - 1),
            "}".repeat(GROUP_DEPTH_MAX - 1)
        );
        assert_eq!(to_text(deepest.as_bytes()), Ok("x\n".into()));
    }

    #[test]
    fn a_byte_order_mark_and_leading_whitespace_are_allowed() {
        assert_eq!(to_text(b"\xef\xbb\xbf \r\n{\\rtf1 a}"), Ok("a\n".into()));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = to_text(&bytes);
        }

        #[test]
        fn random_rtf_like_input_never_panics(body in r"[{}\\a-z0-9 '*~_\-\r\n\x80-\xff]{0,300}") {
            let _ = to_text(format!("{{\\rtf1 {body}}}").as_bytes());
        }

        #[test]
        fn mutations_of_a_valid_document_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3_u8), 1..8)
        ) {
            let mut document = WORDPAD.as_bytes().to_vec();
            for (index, byte, kind) in edits {
                let at = index.index(document.len() + 1);
                match kind {
                    0 if at < document.len() => document[at] = byte,
                    1 => document.insert(at, byte),
                    _ if at < document.len() => {
                        document.remove(at);
                    }
                    _ => {}
                }
            }
            let _ = to_text(&document);
        }

        /// Against the naive model: plain ASCII words come back as they are.
        #[test]
        fn plain_text_reads_as_itself(text in "[A-Za-z0-9.,;:!?()]([A-Za-z0-9 .,;:!?()]{0,60}[A-Za-z0-9.,;:!?()])?") {
            prop_assert_eq!(to_text(format!("{{\\rtf1\\ansi {text}}}").as_bytes()), Ok(format!("{text}\n")));
        }
    }
}
