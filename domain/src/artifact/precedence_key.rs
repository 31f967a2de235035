//! A version's precedence as text that sorts like the version: a store can then find a package's
//! highest version with a comparison of strings, without knowing SemVer.
//!
//! The key is the hex of a byte string whose byte-wise order is `SemanticVersion::precedence`
//! (build metadata included, as that order is total). Hex keeps it to `0-9a-f`, which every
//! collation orders as ASCII does. Stored keys must stay valid: a change to this encoding needs a
//! migration that re-keys every stored version.

use super::SemanticVersion;

/// Marks an identifier made of digits only, which sorts below any other (SemVer 11.4.3).
const NUMERIC: u8 = 0x01;
/// Marks an identifier with a non-digit.
const ALPHANUMERIC: u8 = 0x02;
/// Ends an alphanumeric identifier (below every byte an identifier may hold) and ends a list
/// (below both markers, so a shorter list sorts first).
const END: u8 = 0x00;
/// After the patch number: a pre-release sorts below the release itself (SemVer 11.3).
const PRE_RELEASE: u8 = 0x01;
const RELEASE: u8 = 0x02;

impl SemanticVersion {
    /// Text whose byte-wise (and every collation's) order is this version's precedence.
    pub fn precedence_key(&self) -> String {
        let Ok(version) = semver::Version::parse(self.as_str()) else {
            // Not reachable: a SemanticVersion parsed. Its own text then orders it.
            return hex::encode(self.as_str());
        };
        let mut key = Vec::with_capacity(32);
        for number in [version.major, version.minor, version.patch] {
            key.extend_from_slice(&number.to_be_bytes());
        }
        if version.pre.is_empty() {
            key.push(RELEASE);
        } else {
            key.push(PRE_RELEASE);
            for identifier in version.pre.as_str().split('.') {
                push_pre_release_identifier(&mut key, identifier);
            }
            key.push(END);
        }
        // semver's BuildMetadata order: the empty string is one numeric identifier, "".
        for identifier in version.build.as_str().split('.') {
            push_build_identifier(&mut key, identifier);
        }
        key.push(END);
        hex::encode(key)
    }
}

/// Numeric identifiers compare by value: SemVer forbids their leading zeros, so by length, then
/// digit by digit.
fn push_pre_release_identifier(key: &mut Vec<u8>, identifier: &str) {
    if identifier.bytes().all(|b| b.is_ascii_digit()) {
        push_number(key, identifier);
    } else {
        push_text(key, identifier);
    }
}

/// Build metadata may have leading zeros: semver orders `0 < 00 < 1 < 01 < 001 < 2`, by value
/// first, then by the length written.
fn push_build_identifier(key: &mut Vec<u8>, identifier: &str) {
    if identifier.bytes().all(|b| b.is_ascii_digit()) {
        push_number(key, identifier.trim_start_matches('0'));
        key.extend_from_slice(&length(identifier));
    } else {
        push_text(key, identifier);
    }
}

fn push_number(key: &mut Vec<u8>, digits: &str) {
    key.push(NUMERIC);
    key.extend_from_slice(&length(digits));
    key.extend_from_slice(digits.as_bytes());
}

fn push_text(key: &mut Vec<u8>, text: &str) {
    key.push(ALPHANUMERIC);
    key.extend_from_slice(text.as_bytes());
    key.push(END);
}

/// A length as two bytes: an identifier longer than 65,535 characters is beyond any stored version.
fn length(text: &str) -> [u8; 2] {
    u16::try_from(text.len()).unwrap_or(u16::MAX).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use proptest::prelude::*;

    use super::*;

    fn v(raw: &str) -> SemanticVersion {
        SemanticVersion::parse(raw).unwrap()
    }

    #[test]
    fn keys_sort_as_semver_orders_the_versions() {
        // Ascending by precedence, each step a rule of SemVer 11 or of semver's build order.
        let ascending = [
            "0.0.1",
            "0.1.0",
            "0.9.0",
            "0.10.0",
            "1.0.0-0",
            "1.0.0-2",
            "1.0.0-10",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-alpha-2",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.0+0",
            "1.0.0+00",
            "1.0.0+1",
            "1.0.0+01",
            "1.0.0+2",
            "1.0.0+10",
            "1.0.0+10.0",
            "1.0.0+a",
            "1.0.0+build.1",
            "1.0.1",
            "1.9.0",
            "1.10.0",
            "18446744073709551615.0.0",
        ];
        for pair in ascending.windows(2) {
            let (low, high) = (v(pair[0]), v(pair[1]));
            assert_eq!(low.precedence(&high), Ordering::Less, "{} < {}", pair[0], pair[1]);
            assert!(
                low.precedence_key() < high.precedence_key(),
                "{} < {}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn keys_are_hex() {
        let key = v("1.2.3-Beta.7+Build-9").precedence_key();
        assert!(
            key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{key}"
        );
    }

    fn identifier() -> impl Strategy<Value = String> {
        prop_oneof!["(0|[1-9][0-9]{0,3})", "[0-9]{0,2}[A-Za-z-][0-9A-Za-z-]{0,3}",]
    }

    fn build_identifier() -> impl Strategy<Value = String> {
        prop_oneof!["[0-9]{1,4}", "[0-9A-Za-z-]{1,4}"]
    }

    fn version() -> impl Strategy<Value = String> {
        (
            0u64..3,
            0u64..12,
            0u64..3,
            prop::collection::vec(identifier(), 0..3),
            prop::collection::vec(build_identifier(), 0..3),
        )
            .prop_map(|(major, minor, patch, pre, build)| {
                let mut raw = format!("{major}.{minor}.{patch}");
                if !pre.is_empty() {
                    raw = format!("{raw}-{}", pre.join("."));
                }
                if !build.is_empty() {
                    raw = format!("{raw}+{}", build.join("."));
                }
                raw
            })
    }

    proptest! {
        #[test]
        fn key_order_is_precedence(a in version(), b in version()) {
            let (a, b) = (v(&a), v(&b));
            prop_assert_eq!(a.precedence_key().cmp(&b.precedence_key()), a.precedence(&b), "{:?} {:?}", a, b);
        }
    }
}
