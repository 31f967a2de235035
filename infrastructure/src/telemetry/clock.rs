//! A line's timestamp, RFC 3339 in UTC to the microsecond (`2026-12-06T19:53:28.123456Z`), as
//! `tracing-subscriber` writes it. The date and time of day change once a second, so each
//! thread keeps them formatted for the second it last saw and writes only the microseconds.

use std::cell::RefCell;
use std::fmt::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    /// The second last formatted on this thread, and its `YYYY-MM-DDTHH:MM:SS`.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// `YYYY-MM-DDTHH:MM:SS` of a second since the epoch, in UTC.
fn write_date_time(out: &mut dyn Write, second: u64) -> fmt::Result {
    let utc = i64::try_from(second)
        .ok()
        .and_then(|second| chrono::DateTime::from_timestamp(second, 0))
        .unwrap_or_default();
    write!(out, "{}", utc.format("%Y-%m-%dT%H:%M:%S"))
}

pub(super) fn write_now(out: &mut dyn Write) -> fmt::Result {
    write_at(out, SystemTime::now())
}

fn write_at(out: &mut dyn Write, at: SystemTime) -> fmt::Result {
    // A clock before 1970 is written as 1970: a log line is no place to fail.
    let since_epoch = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let second = since_epoch.as_secs();
    let cached = SECOND.try_with(|cache| {
        let mut cache = cache.try_borrow_mut().ok()?;
        let (formatted_second, date_time) = &mut *cache;
        if *formatted_second != second {
            date_time.clear();
            write_date_time(date_time, second).ok()?;
            *formatted_second = second;
        }
        Some(out.write_str(date_time))
    });
    match cached {
        Ok(Some(written)) => written?,
        // This thread's locals are being torn down (a line logged from a destructor): afresh.
        _ => write_date_time(out, second)?,
    }
    let mut fraction = *b".000000Z";
    let mut micros = since_epoch.subsec_micros();
    for digit in fraction[1..7].iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    out.write_str(std::str::from_utf8(&fraction).expect("ASCII digits"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{DateTime, SecondsFormat, Utc};

    use super::*;

    fn written(at: SystemTime) -> String {
        let mut out = String::new();
        write_at(&mut out, at).unwrap();
        out
    }

    #[test]
    fn each_instant_is_written_as_rfc3339_to_the_microsecond_across_second_boundaries() {
        let start = UNIX_EPOCH + Duration::from_secs(1_796_600_000);
        let steps = [
            0,
            1,
            999_999,
            1_000_000,
            1_000_001,
            59_999_999,
            86_400_000_000,
            1_999_999,
        ];
        for micros in steps {
            let at = start + Duration::from_micros(micros) + Duration::from_nanos(999);
            let expected =
                DateTime::<Utc>::from(at - Duration::from_nanos(999)).to_rfc3339_opts(SecondsFormat::Micros, true);
            assert_eq!(written(at), expected, "{micros} µs after the start");
        }
    }

    #[test]
    fn a_clock_before_1970_is_written_as_the_epoch() {
        assert_eq!(
            written(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000000Z"
        );
    }
}
