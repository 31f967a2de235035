//! The live channel's clocks (`[live]`): how long a socket may stay unsubscribed, and how often
//! the keys of bound sockets are checked. Their ranges (a second to a day: a socket adds them to
//! the present) are declared on the settings and checked at load (`settings::bounds`).

use super::*;

pub(super) fn from_settings(settings: &Settings) -> svc_http::LiveTimings {
    svc_http::LiveTimings {
        subscribe_within: Duration::from_secs(settings.live.subscribe_timeout_seconds),
        key_recheck: Duration::from_secs(settings.live.key_recheck_seconds),
    }
}
