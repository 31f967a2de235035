//! An event's or a span's fields as text (`name=value`, the message bare) or as JSON members
//! (`"name":value`), written straight into the line: no map is built and nothing is parsed
//! back, as `tracing-subscriber`'s own JSON format does for every span of every line.

use std::fmt::{self, Write};

use tracing::field::{Field, Visit};

use super::escape::{JsonEscaping, TextEscaping, json_string};

/// `tracing-log` carries a `log` record's metadata as fields (`log.target`, `log.file`, ...).
/// A text line writes the record's target as its own and leaves them out, as the stock format
/// does; JSON keeps them, as the stock JSON does.
fn is_log_metadata(field: &Field) -> bool {
    field.name().starts_with("log.")
}

/// An error and its sources: `outer: cause: root cause`.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(out, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// Fields as text: the message bare, the rest `name=value` with strings quoted, separated by
/// spaces; every value escaped ([`TextEscaping`]).
pub(super) struct TextVisitor<'a> {
    out: &'a mut dyn Write,
    written: bool,
    result: fmt::Result,
}

impl<'a> TextVisitor<'a> {
    pub fn new(out: &'a mut dyn Write) -> Self {
        Self {
            out,
            written: false,
            result: Ok(()),
        }
    }

    pub fn finish(self) -> fmt::Result {
        self.result
    }

    /// Writes one field unless an earlier write failed.
    fn field(&mut self, field: &Field, value: impl FnOnce(&mut dyn Write) -> fmt::Result) {
        if self.result.is_err() || is_log_metadata(field) {
            return;
        }
        self.result = (|| {
            if self.written {
                self.out.write_char(' ')?;
            }
            self.written = true;
            if field.name() != "message" {
                self.out.write_str(field.name())?;
                self.out.write_char('=')?;
            }
            value(self.out)
        })();
    }
}

impl Visit for TextVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let quoted = field.name() != "message";
        self.field(field, |out| {
            if quoted {
                out.write_char('"')?;
            }
            TextEscaping { out, quoted }.write_str(value)?;
            if quoted {
                out.write_char('"')?;
            }
            Ok(())
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field, |out| write!(TextEscaping { out, quoted: false }, "{value:?}"));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.field(field, |out| out.write_str(ryu::Buffer::new().format(value)));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |out| out.write_str(if value { "true" } else { "false" }));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.field(field, |out| {
            write!(TextEscaping { out, quoted: false }, "{}", Chain(value))
        });
    }
}

/// Fields as JSON object members, separated by commas, without the braces (a line puts them
/// into its `fields`, `span` and `spans` objects).
pub(super) struct JsonVisitor<'a> {
    out: &'a mut dyn Write,
    written: bool,
    result: fmt::Result,
}

impl<'a> JsonVisitor<'a> {
    /// `after_members`: the object already has members, so the first field needs a comma.
    pub fn new(out: &'a mut dyn Write, after_members: bool) -> Self {
        Self {
            out,
            written: after_members,
            result: Ok(()),
        }
    }

    pub fn finish(self) -> fmt::Result {
        self.result
    }

    fn field(&mut self, field: &Field, value: impl FnOnce(&mut dyn Write) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        self.result = (|| {
            if self.written {
                self.out.write_char(',')?;
            }
            self.written = true;
            json_string(self.out, field.name())?;
            self.out.write_char(':')?;
            value(self.out)
        })();
    }
}

impl Visit for JsonVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, |out| json_string(out, value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field, |out| {
            out.write_char('"')?;
            write!(JsonEscaping(&mut *out), "{value:?}")?;
            out.write_char('"')
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    /// JSON has no NaN or infinity: those are `null`, as `serde_json` writes them.
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.field(field, |out| {
            if value.is_finite() {
                out.write_str(ryu::Buffer::new().format_finite(value))
            } else {
                out.write_str("null")
            }
        });
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |out| out.write_str(if value { "true" } else { "false" }));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.field(field, |out| {
            out.write_char('"')?;
            write!(JsonEscaping(&mut *out), "{}", Chain(value))?;
            out.write_char('"')
        });
    }
}
