//! The live channel's clocks (`[live]`): how long a socket may stay unsubscribed, and how often
//! a bound socket checks its key.

use super::*;

/// `[live]`'s two clocks: from a second to a day (a socket adds them to the present).
pub(super) fn from_settings(settings: &Settings) -> Result<svc_http::LiveTimings, StartError> {
    const DAY: u64 = 86_400;
    let seconds = |name: &str, value: u64| {
        if !(1..=DAY).contains(&value) {
            return Err(StartError::Config(format!(
                "live.{name} must be from 1 to {DAY} seconds, not {value}"
            )));
        }
        Ok(Duration::from_secs(value))
    };
    Ok(svc_http::LiveTimings {
        subscribe_within: seconds("subscribe_timeout_seconds", settings.live.subscribe_timeout_seconds)?,
        key_recheck: seconds("key_recheck_seconds", settings.live.key_recheck_seconds)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket adds each clock to the present: none may be nothing, nor so long the sum
    /// overflows and every socket's task panics.
    #[test]
    fn the_live_clocks_are_from_a_second_to_a_day() {
        let mut settings = Settings::load_from(None, Vec::new()).unwrap();
        for (value, accepted) in [
            (0, false),
            (1, true),
            (86_400, true),
            (86_401, false),
            (u64::MAX, false),
        ] {
            settings.live.subscribe_timeout_seconds = value;
            settings.live.key_recheck_seconds = 60;
            let answer = from_settings(&settings);
            assert_eq!(answer.is_ok(), accepted, "subscribe {value}");
            if let Err(refused) = answer {
                let refused = refused.to_string();
                assert!(
                    refused.contains(&format!(
                        "live.subscribe_timeout_seconds must be from 1 to 86400 seconds, not {value}"
                    )),
                    "{refused}"
                );
            }
            settings.live.subscribe_timeout_seconds = 30;
            settings.live.key_recheck_seconds = value;
            assert_eq!(from_settings(&settings).is_ok(), accepted, "recheck {value}");
        }
    }
}
