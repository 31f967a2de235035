//! The closed sets of values the agent results carry (Document 1), as types: each serialises to
//! its wire string and publishes its values as an `enum` (or `const`) in the tool's
//! `outputSchema`, so a client can check them and the server cannot answer outside them.

use schemars::JsonSchema;
use serde::Serialize;
use svc_domain::handshake::HandshakeAction;
use svc_domain::refusal::{RefusalCode, Retry};
use svc_domain::session::SessionStatus;

/// `action` of a handshake and of a render that ran: Document 1 gives both one enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActionBody {
    Create,
    Reuse,
    Update,
    Replace,
    Declined,
}

impl From<HandshakeAction> for ActionBody {
    fn from(action: HandshakeAction) -> Self {
        match action {
            HandshakeAction::Create => Self::Create,
            HandshakeAction::Reuse => Self::Reuse,
            HandshakeAction::Update => Self::Update,
            HandshakeAction::Replace => Self::Replace,
            HandshakeAction::Declined => Self::Declined,
        }
    }
}

/// `error.code` of a failed render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RenderFailureCode {
    ProductionFailed,
    ValidationError,
    NoPlatformKey,
    NoCredentials,
    GenerationQueueOverloaded,
}

impl RenderFailureCode {
    const ALL: [Self; 5] = [
        Self::ProductionFailed,
        Self::ValidationError,
        Self::NoPlatformKey,
        Self::NoCredentials,
        Self::GenerationQueueOverloaded,
    ];

    /// The code a failure was recorded with; a code outside the set is a production failure,
    /// the one Document 1 gives a generation that produced nothing for any other reason.
    pub fn of(code: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|known| known.as_str() == code)
            .unwrap_or(Self::ProductionFailed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProductionFailed => "PRODUCTION_FAILED",
            Self::ValidationError => "VALIDATION_ERROR",
            Self::NoPlatformKey => "NO_PLATFORM_KEY",
            Self::NoCredentials => "NO_CREDENTIALS",
            Self::GenerationQueueOverloaded => "GENERATION_QUEUE_OVERLOADED",
        }
    }
}

/// `refusal.code` of a refused render: the render-gate subset of the refusal registry. The
/// registry's other codes refuse elsewhere (`app_deprovisioned`: the endpoint, before any tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RenderGateCode {
    InsufficientCredit,
    AppRateLimited,
    IssuerRateLimited,
}

impl TryFrom<RefusalCode> for RenderGateCode {
    /// The registry code, which no render is refused with.
    type Error = RefusalCode;

    fn try_from(code: RefusalCode) -> Result<Self, RefusalCode> {
        match code {
            RefusalCode::InsufficientCredit => Ok(Self::InsufficientCredit),
            RefusalCode::AppRateLimited => Ok(Self::AppRateLimited),
            RefusalCode::IssuerRateLimited => Ok(Self::IssuerRateLimited),
            RefusalCode::AppDeprovisioned => Err(code),
        }
    }
}

/// `refusal.retry`: when a refused render may be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RetryBody {
    AfterFix,
    NextPeriod,
    Later,
    Never,
}

impl From<Retry> for RetryBody {
    fn from(retry: Retry) -> Self {
        match retry {
            Retry::AfterFix => Self::AfterFix,
            Retry::NextPeriod => Self::NextPeriod,
            Retry::Later => Self::Later,
            Retry::Never => Self::Never,
        }
    }
}

/// `refusal.handshake`: always `intact`, the same handshakeId renders once the cause is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HandshakeState {
    Intact,
}

/// `status` of `svc_consume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConsumeStatus {
    Active,
    Expired,
}

impl From<SessionStatus> for ConsumeStatus {
    /// A failed render reads `expired`: it will never take a gesture.
    fn from(status: SessionStatus) -> Self {
        match status {
            SessionStatus::Active => Self::Active,
            SessionStatus::Expired | SessionStatus::Failed => Self::Expired,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn wire(value: impl Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    /// Each wire value is the domain's own string for it.
    #[test]
    fn wire_values_are_the_domains() {
        for action in [
            HandshakeAction::Create,
            HandshakeAction::Reuse,
            HandshakeAction::Update,
            HandshakeAction::Replace,
            HandshakeAction::Declined,
        ] {
            assert_eq!(wire(ActionBody::from(action)), json!(action.as_str()));
        }
        for retry in [Retry::AfterFix, Retry::NextPeriod, Retry::Later, Retry::Never] {
            assert_eq!(wire(RetryBody::from(retry)), json!(retry.as_str()));
        }
        for code in RefusalCode::ALL {
            if let Ok(gate) = RenderGateCode::try_from(code) {
                assert_eq!(wire(gate), json!(code.entry().code));
            }
        }
        for code in RenderFailureCode::ALL {
            assert_eq!(wire(code), json!(code.as_str()));
            assert_eq!(RenderFailureCode::of(code.as_str()), code);
        }
        assert_eq!(
            RenderFailureCode::of("SOMETHING_ELSE"),
            RenderFailureCode::ProductionFailed
        );
        assert_eq!(wire(HandshakeState::Intact), json!("intact"));
        for status in [SessionStatus::Active, SessionStatus::Expired, SessionStatus::Failed] {
            let expected = if status == SessionStatus::Active {
                "active"
            } else {
                "expired"
            };
            assert_eq!(wire(ConsumeStatus::from(status)), json!(expected));
        }
    }
}
