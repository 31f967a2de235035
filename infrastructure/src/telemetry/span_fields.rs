//! A span's fields, formatted once when it opens and kept with it (`tracing-subscriber` stores
//! them as `FormattedFields<TextFields>` or `<JsonFields>`): a line copies them in as they are.

use std::cell::RefCell;
use std::fmt::{self, Write};

use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FormatFields, FormattedFields};

use super::fields::{JsonVisitor, TextVisitor};
use super::formatting::while_formatting;

/// Text (`name=value ...`); a field recorded later is appended after a space.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TextFields;

impl<'writer> FormatFields<'writer> for TextFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'writer>, fields: R) -> fmt::Result {
        in_one_write(&mut writer, |scratch| {
            let mut visitor = TextVisitor::new(scratch);
            fields.record(&mut visitor);
            visitor.finish()
        })
    }
}

/// JSON members (`"name":value,...`, no braces); a field recorded later is appended after a
/// comma, so a field declared `Empty` and recorded once appears once.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct JsonFields;

impl<'writer> FormatFields<'writer> for JsonFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'writer>, fields: R) -> fmt::Result {
        in_one_write(&mut writer, |scratch| {
            let mut visitor = JsonVisitor::new(scratch, false);
            fields.record(&mut visitor);
            visitor.finish()
        })
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let after_members = !current.fields.is_empty();
        in_one_write(&mut current.fields, |scratch| {
            let mut visitor = JsonVisitor::new(scratch, after_members);
            fields.record(&mut visitor);
            visitor.finish()
        })
    }
}

thread_local! {
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Formats into this thread's scratch string and writes the whole only when formatting
/// succeeded: a span's fields go into a string of their own, which written piece by piece grew
/// several times, and which a failed `Debug` would leave holding half a value for the span's
/// every later line.
fn in_one_write(out: &mut dyn Write, format: impl FnOnce(&mut dyn Write) -> fmt::Result) -> fmt::Result {
    while_formatting(|| in_one_write_marked(out, format))
}

fn in_one_write_marked(out: &mut dyn Write, format: impl FnOnce(&mut dyn Write) -> fmt::Result) -> fmt::Result {
    let mut format = Some(format);
    let scratched = SCRATCH.try_with(|scratch| {
        let Ok(mut scratch) = scratch.try_borrow_mut() else {
            return None;
        };
        scratch.clear();
        let format = format.take().expect("not called yet");
        Some(format(&mut *scratch).and_then(|()| out.write_str(&scratch)))
    });
    match scratched {
        Ok(Some(result)) => result,
        // A value logged while another is formatted on this thread, or the thread ending: in place.
        _ => (format.take().expect("not called yet"))(out),
    }
}
