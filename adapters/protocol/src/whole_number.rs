//! Integer arguments as JSON Schema counts them. There, `5.0` is an integer (a number whose
//! fraction is zero), so a tool's published `inputSchema` accepts it, and clients that write every
//! number as a float (Python's `json.dumps(5.0)`) send it; serde's integers would then refuse
//! what the schema let through, with a message naming no field.

use serde::de::Error;
use serde::{Deserialize, Deserializer};

/// An optional whole number: an integer, or a float without a fraction, that fits `T`.
pub fn optional<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = number.as_u64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
            // In range and whole, checked above: the cast is exact.
            .map(|f| f as u64)
    });
    whole
        .and_then(|n| T::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("{number} is not a whole number in range")))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Args {
        #[serde(default, deserialize_with = "super::optional")]
        limit: Option<u32>,
    }

    fn limit(json: &str) -> Result<Option<u32>, String> {
        serde_json::from_str::<Args>(json)
            .map(|a| a.limit)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn whole_floats_read_as_integers_and_nothing_else_does() {
        assert_eq!(limit("{}"), Ok(None));
        assert_eq!(limit(r#"{"limit": null}"#), Ok(None));
        assert_eq!(limit(r#"{"limit": 5}"#), Ok(Some(5)));
        assert_eq!(limit(r#"{"limit": 5.0}"#), Ok(Some(5)));
        assert_eq!(limit(r#"{"limit": 2.5e1}"#), Ok(Some(25)));
        for refused in [
            r#"{"limit": 5.5}"#,
            r#"{"limit": -1}"#,
            r#"{"limit": 1e10}"#,
            r#"{"limit": "5"}"#,
        ] {
            assert!(limit(refused).is_err(), "{refused}");
        }
    }
}
