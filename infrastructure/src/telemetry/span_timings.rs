//! A line when a timed span closes, with how long it was busy (entered) and idle
//! (`time.busy`, `time.idle`), written by the events' own layer: the line `tracing-subscriber`'s
//! `FmtSpan::CLOSE` writes, in the same layout, without a second formatting layer. A second
//! layer behind a filter of its own cost every request (the request span is not timed) two more
//! span look-ups on each enter and exit, its filter's bookkeeping on each opening, and a second
//! `RUST_LOG` filter (BENCHMARKS.md, session 45).

use std::time::Instant;

use tracing::field::{self, FieldSet, Value};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// Spans whose closing is not worth a line: the request span (the access line has its duration).
const UNTIMED_SPANS: &[&str] = &["request"];

fn timed_span(meta: &Metadata<'_>) -> bool {
    !UNTIMED_SPANS.contains(&meta.name())
}

/// `lines` (a formatting layer), with a line of its own when a timed span closes.
pub(super) struct WithSpanTimings<L> {
    pub lines: L,
}

/// A timed span's time so far, kept with the span.
struct Timings {
    idle_nanos: u64,
    busy_nanos: u64,
    /// When it was last entered or left.
    last: Instant,
    /// Entered and not yet left (a span may be entered again on another poll or thread).
    entered: u64,
}

impl<S, L> Layer<S> for WithSpanTimings<L>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    L: Layer<S>,
{
    fn on_register_dispatch(&self, subscriber: &tracing::Dispatch) {
        self.lines.on_register_dispatch(subscriber);
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        self.lines.on_new_span(attrs, id, ctx.clone());
        if timed_span(attrs.metadata())
            && let Some(span) = ctx.span(id)
        {
            span.extensions_mut().insert(Timings {
                idle_nanos: 0,
                busy_nanos: 0,
                last: Instant::now(),
                entered: 0,
            });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        self.lines.on_record(id, values, ctx);
    }

    fn on_follows_from(&self, span: &Id, follows: &Id, ctx: Context<'_, S>) {
        self.lines.on_follows_from(span, follows, ctx);
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        self.lines.on_event(event, ctx);
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        self.lines.on_enter(id, ctx.clone());
        with_timings(id, &ctx, |timings| {
            if timings.entered == 0 {
                let now = Instant::now();
                timings.idle_nanos += nanos_between(timings.last, now);
                timings.last = now;
            }
            timings.entered += 1;
        });
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        self.lines.on_exit(id, ctx.clone());
        with_timings(id, &ctx, |timings| {
            timings.entered = timings.entered.saturating_sub(1);
            if timings.entered == 0 {
                let now = Instant::now();
                timings.busy_nanos += nanos_between(timings.last, now);
                timings.last = now;
            }
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let closed = ctx.span(&id).and_then(|span| {
            let timings = span.extensions_mut().remove::<Timings>()?;
            Some((span.metadata(), timings))
        });
        if let Some((meta, timings)) = closed {
            let idle = timings.idle_nanos + nanos_between(timings.last, Instant::now());
            self.close_line(&id, meta, timings.busy_nanos, idle, ctx.clone());
        }
        self.lines.on_close(id, ctx);
    }

    fn on_id_change(&self, old: &Id, new: &Id, ctx: Context<'_, S>) {
        self.lines.on_id_change(old, new, ctx);
    }
}

impl<L> WithSpanTimings<L> {
    /// The closing line: an event of the span's own callsite (its target and level) inside the
    /// span, `message = "close"`, as `tracing-subscriber` builds it.
    fn close_line<S>(&self, id: &Id, meta: &'static Metadata<'static>, busy: u64, idle: u64, ctx: Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
        L: Layer<S>,
    {
        let fields = FieldSet::new(&["message", "time.busy", "time.idle"], meta.callsite());
        let mut names = fields.iter();
        let (Some(message), Some(busy_field), Some(idle_field)) = (names.next(), names.next(), names.next()) else {
            return;
        };
        let close = format_args!("close");
        let busy = field::display(Duration(busy));
        let idle = field::display(Duration(idle));
        let values: [(&field::Field, Option<&dyn Value>); 3] = [
            (&message, Some(&close as &dyn Value)),
            (&busy_field, Some(&busy as &dyn Value)),
            (&idle_field, Some(&idle as &dyn Value)),
        ];
        let values = fields.value_set(&values);
        self.lines
            .on_event(&Event::new_child_of(id.clone(), meta, &values), ctx);
    }
}

fn with_timings<S>(id: &Id, ctx: &Context<'_, S>, update: impl FnOnce(&mut Timings))
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let Some(span) = ctx.span(id) else { return };
    // The request span's enters and exits, the most frequent, stop here.
    if !timed_span(span.metadata()) {
        return;
    }
    if let Some(timings) = span.extensions_mut().get_mut::<Timings>() {
        update(timings);
    }
}

fn nanos_between(earlier: Instant, later: Instant) -> u64 {
    u64::try_from(later.saturating_duration_since(earlier).as_nanos()).unwrap_or(u64::MAX)
}

/// Nanoseconds as `tracing-subscriber` writes a span's time: three significant digits and a
/// unit (`812µs`, `1.25ms`, `17.0s`).
struct Duration(u64);

impl std::fmt::Display for Duration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut t = self.0 as f64;
        for unit in ["ns", "µs", "ms", "s"] {
            if t < 10.0 {
                return write!(f, "{t:.2}{unit}");
            } else if t < 100.0 {
                return write!(f, "{t:.1}{unit}");
            } else if t < 1000.0 {
                return write!(f, "{t:.0}{unit}");
            }
            t /= 1000.0;
        }
        write!(f, "{:.0}s", t * 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration as Elapsed;

    use super::Duration;
    use crate::telemetry::line_tests::Captured;
    use crate::telemetry::subscriber;

    #[test]
    fn a_duration_has_three_significant_digits_and_a_unit() {
        let written: Vec<String> = [7, 812_000, 1_254_000, 17_000_000_000, 4_000_000_000_000]
            .into_iter()
            .map(|nanos| Duration(nanos).to_string())
            .collect();
        assert_eq!(written, ["7.00ns", "812µs", "1.25ms", "17.0s", "4000s"]);
    }

    /// A time as written (`12.3ms`), in nanoseconds.
    fn nanos(written: &str) -> f64 {
        let at = written.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap();
        let (number, unit) = written.split_at(at);
        let scale = match unit {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            other => panic!("unit {other:?} in {written:?}"),
        };
        number.parse::<f64>().unwrap() * scale
    }

    /// Busy while entered (however deeply), idle while not; one line at the close of each timed
    /// span and none for the request span.
    #[test]
    fn a_span_is_busy_while_entered_and_idle_between() {
        // Unequal, so that busy and idle swapped would show.
        const BUSY: Elapsed = Elapsed::from_millis(30);
        const IDLE: Elapsed = Elapsed::from_millis(80);
        let captured = Captured::default();
        tracing::subscriber::with_default(subscriber(captured.clone(), true, false, None), || {
            let request = tracing::info_span!("request", request_id = "r1");
            let _request = request.enter();
            let stage = tracing::info_span!("stage", step = 1_u64);
            {
                let _outer = stage.enter();
                let _again = stage.enter();
                std::thread::sleep(BUSY);
            }
            std::thread::sleep(IDLE);
            {
                let _entered = stage.enter();
                std::thread::sleep(BUSY);
            }
            std::thread::sleep(IDLE);
        });
        let lines: Vec<serde_json::Value> = captured
            .lines()
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{lines:#?}");
        let close = &lines[0];
        assert_eq!(close["fields"]["message"], "close");
        assert_eq!(close["span"]["name"], "stage");
        assert_eq!(close["level"], "INFO");
        let (busy, idle) = (
            nanos(close["fields"]["time.busy"].as_str().unwrap()),
            nanos(close["fields"]["time.idle"].as_str().unwrap()),
        );
        assert!(busy >= 2.0 * BUSY.as_nanos() as f64, "busy {busy} ns: {close}");
        // Between the enters, and before the close.
        assert!(idle >= 2.0 * IDLE.as_nanos() as f64, "idle {idle} ns: {close}");
    }

    /// `RUST_LOG` chooses closing lines by span as it chooses events: with `warn,[request]=info`
    /// a stage inside a request closes with a line, one outside it does not.
    #[test]
    fn a_span_rule_chooses_the_closing_lines_of_the_spans_inside() {
        let captured = Captured::default();
        let rule = Some("warn,[request]=info");
        tracing::subscriber::with_default(subscriber(captured.clone(), false, false, rule), || {
            tracing::info_span!("stage", place = "outside").in_scope(|| {});
            let request = tracing::info_span!("request", request_id = "r1");
            let _request = request.enter();
            tracing::info_span!("stage", place = "inside").in_scope(|| {});
        });
        let lines = captured.lines();
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0].contains("request{request_id=\"r1\"}:stage{place=\"inside\"}") && lines[0].contains("close"),
            "{}",
            lines[0]
        );
    }
}
