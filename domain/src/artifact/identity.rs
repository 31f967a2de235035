//! (scope, name, version): what names one artifact version.

use std::cmp::Ordering;

use serde::Serialize;

use super::ArtifactError;

/// Longest scope (without its `@`) or name, in characters.
pub const ARTIFACT_SEGMENT_MAX_CHARS: usize = 64;

/// `@` followed by the publisher name: publisher `acme` owns scope `@acme`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(transparent)]
pub struct ArtifactScope(String);

impl ArtifactScope {
    /// Accepts `@acme`; a scope without its `@` is refused, so one artifact has one spelling.
    pub fn parse(raw: &str) -> Result<Self, ArtifactError> {
        match raw.strip_prefix('@') {
            Some(publisher) if is_segment(publisher) => Ok(Self(raw.to_owned())),
            _ => Err(ArtifactError::InvalidScope(raw.to_owned())),
        }
    }

    /// The scope a publisher owns.
    pub fn of_publisher(publisher: &str) -> Result<Self, ArtifactError> {
        Self::parse(&format!("@{publisher}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The publisher name: the scope without its `@`.
    pub fn publisher(&self) -> &str {
        &self.0[1..]
    }
}

/// A package name: 1 to 64 characters of lowercase ASCII letters, digits, `-`, `_` and `.`,
/// starting with a letter or digit, so it is safe in URL paths and install directory names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(transparent)]
pub struct ArtifactName(String);

impl ArtifactName {
    pub fn parse(raw: &str) -> Result<Self, ArtifactError> {
        if is_segment(raw) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ArtifactError::InvalidName(raw.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_segment(value: &str) -> bool {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    value.len() <= ARTIFACT_SEGMENT_MAX_CHARS
        && value.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && value.chars().all(allowed)
}

/// An exact semantic version such as `1.2.3-alpha.1+build.42`. Ranges (`^1.2`, `>=1`), the word
/// `latest`, a leading `v` and leading zeros (`01.2.3`, `1.2.3-01`) are refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct SemanticVersion(String);

impl SemanticVersion {
    pub fn parse(raw: &str) -> Result<Self, ArtifactError> {
        let refuse = |reason: String| ArtifactError::InvalidVersion {
            raw: raw.to_owned(),
            reason,
        };
        if raw.trim().eq_ignore_ascii_case("latest") {
            return Err(refuse(
                "`latest` is not a version; name an exact version such as 1.2.3".to_owned(),
            ));
        }
        if looks_like_range(raw) {
            return Err(refuse(
                "a range is not a version; name an exact version such as 1.2.3".to_owned(),
            ));
        }
        // The semver crate implements exactly SemVer 2.0.0's grammar, leading-zero rule included;
        // its message ("invalid leading zero in major version number") is the reason we give.
        semver::Version::parse(raw).map_err(|error| refuse(error.to_string()))?;
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// SemVer precedence (build metadata ignored, then compared textually so the order is total).
    pub fn precedence(&self, other: &Self) -> Ordering {
        match (semver::Version::parse(&self.0), semver::Version::parse(&other.0)) {
            (Ok(a), Ok(b)) => a.cmp_precedence(&b).then_with(|| a.build.cmp(&b.build)),
            _ => self.0.cmp(&other.0),
        }
    }

    /// The version without its build metadata (`1.2.3` of `1.2.3+fix`): two versions have the
    /// same release exactly when [`Self::equals_ignoring_build`] holds, since SemVer allows no
    /// leading zeros and compares pre-release identifiers by their text otherwise. The registry's
    /// store keys a package's versions by it, so it holds at most one of each release.
    pub fn release(&self) -> &str {
        self.0
            .split_once('+')
            .map_or(self.0.as_str(), |(release, _build)| release)
    }

    /// The same version once build metadata is dropped (`1.2.3` and `1.2.3+fix`): SemVer 2.0.0
    /// §10 gives them equal precedence, so the registry holds at most one of them.
    pub fn equals_ignoring_build(&self, other: &Self) -> bool {
        match (semver::Version::parse(&self.0), semver::Version::parse(&other.0)) {
            (Ok(a), Ok(b)) => a.cmp_precedence(&b) == Ordering::Equal,
            _ => self.0 == other.0,
        }
    }
}

/// Range operators and wildcards of npm and Cargo requirement syntax.
fn looks_like_range(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with(['^', '~', '>', '<', '=', '*'])
        || raw.contains("||")
        || raw.contains(" - ")
        || raw
            .split(['.', '-', '+'])
            .take(3)
            .any(|part| part == "x" || part == "X" || part == "*")
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ArtifactIdentity {
    pub scope: ArtifactScope,
    pub name: ArtifactName,
    pub version: SemanticVersion,
}

impl ArtifactIdentity {
    pub fn parse(scope: &str, name: &str, version: &str) -> Result<Self, ArtifactError> {
        Ok(Self {
            scope: ArtifactScope::parse(scope)?,
            name: ArtifactName::parse(name)?,
            version: SemanticVersion::parse(version)?,
        })
    }
}

impl std::fmt::Display for ArtifactIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}@{}",
            self.scope.as_str(),
            self.name.as_str(),
            self.version.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(raw: &str) -> Option<String> {
        match SemanticVersion::parse(raw) {
            Ok(_) => None,
            Err(ArtifactError::InvalidVersion { reason, .. }) => Some(reason),
            Err(other) => panic!("{raw:?}: {other:?}"),
        }
    }

    #[test]
    fn versions_are_exact_semantic_versions() {
        const RANGE: &str = "a range is not a version; name an exact version such as 1.2.3";
        let rows: [(&str, Option<&str>); 22] = [
            ("1.2.3", None),
            ("0.0.0", None),
            ("1.2.3-alpha.1+build.42", None),
            ("10.20.30-rc.0", None),
            (
                "latest",
                Some("`latest` is not a version; name an exact version such as 1.2.3"),
            ),
            ("^1.2.3", Some(RANGE)),
            ("~1.2", Some(RANGE)),
            (">=1.0.0", Some(RANGE)),
            ("1.x", Some(RANGE)),
            ("1.2.*", Some(RANGE)),
            ("*", Some(RANGE)),
            ("1.2.3 - 2.0.0", Some(RANGE)),
            ("1.2.3 || 2.0.0", Some(RANGE)),
            ("01.2.3", Some("invalid leading zero in major version number")),
            ("1.02.3", Some("invalid leading zero in minor version number")),
            ("1.2.03", Some("invalid leading zero in patch version number")),
            ("1.2.3-01", Some("invalid leading zero in pre-release identifier")),
            (
                "1.2",
                Some("unexpected end of input while parsing minor version number"),
            ),
            (
                "v1.2.3",
                Some("unexpected character 'v' while parsing major version number"),
            ),
            (
                " 1.2.3",
                Some("unexpected character ' ' while parsing major version number"),
            ),
            ("", Some("empty string, expected a semver version")),
            ("1.2.3-beta.x", None),
        ];
        for (raw, expected) in rows {
            assert_eq!(reason(raw).as_deref(), expected, "{raw:?}");
        }
        let error = SemanticVersion::parse("01.2.3").unwrap_err();
        assert_eq!(error.code(), "invalid_version");
        assert_eq!(
            error.to_string(),
            "invalid version \"01.2.3\": invalid leading zero in major version number"
        );
    }

    #[test]
    fn precedence_follows_semver() {
        let v = |raw: &str| SemanticVersion::parse(raw).unwrap();
        assert_eq!(v("1.10.0").precedence(&v("1.9.0")), Ordering::Greater);
        assert_eq!(v("1.0.0-alpha").precedence(&v("1.0.0")), Ordering::Less);
        assert_eq!(v("1.0.0-alpha.10").precedence(&v("1.0.0-alpha.9")), Ordering::Greater);
    }

    #[test]
    fn the_release_is_the_version_without_build_metadata() {
        let v = |raw: &str| SemanticVersion::parse(raw).unwrap();
        let rows = [
            ("1.2.3", "1.2.3"),
            ("1.2.3+fix", "1.2.3"),
            ("1.2.3-rc.1+build.2", "1.2.3-rc.1"),
            ("1.2.3-rc-1", "1.2.3-rc-1"),
        ];
        for (raw, release) in rows {
            assert_eq!(v(raw).release(), release, "{raw}");
        }
        // Equal releases exactly when the versions are equal but for build metadata.
        let versions = [
            "1.2.3",
            "1.2.3+fix",
            "1.2.3-rc.1",
            "1.2.3-rc.1+x",
            "1.2.3-RC.1",
            "1.2.30",
        ];
        for a in versions {
            for b in versions {
                assert_eq!(
                    v(a).release() == v(b).release(),
                    v(a).equals_ignoring_build(&v(b)),
                    "{a} against {b}"
                );
            }
        }
    }

    #[test]
    fn build_metadata_does_not_make_another_version() {
        let v = |raw: &str| SemanticVersion::parse(raw).unwrap();
        let rows = [
            ("1.2.3", "1.2.3", true),
            ("1.2.3", "1.2.3+fix", true),
            ("1.2.3+a", "1.2.3+b.1", true),
            ("1.2.3-rc.1+a", "1.2.3-rc.1", true),
            ("1.2.3", "1.2.4", false),
            ("1.2.3", "1.2.3-rc.1", false),
            ("1.2.3-rc.1", "1.2.3-rc.2+a", false),
        ];
        for (a, b, same) in rows {
            assert_eq!(v(a).equals_ignoring_build(&v(b)), same, "{a} vs {b}");
            assert_eq!(v(b).equals_ignoring_build(&v(a)), same, "{b} vs {a}");
        }
    }

    #[test]
    fn scopes_and_names_are_path_safe() {
        let long = "a".repeat(65);
        let rows = [
            ("@acme", "date-picker", Ok(())),
            ("@acme.io", "x_1", Ok(())),
            ("acme", "x", Err("invalid_scope")),
            ("@Acme", "x", Err("invalid_scope")),
            ("@", "x", Err("invalid_scope")),
            ("@-acme", "x", Err("invalid_scope")),
            ("@acme", "../x", Err("invalid_name")),
            ("@acme", "a/b", Err("invalid_name")),
            ("@acme", long.as_str(), Err("invalid_name")),
        ];
        for (scope, name, expected) in rows {
            let result = ArtifactIdentity::parse(scope, name, "1.0.0").map(|_| ());
            assert_eq!(result.map_err(|e| e.code()), expected, "{scope}/{name}");
        }
        assert_eq!(ArtifactScope::parse("@acme").unwrap().publisher(), "acme");
        assert_eq!(ArtifactScope::of_publisher("acme").unwrap().as_str(), "@acme");
    }
}
