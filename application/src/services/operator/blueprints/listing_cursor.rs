//! `nextCursor` of `svc_ops_list_blueprints`: the page's last row (its creation time and id),
//! so rows stored or deleted meanwhile never shift a page. Opaque to clients (base64url); a
//! cursor we did not hand out is refused rather than guessed at.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SecondsFormat, Utc};

use super::OpsBlueprintError;
use crate::ports::blueprints::ListingPosition;

pub fn encode(position: &ListingPosition) -> String {
    // Nanoseconds: the time must come back exactly as the database gave it.
    let at = position.created_at.to_rfc3339_opts(SecondsFormat::Nanos, true);
    URL_SAFE_NO_PAD.encode(format!("{at} {}", position.blueprint_id))
}

pub fn decode(cursor: &str) -> Result<ListingPosition, OpsBlueprintError> {
    let position = URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| {
            let (at, id) = text.split_once(' ')?;
            let created_at = DateTime::parse_from_rfc3339(at).ok()?.with_timezone(&Utc);
            (!id.is_empty()).then(|| ListingPosition {
                created_at,
                blueprint_id: id.to_owned(),
            })
        })
        .filter(|position| encode(position) == cursor);
    position.ok_or(OpsBlueprintError::InvalidCursor)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_cursor_names_its_row_exactly_and_nothing_else_is_one() {
        let position = ListingPosition {
            created_at: Utc.timestamp_opt(1_780_000_000, 123_456_789).unwrap(),
            blueprint_id: "0b5e-id with spaces".into(),
        };
        let cursor = encode(&position);
        assert!(
            cursor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{cursor}"
        );
        assert_eq!(decode(&cursor).unwrap(), position);
        let other = |text: &str| URL_SAFE_NO_PAD.encode(text);
        for bad in [
            String::new(),
            "not base64!".to_owned(),
            other("2026-01-01T00:00:00Z"),
            other("2026-01-01T00:00:00Z "),
            other("yesterday b1"),
            // A time written another way than ours names no row we handed out.
            other("2026-01-01T00:00:00+00:00 b1"),
            format!("{cursor}="),
        ] {
            assert!(matches!(decode(&bad), Err(OpsBlueprintError::InvalidCursor)), "{bad:?}");
        }
    }
}
