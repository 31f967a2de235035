//! Operator errors on the wire. A refusal is an error result whose `structuredContent` is
//! `{ error: { code, message } }` with Document 3's snake_case code; an argument the schema could
//! not judge (a blank name, an address that is not RFC 5322, a limit out of range) is -32602
//! naming the field; a storage failure is -32603 with a generic message, its cause logged.

use poem::http::StatusCode;
use svc_application::ports::RepositoryError;
use svc_application::services::apps::AppServiceError;
use svc_application::services::hosted::ProviderKeyServiceError;
use svc_application::services::operator::{
    ConnectorKeyServiceError, CouponServiceError, CreditServiceError, OpsBlueprintError, OrgServiceError,
};
use svc_domain::blueprint::operator_texts::OperatorText;
use svc_domain::connector_key::ConnectorKeyError;
use svc_domain::coupon::CouponError;
use svc_domain::invite::InviteError;
use svc_domain::org::OrgError;
use svc_domain::provider_key::ProviderKeyError;
use svc_domain::wallet::WalletError;
use svc_protocol::INTERNAL_ERROR;

use super::{ErrorKind, ToolFailure};
use crate::mcp::jsonrpc::RpcFailure;

/// An application error of an operator service, placed in the table.
pub trait OpsError: std::error::Error {
    fn kind(&self) -> ErrorKind;

    /// The failure a tool answers for this error.
    fn failure(&self) -> ToolFailure {
        match self.kind() {
            ErrorKind::Internal => ToolFailure::Rpc(internal(&self)),
            kind => kind.failure(&self.to_string()),
        }
    }
}

pub fn internal(cause: &dyn std::fmt::Debug) -> RpcFailure {
    tracing::error!(error = ?cause, "tool failed");
    RpcFailure::new(INTERNAL_ERROR, "Internal error")
}

use ErrorKind::{Argument, Internal, Refusal};

impl OpsError for AppServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidName(_) => Argument("displayName"),
            Self::SystemPromptTooLong { .. } => Argument("systemPrompt"),
            Self::NotFound | Self::OwnerFull(_) => Refusal(self.code()),
            Self::Storage(e) => repository(e),
        }
    }
}

impl OpsError for OrgServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Org(e) => org(e),
            Self::Invite(e) => invite(e),
            Self::Storage(e) => repository(e),
            Self::Mail(_) => Internal,
            Self::RateLimited(limited) => ErrorKind::RateLimited {
                retry_after_ms: limited.retry_after_ms,
            },
            Self::OrgLimit(_) => Refusal(self.code()),
        }
    }
}

fn org(e: &OrgError) -> ErrorKind {
    match e {
        OrgError::InvalidName(_) => Argument("name"),
        OrgError::InviteAccessDenied | OrgError::NotFound => Refusal(e.code()),
    }
}

fn invite(e: &InviteError) -> ErrorKind {
    match e {
        InviteError::InvalidEmail(_) => Argument("email"),
        InviteError::InvalidRole(_) => Argument("role"),
        InviteError::AlreadyAccepted | InviteError::Revoked | InviteError::Expired | InviteError::NotFound => {
            Refusal(e.code())
        }
    }
}

impl OpsError for ConnectorKeyServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Key(e) => match e {
                ConnectorKeyError::InvalidName(_) => Argument("name"),
                // The server mints secrets; a weak one is its own fault.
                ConnectorKeyError::WeakSecret => Internal,
                ConnectorKeyError::AccessDenied | ConnectorKeyError::NotFound => Refusal(e.code()),
            },
            Self::Storage(e) => repository(e),
        }
    }
}

impl OpsError for CouponServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Coupon(e) => coupon(e),
            Self::RateLimited(limited) => ErrorKind::RateLimited {
                retry_after_ms: limited.retry_after_ms,
            },
            Self::Storage(e) => repository(e),
        }
    }
}

fn coupon(e: &CouponError) -> ErrorKind {
    match e {
        // A malformed code is answered like a missing one: no such coupon can exist.
        CouponError::InvalidCode
        | CouponError::NotFound
        | CouponError::AlreadyRedeemed
        | CouponError::Expired
        | CouponError::AccessDenied => Refusal(e.code()),
        CouponError::NonPositiveCredit(_) => Argument("creditCents"),
        CouponError::Wallet(e) => wallet(e),
    }
}

fn wallet(e: &WalletError) -> ErrorKind {
    match e {
        WalletError::NonPositiveAmount(_) => Argument("amountCents"),
        WalletError::InsufficientCredit { .. } | WalletError::RefundExceedsSpent { .. } => Refusal(e.code()),
        WalletError::Overflow => Internal,
    }
}

impl OpsError for CreditServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Wallet(e) => wallet(e),
            Self::InvalidLimit(_) => Argument("limit"),
            Self::InvalidCursor => Argument("cursor"),
            Self::Storage(e) => repository(e),
        }
    }
}

impl OpsError for ProviderKeyServiceError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::Key(e) => match e {
                ProviderKeyError::EmptyKey => Argument("plaintextKey"),
                ProviderKeyError::InvalidLabel => Argument("label"),
                ProviderKeyError::NotFound => Refusal(e.code()),
                ProviderKeyError::UnknownMasterKey(_) | ProviderKeyError::Unsealable => Internal,
            },
            Self::UnknownProvider => Argument("provider"),
            Self::Storage(e) => repository(e),
        }
    }
}

impl OpsError for OpsBlueprintError {
    fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidContract(_) | Self::ContractOverBudget(_) => Argument("contract"),
            Self::ComponentOverBudget(_) => Argument("componentCode"),
            Self::TextTooLong(e) => Argument(operator_text(e.field)),
            Self::VarianceTooLarge(_) => Argument("variance"),
            Self::InvalidLimit(_) => Argument("limit"),
            Self::InvalidCursor => Argument("cursor"),
            Self::GeneratorNotFound(_)
            | Self::MissingCredentials(_)
            | Self::GenerationFailed(_)
            | Self::BlueprintNotFound(_)
            | Self::AppFull(_) => Refusal(self.code()),
            Self::Overloaded { retry_after_seconds } => ErrorKind::Overloaded {
                retry_after_seconds: *retry_after_seconds,
            },
            Self::Busy(busy) => ErrorKind::Busy {
                retry_after_seconds: busy.retry_after_seconds,
            },
            Self::Storage(e) => repository(e),
            Self::Catalog(_) => Internal,
        }
    }
}

/// The argument an operator text arrives in.
fn operator_text(field: OperatorText) -> &'static str {
    match field {
        OperatorText::Persona => "persona",
        OperatorText::Aesthetic => "aesthetic",
        OperatorText::Context => "context",
        OperatorText::SeedPrompt => "seedPrompt",
    }
}

/// A store failure is the server's, whatever its kind: a conflict that reaches a tool is one no
/// service retried or explained.
fn repository(e: &RepositoryError) -> ErrorKind {
    match e {
        RepositoryError::Conflict(_) | RepositoryError::Corrupt { .. } | RepositoryError::Unavailable(_) => Internal,
    }
}

/// `POST /_svc/invites/{inviteId}/accept`: the HTTP status of a refused acceptance; `None` for a
/// failure of the server (answered 500, its cause logged).
pub fn accept_invite_status(e: &OrgServiceError) -> Option<StatusCode> {
    match e {
        OrgServiceError::Invite(invite) => match invite {
            InviteError::NotFound => Some(StatusCode::NOT_FOUND),
            InviteError::Revoked | InviteError::Expired => Some(StatusCode::GONE),
            InviteError::AlreadyAccepted => Some(StatusCode::CONFLICT),
            InviteError::InvalidEmail(_) | InviteError::InvalidRole(_) => None,
        },
        // Sending invites and creating orgs are bounded; an acceptance never meets either.
        OrgServiceError::Org(_)
        | OrgServiceError::RateLimited(_)
        | OrgServiceError::OrgLimit(_)
        | OrgServiceError::Storage(_)
        | OrgServiceError::Mail(_) => None,
    }
}
