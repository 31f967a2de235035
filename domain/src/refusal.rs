//! The refusal registry: every code a pre-generation refusal may carry, with who fixes it and
//! when to retry. A refused render consumes nothing and leaves its handshake intact.

/// When the agent may try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    AfterFix,
    NextPeriod,
    Later,
    Never,
}

impl Retry {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AfterFix => "after-fix",
            Self::NextPeriod => "next-period",
            Self::Later => "later",
            Self::Never => "never",
        }
    }
}

/// Who can fix the cause. An agent must not auto-retry an `after-fix` refusal it cannot fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixBy {
    Caller,
    Operator,
    User,
}

impl FixBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Caller => "caller",
            Self::Operator => "operator",
            Self::User => "user",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    InsufficientCredit,
    AppRateLimited,
    IssuerRateLimited,
    AppDeprovisioned,
}

/// One registry row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusalEntry {
    pub code: &'static str,
    pub fix: &'static str,
    pub retry: Retry,
    pub fix_by: FixBy,
}

impl RefusalCode {
    pub const ALL: [RefusalCode; 4] = [
        Self::InsufficientCredit,
        Self::AppRateLimited,
        Self::IssuerRateLimited,
        Self::AppDeprovisioned,
    ];

    pub fn entry(self) -> RefusalEntry {
        match self {
            Self::InsufficientCredit => RefusalEntry {
                code: "insufficient_credit",
                fix: "top up the wallet or redeem a coupon, then render again with the same handshakeId",
                retry: Retry::AfterFix,
                fix_by: FixBy::User,
            },
            Self::AppRateLimited => RefusalEntry {
                code: "app_rate_limited",
                fix: "wait for the next rate-limit window; the handshake stays valid",
                retry: Retry::NextPeriod,
                fix_by: FixBy::Caller,
            },
            Self::IssuerRateLimited => RefusalEntry {
                code: "issuer_rate_limited",
                fix: "this address sent too many generations; wait for the next window",
                retry: Retry::NextPeriod,
                fix_by: FixBy::Caller,
            },
            Self::AppDeprovisioned => RefusalEntry {
                code: "app_deprovisioned",
                fix: "the app was deprovisioned by its operator; use another app",
                retry: Retry::Never,
                fix_by: FixBy::Operator,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/agent-api.md writes the registry down; a row per code, as the code has it.
    #[test]
    fn the_documented_registry_matches_the_code() {
        let docs = include_str!("../../docs/agent-api.md");
        for code in RefusalCode::ALL {
            let e = code.entry();
            let row = format!("| `{}` | `{}` | `{}` |", e.code, e.retry.as_str(), e.fix_by.as_str());
            assert!(docs.contains(&row), "docs/agent-api.md lacks the row {row}");
            assert!(docs.contains(e.fix), "docs/agent-api.md lacks the fix of {}", e.code);
        }
    }

    #[test]
    fn codes_are_unique_snake_case() {
        let codes: Vec<_> = RefusalCode::ALL.iter().map(|c| c.entry().code).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len());
        assert!(
            codes
                .iter()
                .all(|c| c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'))
        );
    }
}
