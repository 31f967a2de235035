//! Result bodies of the operator tools: Document 3's records in camelCase, as `structuredContent`
//! with the same JSON as text beside it. Every time is RFC 3339 UTC with milliseconds, as on
//! `/mcp`, whatever precision the database keeps.

use chrono::DateTime;
use serde::Serialize;
use serde_json::{Value, json};
use svc_application::ports::agent::AppRecord;

use super::errors::internal;
use crate::mcp::agent_calls::iso;
use crate::mcp::errors::ToolFailure;
use crate::mcp::results::ok_result;

/// A successful tool result carrying `body`.
pub fn ok(body: Value) -> Result<Value, ToolFailure> {
    let text = body.to_string();
    Ok(ok_result(body, &text))
}

/// A record serialised by its own `Serialize`, with its times normalised.
pub fn record(value: &impl Serialize) -> Result<Value, ToolFailure> {
    let mut body = serde_json::to_value(value).map_err(|e| ToolFailure::Rpc(internal(&e)))?;
    normalise_times(&mut body);
    Ok(body)
}

/// `AppRecord`: `systemPrompt` is omitted when there is none.
pub fn app(app: &AppRecord) -> Value {
    let mut body = json!({
        "appId": app.app_id,
        "displayName": app.display_name,
        "createdAt": iso(app.created_at),
        "updatedAt": iso(app.updated_at),
    });
    if let Some(prompt) = &app.system_prompt {
        body["systemPrompt"] = json!(prompt);
    }
    body
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
