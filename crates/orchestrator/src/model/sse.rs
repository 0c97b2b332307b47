//! Server-sent events, parsed incrementally from the bytes as they arrive.
//!
//! Follows the WHATWG event-stream rules that providers actually exercise:
//! lines end in LF, CRLF or CR (a CRLF may be split between two network
//! chunks); `data:` with or without the space; several `data` lines join with
//! `\n`; lines starting with `:` are comments (keep-alives); a blank line
//! ends an event; `event:` names it. `id` and `retry` mean nothing to a chat
//! completion and are skipped. One leniency: at the end of the body a last
//! event without its blank line is still delivered, since some servers close
//! right after `data: [DONE]`.
//!
//! Lines are cut on bytes before they are decoded, so a UTF-8 character split
//! between chunks decodes whole. Where the chunks fall never changes the
//! events (a property test checks it).

use super::SSE_EVENT_BYTES_MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SseEvent {
    /// The `event:` field; `None` for the default `message`.
    pub(super) name: Option<String>,
    pub(super) data: String,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) struct EventTooLarge;

#[derive(Default)]
pub(super) struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR, so a LF starting this one is its pair.
    skip_lf: bool,
    first_line: bool,
    name: Option<String>,
    data: String,
    data_lines: usize,
}

impl SseParser {
    pub(super) fn new() -> SseParser {
        SseParser { first_line: true, ..SseParser::default() }
    }

    /// Feeds one chunk; complete events are appended to `events`.
    pub(super) fn push(
        &mut self,
        chunk: &[u8],
        events: &mut Vec<SseEvent>,
    ) -> Result<(), EventTooLarge> {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.skip_lf {
                self.skip_lf = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    self.skip_lf = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    self.end_line(events);
                }
            }
            if self.line.len() + self.data.len() > SSE_EVENT_BYTES_MAX {
                return Err(EventTooLarge);
            }
        }
        Ok(())
    }

    /// The body ended: delivers what is left, even without its blank line.
    pub(super) fn finish(&mut self, events: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(events);
        }
        self.dispatch(events);
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let bytes = std::mem::take(&mut self.line);
        let mut line = String::from_utf8_lossy(&bytes);
        if std::mem::take(&mut self.first_line)
            && let Some(rest) = line.strip_prefix('\u{feff}')
        {
            line = rest.to_owned().into();
        }
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "data" => {
                if self.data_lines > 0 {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.data_lines += 1;
            }
            "event" => self.name = Some(value.to_owned()).filter(|name| !name.is_empty()),
            _ => {}
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let name = self.name.take();
        if std::mem::take(&mut self.data_lines) == 0 {
            return;
        }
        events.push(SseEvent { name, data: std::mem::take(&mut self.data) });
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut events).unwrap();
        }
        parser.finish(&mut events);
        events
    }

    fn check(input: &str, expected: &[(Option<&str>, &str)]) {
        let events = parse_chunks(&[input.as_bytes()]);
        let expected: Vec<SseEvent> = expected
            .iter()
            .map(|(name, data)| SseEvent {
                name: name.map(str::to_owned),
                data: (*data).to_owned(),
            })
            .collect();
        assert_eq!(events, expected, "{input:?}");
        // Byte by byte gives the same events.
        let bytes: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
        assert_eq!(parse_chunks(&bytes), expected, "{input:?} byte by byte");
    }

    #[test]
    fn data_with_or_without_the_space() {
        check("data: a\n\ndata:b\n\ndata:  c\n\n", &[(None, "a"), (None, "b"), (None, " c")]);
    }

    #[test]
    fn any_line_ending() {
        check("data: a\r\n\r\ndata: b\r\rdata: c\n\n", &[(None, "a"), (None, "b"), (None, "c")]);
    }

    #[test]
    fn comments_and_unknown_fields_are_skipped() {
        check(": keep-alive\n\nid: 7\nretry: 100\ndata: a\nfoo: bar\n\n:\n\n", &[(None, "a")]);
    }

    #[test]
    fn data_lines_join_with_newlines() {
        check("data: {\"a\":\ndata: 1}\n\ndata\ndata\n\n", &[(None, "{\"a\":\n1}"), (None, "\n")]);
    }

    #[test]
    fn an_event_name_is_kept_for_its_event_only() {
        check("event: error\ndata: x\n\ndata: y\n\n", &[(Some("error"), "x"), (None, "y")]);
    }

    #[test]
    fn the_last_event_may_lack_its_blank_line() {
        check("data: a\n\ndata: [DONE]", &[(None, "a"), (None, "[DONE]")]);
        check("data: a\n\ndata: [DONE]\n", &[(None, "a"), (None, "[DONE]")]);
    }

    #[test]
    fn a_leading_byte_order_mark_is_dropped() {
        check("\u{feff}data: a\n\n", &[(None, "a")]);
    }

    #[test]
    fn a_character_split_between_chunks_decodes_whole() {
        let text = "data: où\n\n".as_bytes();
        let split = text.iter().position(|&b| b == 0xc3).unwrap() + 1;
        let events = parse_chunks(&[&text[..split], &text[split..]]);
        assert_eq!(events, vec![SseEvent { name: None, data: "où".to_owned() }]);
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let chunk = vec![b'a'; 1024 * 1024];
        let mut result = Ok(());
        for _ in 0..=SSE_EVENT_BYTES_MAX / chunk.len() {
            result = parser.push(&chunk, &mut events);
        }
        assert_eq!(result, Err(EventTooLarge));
    }

    /// One event as a test writes it, with the choices of spelling the
    /// parser must not care about.
    #[derive(Clone, Debug)]
    struct WrittenEvent {
        name: Option<String>,
        data_lines: Vec<String>,
        comment: Option<String>,
    }

    fn arb_written_event() -> impl Strategy<Value = WrittenEvent> {
        let text = "[^\r\n]{0,12}";
        (
            proptest::option::of("[a-z]{1,6}"),
            proptest::collection::vec(text, 1..4),
            proptest::option::of(text),
        )
            .prop_map(|(name, data_lines, comment)| WrittenEvent {
                name,
                data_lines,
                comment,
            })
    }

    fn arb_stream() -> impl Strategy<Value = (Vec<u8>, Vec<SseEvent>)> {
        let ending = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        proptest::collection::vec((arb_written_event(), ending, any::<bool>()), 0..8).prop_map(
            |events| {
                let mut bytes = String::new();
                let mut expected = Vec::new();
                for (event, ending, spaced) in events {
                    if let Some(comment) = &event.comment {
                        bytes += &format!(":{comment}{ending}");
                    }
                    if let Some(name) = &event.name {
                        bytes += &format!("event: {name}{ending}");
                    }
                    for line in &event.data_lines {
                        let space = if spaced || line.starts_with(' ') { " " } else { "" };
                        bytes += &format!("data:{space}{line}{ending}");
                    }
                    bytes += ending;
                    let data = event.data_lines.join("\n");
                    expected.push(SseEvent { name: event.name, data });
                }
                (bytes.into_bytes(), expected)
            },
        )
    }

    proptest! {
        #[test]
        fn any_split_parses_to_the_same_events(
            (bytes, expected) in arb_stream(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..10),
        ) {
            let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
            cuts.push(0);
            cuts.push(bytes.len());
            cuts.sort();
            let chunks: Vec<&[u8]> = cuts.windows(2).map(|pair| &bytes[pair[0]..pair[1]]).collect();
            prop_assert_eq!(parse_chunks(&[&bytes]), expected.clone());
            prop_assert_eq!(parse_chunks(&chunks), expected);
        }
    }
}
