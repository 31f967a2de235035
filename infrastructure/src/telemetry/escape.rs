//! Values as they are written into a line. Text: control characters and the characters that
//! break or reorder a line become escapes, so one event stays one line and no value can forge
//! another line or drive a terminal. JSON: what RFC 8259 requires, and the controls beyond it.

use std::fmt::{self, Write};

/// Text escaping over a writer: `\n`, `\r`, `\t`, other control characters (C0, DEL, C1) as
/// `\x1b` or `\u{85}`, and the characters that break or reorder a line where it is shown (the
/// line and paragraph separators, bidirectional overrides) as `\u{2028}`; `quoted` also escapes
/// `"` and `\` (a quoted string value).
pub(super) struct TextEscaping<'a> {
    pub out: &'a mut dyn Write,
    pub quoted: bool,
}

/// `text` with its control characters (C0, DEL, C1) and line-breaking or reordering characters
/// escaped as [`TextEscaping`] writes them: for text from elsewhere (a registry's answer) shown on
/// a terminal.
pub(crate) fn escaped_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let _ = TextEscaping {
        out: &mut out,
        quoted: false,
    }
    .write_str(text);
    out
}

fn escaped_in_text(ch: char) -> bool {
    ch.is_control() || matches!(ch, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl Write for TextEscaping<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let quoted = self.quoted;
        // Most values are plain ASCII: one scan of the bytes, one write.
        let plain = |byte: u8| (0x20..0x7f).contains(&byte) && !(quoted && matches!(byte, b'"' | b'\\'));
        if s.bytes().all(plain) {
            return self.out.write_str(s);
        }
        let mut clean_from = 0;
        for (at, ch) in s.char_indices() {
            if !(escaped_in_text(ch) || (quoted && matches!(ch, '"' | '\\'))) {
                continue;
            }
            self.out.write_str(&s[clean_from..at])?;
            match ch {
                '\n' => self.out.write_str("\\n")?,
                '\r' => self.out.write_str("\\r")?,
                '\t' => self.out.write_str("\\t")?,
                '"' => self.out.write_str("\\\"")?,
                '\\' => self.out.write_str("\\\\")?,
                ch if (ch as u32) < 0x80 => write!(self.out, "\\x{:02x}", ch as u32)?,
                ch => write!(self.out, "\\u{{{:x}}}", ch as u32)?,
            }
            clean_from = at + ch.len_utf8();
        }
        self.out.write_str(&s[clean_from..])
    }
}

/// JSON string escaping over a writer (the quotes around it are the caller's): what RFC 8259
/// requires, and DEL and the C1 controls too (`\u009b` is a terminal's CSI), so a JSON log
/// shown in a terminal cannot drive it either.
pub(super) struct JsonEscaping<'a>(pub &'a mut dyn Write);

impl Write for JsonEscaping<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let bytes = s.as_bytes();
        // One scan of the bytes, one write, for most values: those with no byte that can start
        // something to escape (C0, DEL, a quote, a backslash; 0xC2 leads the C1 controls).
        if !bytes
            .iter()
            .any(|&byte| byte < 0x20 || matches!(byte, 0x7f | 0xc2 | b'"' | b'\\'))
        {
            return self.0.write_str(s);
        }
        let mut clean_from = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x00..=0x1f | 0x7f => "",
                // U+0080 to U+009F are 0xC2 0x80 to 0xC2 0x9F in UTF-8.
                0xc2 if bytes.get(at + 1).is_some_and(|next| (0x80..=0x9f).contains(next)) => "",
                _ => continue,
            };
            // `at` is a character boundary: an ASCII byte, or the lead byte of a C1 control.
            self.0.write_str(&s[clean_from..at])?;
            if escape.is_empty() {
                let ch = s[at..].chars().next().expect("a character starts here");
                write!(self.0, "\\u{:04x}", ch as u32)?;
                clean_from = at + ch.len_utf8();
            } else {
                self.0.write_str(escape)?;
                clean_from = at + 1;
            }
        }
        self.0.write_str(&s[clean_from..])
    }
}

/// `value` as a JSON string, quotes included.
pub(super) fn json_string(out: &mut dyn Write, value: &str) -> fmt::Result {
    out.write_char('"')?;
    JsonEscaping(out).write_str(value)?;
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    const AWKWARD: [&str; 9] = [
        "plain",
        "",
        "quote \" and backslash \\",
        "line\nbreak\r\n and\ttab",
        "escape \x1b[31mred\x1b[0m bell \x07 nul \0 del \x7f",
        "c1 \u{85} \u{9b}31m",
        "unicode é 日本 🎉",
        "\u{1f}\u{0}\u{8}\u{c}",
        "separators \u{2028} \u{2029} and an override \u{202e}reversed\u{202c}",
    ];

    #[test]
    fn json_strings_read_back_as_what_was_written_with_no_control_character_left_raw() {
        for value in AWKWARD {
            let mut out = String::new();
            json_string(&mut out, value).unwrap();
            let read: String = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
            assert_eq!(read, value);
            assert!(!out.chars().any(char::is_control), "{out:?}");
        }
    }

    #[test]
    fn escaped_text_has_no_control_character_and_no_line_break() {
        for quoted in [false, true] {
            for value in AWKWARD {
                let mut out = String::new();
                write!(TextEscaping { out: &mut out, quoted }, "{value}").unwrap();
                assert!(!out.chars().any(escaped_in_text), "{out:?}");
                if quoted {
                    assert!(!out.replace("\\\"", "").contains('"'), "{out:?}");
                }
            }
        }
        let mut out = String::new();
        write!(
            TextEscaping {
                out: &mut out,
                quoted: false
            },
            "a\nb\x1bc\u{85}d"
        )
        .unwrap();
        assert_eq!(out, "a\\nb\\x1bc\\u{85}d");
    }
}
