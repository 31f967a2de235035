//! Records answered outside the tools (the invite acceptance route): serialised by their own
//! `Serialize`, every time RFC 3339 UTC with milliseconds, as on `/mcp` and `/ops`, whatever
//! precision the database keeps.

use chrono::DateTime;
use serde::Serialize;
use serde_json::Value;

use crate::tools::iso;

/// A record serialised by its own `Serialize`, with its times normalised.
pub fn record(value: &impl Serialize) -> Result<Value, serde_json::Error> {
    let mut body = serde_json::to_value(value)?;
    normalise_times(&mut body);
    Ok(body)
}

/// Rewrites every `...At` string that is an RFC 3339 time to milliseconds in UTC.
fn normalise_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match field {
                    Value::String(text) if key.ends_with("At") => {
                        if let Ok(time) = DateTime::parse_from_rfc3339(text) {
                            *text = iso(time.to_utc());
                        }
                    }
                    other => normalise_times(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise_times),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn times_get_millisecond_precision_in_utc() {
        let mut body = json!({
            "createdAt": "2026-01-02T03:04:05.123456789Z",
            "keys": [{ "lastUsedAt": "2026-01-02T04:04:05.5+01:00", "name": "2026-01-02T03:04:05Z" }],
        });
        normalise_times(&mut body);
        assert_eq!(body["createdAt"], "2026-01-02T03:04:05.123Z");
        assert_eq!(body["keys"][0]["lastUsedAt"], "2026-01-02T03:04:05.500Z");
        assert_eq!(
            body["keys"][0]["name"], "2026-01-02T03:04:05Z",
            "only times are rewritten"
        );
    }
}
