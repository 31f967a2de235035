//! One event as one line, text or JSON, in `tracing-subscriber`'s layouts (its `Full` text
//! format without colours, its JSON format) but written straight into the line's buffer. A
//! span's fields are read as the layer kept them when the span opened (`span_fields`).
//! Every request writes an access line, and the stock formatters spent more on it than
//! `/healthz` spends answering (BENCHMARKS.md, session 44).

use std::fmt::{self, Write};

use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::{LookupSpan, SpanRef};

use super::clock;
use super::escape::{JsonEscaping, TextEscaping, json_string};
use super::fields::{JsonVisitor, TextVisitor};
use super::formatting::while_formatting;
use super::span_fields::{JsonFields, TextFields};

/// `2026-12-06T19:53:28.123456Z  INFO request{request_id="…" method="POST" route="/mcp"}: svc::access: request status=200`
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TextLine;

/// `{"timestamp":..,"level":..,"fields":{..},"target":..,"span":{..,"name":..},"spans":[..]}`:
/// `span` is the innermost span, `spans` every span from the outermost.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct JsonLine;

/// The level as `tracing-subscriber` writes it in text, five characters wide.
fn padded_level(level: &Level) -> &'static str {
    match *level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        Level::ERROR => "ERROR",
    }
}

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, out: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        while_formatting(|| text_line(ctx, out, event))
    }
}

fn text_line<S, N>(ctx: &FmtContext<'_, S, N>, mut out: Writer<'_>, event: &Event<'_>) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let normalized = event.normalized_metadata();
    let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());
    clock::write_now(&mut out)?;
    out.write_char(' ')?;
    out.write_str(padded_level(meta.level()))?;
    out.write_char(' ')?;
    if let Some(scope) = ctx.event_scope() {
        for span in scope.from_root() {
            out.write_str(span.name())?;
            if let Some(fields) = span.extensions().get::<FormattedFields<TextFields>>()
                && !fields.is_empty()
            {
                out.write_char('{')?;
                out.write_str(fields)?;
                out.write_char('}')?;
            }
            out.write_char(':')?;
        }
        out.write_char(' ')?;
    }
    // A `log` record's target is any string its caller chose.
    TextEscaping {
        out: &mut out,
        quoted: false,
    }
    .write_str(meta.target())?;
    out.write_str(": ")?;
    let mut fields = TextVisitor::new(&mut out);
    event.record(&mut fields);
    fields.finish()?;
    out.write_char('\n')
}

impl<S, N> FormatEvent<S, N> for JsonLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, out: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        while_formatting(|| json_line(ctx, out, event))
    }
}

fn json_line<S, N>(ctx: &FmtContext<'_, S, N>, mut out: Writer<'_>, event: &Event<'_>) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let normalized = event.normalized_metadata();
    let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());
    out.write_str("{\"timestamp\":\"")?;
    clock::write_now(&mut out)?;
    out.write_str("\",\"level\":\"")?;
    out.write_str(meta.level().as_str())?;
    out.write_str("\",\"fields\":{")?;
    let mut fields = JsonVisitor::new(&mut out, false);
    event.record(&mut fields);
    fields.finish()?;
    out.write_str("},\"target\":")?;
    json_string(&mut out, meta.target())?;
    // A scope walks from the innermost span out: its first is `span`.
    if let Some(innermost) = ctx.event_scope().and_then(|mut scope| scope.next()) {
        out.write_str(",\"span\":")?;
        json_span::<S>(&mut out, &innermost)?;
        out.write_str(",\"spans\":[")?;
        for (at, span) in ctx
            .event_scope()
            .into_iter()
            .flat_map(|scope| scope.from_root())
            .enumerate()
        {
            if at > 0 {
                out.write_char(',')?;
            }
            json_span::<S>(&mut out, &span)?;
        }
        out.write_char(']')?;
    }
    out.write_str("}\n")
}

/// A span as a JSON object: its fields as formatted at its opening (JSON members, see
/// `JsonFields`), then its `name`.
fn json_span<S>(out: &mut dyn Write, span: &SpanRef<'_, S>) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    out.write_char('{')?;
    if let Some(fields) = span.extensions().get::<FormattedFields<JsonFields>>()
        && !fields.is_empty()
    {
        out.write_str(fields)?;
        out.write_char(',')?;
    }
    out.write_str("\"name\":\"")?;
    JsonEscaping(out).write_str(span.name())?;
    out.write_str("\"}")
}
