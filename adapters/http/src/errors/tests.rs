//! Walks every variant of every error type the tools answer: each lands where the table says,
//! and `every_*` below lists each variant once (their `match`es have no wildcard, so a new
//! variant does not compile until it is added here with its expected place).

use serde_json::json;
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::MailerError;
use svc_application::services::agent::AgentError;
use svc_application::services::apps::AppServiceError;
use svc_application::services::blueprints::CatalogError;
use svc_application::services::cpu_gate::CpuBusy;
use svc_application::services::hosted::ProviderKeyServiceError;
use svc_application::services::operator::{
    ConnectorKeyServiceError, CouponServiceError, CreditServiceError, InvitesLimited, OpsBlueprintError,
    OrgServiceError, OwnedOrgsFull,
};
use svc_domain::app::OwnerAppsFull;
use svc_domain::blueprint::app_capacity::AppBlueprintsFull;
use svc_domain::blueprint::listing_page::InvalidBlueprintPageLimit;
use svc_domain::blueprint::operator_texts::{OperatorText, OperatorTextTooLong};
use svc_domain::blueprint::variance_patch::VarianceTooLarge;
use svc_domain::budget::{Budget, BudgetExceeded};
use svc_domain::connector_key::ConnectorKeyError;
use svc_domain::coupon::CouponError;
use svc_domain::invite::InviteError;
use svc_domain::name::NameError;
use svc_domain::org::OrgError;
use svc_domain::provider_key::ProviderKeyError;
use svc_domain::wallet::{InvalidPageLimit, WalletError};
use svc_protocol::{GENERATION_OVERLOADED, INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND};

use super::*;

fn storage() -> RepositoryError {
    RepositoryError::Unavailable(anyhow::anyhow!("disk full"))
}

fn name_error() -> NameError {
    NameError::Length { chars: 0, max: 120 }
}

fn over() -> BudgetExceeded {
    BudgetExceeded::new(Budget::ContractBytes, "", "70,000 bytes")
}

fn wallet_errors() -> Vec<(WalletError, ErrorKind)> {
    let all = vec![
        WalletError::NonPositiveAmount(0),
        WalletError::InsufficientCredit {
            balance_cents: 1,
            requested_cents: 2,
        },
        WalletError::RefundExceedsSpent {
            lifetime_spent_cents: 1,
            requested_cents: 2,
        },
        WalletError::Overflow,
    ];
    all.into_iter()
        .map(|e| {
            let expected = match &e {
                WalletError::NonPositiveAmount(_) => Argument("amountCents"),
                WalletError::InsufficientCredit { .. } => Refusal("insufficient_credit"),
                WalletError::RefundExceedsSpent { .. } => Refusal("refund_exceeds_spent"),
                WalletError::Overflow => Internal,
            };
            (e, expected)
        })
        .collect()
}

use ErrorKind::{Argument, Internal, Refusal};

fn every_app_error() -> Vec<(AppServiceError, ErrorKind)> {
    let all = vec![
        AppServiceError::InvalidName(name_error()),
        AppServiceError::SystemPromptTooLong { chars: 10_001 },
        AppServiceError::NotFound,
        AppServiceError::OwnerFull(OwnerAppsFull { stored: 100 }),
        AppServiceError::Storage(storage()),
    ];
    all.into_iter()
        .map(|e| {
            let expected = match &e {
                AppServiceError::InvalidName(_) => Argument("displayName"),
                AppServiceError::SystemPromptTooLong { .. } => Argument("systemPrompt"),
                AppServiceError::NotFound => Refusal("app_not_found"),
                AppServiceError::OwnerFull(_) => Refusal("app_limit_reached"),
                AppServiceError::Storage(_) => Internal,
            };
            (e, expected)
        })
        .collect()
}

fn every_org_error() -> Vec<(OrgServiceError, ErrorKind)> {
    let all = vec![
        OrgServiceError::Org(OrgError::InvalidName(name_error())),
        OrgServiceError::Org(OrgError::InviteAccessDenied),
        OrgServiceError::Org(OrgError::NotFound),
        OrgServiceError::Invite(InviteError::InvalidEmail("x".into())),
        OrgServiceError::Invite(InviteError::InvalidRole("owner".into())),
        OrgServiceError::Invite(InviteError::AlreadyAccepted),
        OrgServiceError::Invite(InviteError::Revoked),
        OrgServiceError::Invite(InviteError::Expired),
        OrgServiceError::Invite(InviteError::NotFound),
        OrgServiceError::Storage(storage()),
        OrgServiceError::Mail(MailerError(anyhow::anyhow!("smtp down"))),
        OrgServiceError::RateLimited(InvitesLimited {
            retry_after_ms: 61_000,
            limit: 20,
        }),
        OrgServiceError::OrgLimit(OwnedOrgsFull { stored: 10, max: 10 }),
    ];
    all.into_iter()
        .map(|e| {
            let expected = match &e {
                OrgServiceError::Org(OrgError::InvalidName(_)) => Argument("name"),
                OrgServiceError::Org(OrgError::InviteAccessDenied) => Refusal("org_invite_access_denied"),
                OrgServiceError::Org(OrgError::NotFound) => Refusal("org_not_found"),
                OrgServiceError::Invite(i) => match i {
                    InviteError::InvalidEmail(_) => Argument("email"),
                    InviteError::InvalidRole(_) => Argument("role"),
                    InviteError::AlreadyAccepted => Refusal("org_invite_already_accepted"),
                    InviteError::Revoked => Refusal("org_invite_revoked"),
                    InviteError::Expired => Refusal("org_invite_expired"),
                    InviteError::NotFound => Refusal("org_invite_not_found"),
                },
                OrgServiceError::Storage(_) | OrgServiceError::Mail(_) => Internal,
                OrgServiceError::RateLimited(_) => ErrorKind::RateLimited { retry_after_ms: 61_000 },
                OrgServiceError::OrgLimit(_) => Refusal("org_limit_reached"),
            };
            (e, expected)
        })
        .collect()
}

fn every_connector_key_error() -> Vec<(ConnectorKeyServiceError, ErrorKind)> {
    let all = vec![
        ConnectorKeyServiceError::Key(ConnectorKeyError::InvalidName(name_error())),
        ConnectorKeyServiceError::Key(ConnectorKeyError::WeakSecret),
        ConnectorKeyServiceError::Key(ConnectorKeyError::AccessDenied),
        ConnectorKeyServiceError::Key(ConnectorKeyError::NotFound),
        ConnectorKeyServiceError::Storage(storage()),
    ];
    all.into_iter()
        .map(|e| {
            let expected = match &e {
                ConnectorKeyServiceError::Key(k) => match k {
                    ConnectorKeyError::InvalidName(_) => Argument("name"),
                    ConnectorKeyError::WeakSecret => Internal,
                    ConnectorKeyError::AccessDenied => Refusal("connector_key_access_denied"),
                    ConnectorKeyError::NotFound => Refusal("connector_key_not_found"),
                },
                ConnectorKeyServiceError::Storage(_) => Internal,
            };
            (e, expected)
        })
        .collect()
}

fn every_coupon_error() -> Vec<(CouponServiceError, ErrorKind)> {
    let mut all = vec![
        (CouponError::InvalidCode, Refusal("coupon_not_found")),
        (CouponError::NotFound, Refusal("coupon_not_found")),
        (CouponError::AlreadyRedeemed, Refusal("coupon_already_redeemed")),
        (CouponError::Expired, Refusal("coupon_expired")),
        (CouponError::AccessDenied, Refusal("coupon_access_denied")),
        (CouponError::NonPositiveCredit(0), Argument("creditCents")),
    ];
    all.extend(
        wallet_errors()
            .into_iter()
            .map(|(w, kind)| (CouponError::Wallet(w), kind)),
    );
    // Every variant of CouponError is above.
    for (e, _) in &all {
        match e {
            CouponError::InvalidCode
            | CouponError::NotFound
            | CouponError::AlreadyRedeemed
            | CouponError::Expired
            | CouponError::AccessDenied
            | CouponError::NonPositiveCredit(_)
            | CouponError::Wallet(_) => {}
        }
    }
    let mut out: Vec<(CouponServiceError, ErrorKind)> = all
        .into_iter()
        .map(|(e, kind)| (CouponServiceError::Coupon(e), kind))
        .collect();
    let limited = svc_application::services::operator::RedeemLimited {
        retry_after_ms: 61_000,
        limit: 10,
        window_seconds: 900,
    };
    out.push((
        CouponServiceError::RateLimited(limited),
        ErrorKind::RateLimited { retry_after_ms: 61_000 },
    ));
    out.push((CouponServiceError::Storage(storage()), Internal));
    out
}

fn every_credit_error() -> Vec<(CreditServiceError, ErrorKind)> {
    let mut all: Vec<(CreditServiceError, ErrorKind)> = wallet_errors()
        .into_iter()
        .map(|(w, kind)| (CreditServiceError::Wallet(w), kind))
        .collect();
    all.push((CreditServiceError::InvalidLimit(InvalidPageLimit(0)), Argument("limit")));
    all.push((CreditServiceError::InvalidCursor, Argument("cursor")));
    all.push((CreditServiceError::Storage(storage()), Internal));
    for (e, _) in &all {
        match e {
            CreditServiceError::Wallet(_)
            | CreditServiceError::InvalidLimit(_)
            | CreditServiceError::InvalidCursor
            | CreditServiceError::Storage(_) => {}
        }
    }
    all
}

fn every_provider_key_error() -> Vec<(ProviderKeyServiceError, ErrorKind)> {
    let all = vec![
        (
            ProviderKeyServiceError::Key(ProviderKeyError::EmptyKey),
            Argument("plaintextKey"),
        ),
        (
            ProviderKeyServiceError::Key(ProviderKeyError::InvalidLabel),
            Argument("label"),
        ),
        (
            ProviderKeyServiceError::Key(ProviderKeyError::NotFound),
            Refusal("provider_key_not_found"),
        ),
        (
            ProviderKeyServiceError::Key(ProviderKeyError::UnknownMasterKey("old".into())),
            Internal,
        ),
        (ProviderKeyServiceError::Key(ProviderKeyError::Unsealable), Internal),
        (ProviderKeyServiceError::UnknownProvider, Argument("provider")),
        (ProviderKeyServiceError::Storage(storage()), Internal),
    ];
    for (e, _) in &all {
        match e {
            ProviderKeyServiceError::Key(
                ProviderKeyError::EmptyKey
                | ProviderKeyError::InvalidLabel
                | ProviderKeyError::NotFound
                | ProviderKeyError::UnknownMasterKey(_)
                | ProviderKeyError::Unsealable,
            )
            | ProviderKeyServiceError::UnknownProvider
            | ProviderKeyServiceError::Storage(_) => {}
        }
    }
    all
}

fn every_blueprint_error() -> Vec<(OpsBlueprintError, ErrorKind)> {
    let all = vec![
        OpsBlueprintError::InvalidContract("propsSpec: not an object".into()),
        OpsBlueprintError::ContractOverBudget(over()),
        OpsBlueprintError::ComponentOverBudget(over()),
        OpsBlueprintError::GeneratorNotFound("nope".into()),
        OpsBlueprintError::MissingCredentials("openai".into()),
        OpsBlueprintError::GenerationFailed("empty".into()),
        OpsBlueprintError::BlueprintNotFound("bp".into()),
        OpsBlueprintError::TextTooLong(OperatorTextTooLong {
            field: OperatorText::Persona,
            chars: 201,
        }),
        OpsBlueprintError::TextTooLong(OperatorTextTooLong {
            field: OperatorText::Aesthetic,
            chars: 201,
        }),
        OpsBlueprintError::TextTooLong(OperatorTextTooLong {
            field: OperatorText::Context,
            chars: 4_001,
        }),
        OpsBlueprintError::TextTooLong(OperatorTextTooLong {
            field: OperatorText::SeedPrompt,
            chars: 10_001,
        }),
        OpsBlueprintError::AppFull(AppBlueprintsFull { stored: 10_000 }),
        OpsBlueprintError::VarianceTooLarge(VarianceTooLarge { fields: 33 }),
        OpsBlueprintError::InvalidLimit(InvalidBlueprintPageLimit(0)),
        OpsBlueprintError::InvalidCursor,
        OpsBlueprintError::Overloaded { retry_after_seconds: 7 },
        OpsBlueprintError::Busy(CpuBusy { retry_after_seconds: 2 }),
        OpsBlueprintError::Storage(storage()),
        OpsBlueprintError::Storage(RepositoryError::Conflict("raced".into())),
        OpsBlueprintError::Storage(RepositoryError::Corrupt {
            column: "blueprints.contract",
            reason: "must be a JSON object".into(),
        }),
        OpsBlueprintError::Catalog(CatalogError::Pool("bad".into())),
    ];
    all.into_iter()
        .map(|e| {
            let expected = match &e {
                OpsBlueprintError::InvalidContract(_) | OpsBlueprintError::ContractOverBudget(_) => {
                    Argument("contract")
                }
                OpsBlueprintError::ComponentOverBudget(_) => Argument("componentCode"),
                OpsBlueprintError::GeneratorNotFound(_) => Refusal("generator_not_found"),
                OpsBlueprintError::MissingCredentials(_) => Refusal("missing_credentials"),
                OpsBlueprintError::GenerationFailed(_) => Refusal("generation_failed"),
                OpsBlueprintError::BlueprintNotFound(_) => Refusal("blueprint_not_found"),
                OpsBlueprintError::TextTooLong(e) => Argument(match e.field {
                    OperatorText::Persona => "persona",
                    OperatorText::Aesthetic => "aesthetic",
                    OperatorText::Context => "context",
                    OperatorText::SeedPrompt => "seedPrompt",
                }),
                OpsBlueprintError::AppFull(_) => Refusal("blueprint_limit_reached"),
                OpsBlueprintError::VarianceTooLarge(_) => Argument("variance"),
                OpsBlueprintError::InvalidLimit(_) => Argument("limit"),
                OpsBlueprintError::InvalidCursor => Argument("cursor"),
                OpsBlueprintError::Overloaded { retry_after_seconds } => ErrorKind::Overloaded {
                    retry_after_seconds: *retry_after_seconds,
                },
                OpsBlueprintError::Busy(busy) => ErrorKind::Busy {
                    retry_after_seconds: busy.retry_after_seconds,
                },
                OpsBlueprintError::Storage(_) | OpsBlueprintError::Catalog(_) => Internal,
            };
            (e, expected)
        })
        .collect()
}

/// The error's place in the table, and what a tool caller receives for it.
fn check(error: &dyn OpsError, code: &str, expected: ErrorKind) {
    assert_eq!(error.kind(), expected, "{error:?}");
    match (expected, error.failure()) {
        (Argument(field), ToolFailure::Rpc(f)) => {
            assert_eq!(f.code, INVALID_PARAMS, "{error:?}");
            assert_eq!(f.message, format!("Invalid params: {field}: {error}"));
        }
        (Refusal(name), ToolFailure::Result(result)) => {
            // The tool error name is the error's own code: one spelling, from the domain.
            assert_eq!(name, code, "{error:?}");
            assert_eq!(result["isError"], true);
            assert_eq!(
                result["structuredContent"],
                json!({ "error": { "code": code, "message": error.to_string() } })
            );
        }
        (ErrorKind::Overloaded { retry_after_seconds }, ToolFailure::Rpc(f)) => {
            assert_eq!(f.code, GENERATION_OVERLOADED);
            assert_eq!(f.status, poem::http::StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(f.headers, vec![("retry-after", retry_after_seconds.to_string())]);
        }
        (ErrorKind::RateLimited { retry_after_ms }, ToolFailure::Result(result)) => {
            // Document 2's rate-limited tool call: an error result, never HTTP 429.
            assert_eq!(code, "rate_limited", "{error:?}");
            assert_eq!(result["isError"], true);
            assert_eq!(
                result["structuredContent"],
                json!({ "error": { "code": "rate_limited", "message": error.to_string(), "retryAfterMs": retry_after_ms } })
            );
        }
        (ErrorKind::Busy { retry_after_seconds }, ToolFailure::Rpc(f)) => {
            assert_eq!(f.code, GENERATION_OVERLOADED, "the spec's overload code");
            assert_eq!(f.status, poem::http::StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(f.data.unwrap()["code"], "SERVER_BUSY");
            assert_eq!(f.headers, vec![("retry-after", retry_after_seconds.to_string())]);
        }
        (Internal, ToolFailure::Rpc(f)) => {
            assert_eq!(f.code, INTERNAL_ERROR, "{error:?}");
            assert_eq!(f.message, "Internal error", "the cause is never sent");
        }
        (kind, _) => panic!("{error:?} placed as {kind:?} answered something else"),
    }
}

#[test]
fn every_operator_error_lands_where_the_table_says() {
    for (e, kind) in every_app_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_org_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_connector_key_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_coupon_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_credit_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_provider_key_error() {
        check(&e, e.code(), kind);
    }
    for (e, kind) in every_blueprint_error() {
        check(&e, e.code(), kind);
    }
}

#[test]
fn paging_and_amount_codes_are_argument_errors() {
    // Once missing from the string list of argument codes, so answered as refusals.
    for (e, field) in [
        (CreditServiceError::InvalidCursor, "cursor"),
        (CreditServiceError::InvalidLimit(InvalidPageLimit(101)), "limit"),
        (
            CreditServiceError::Wallet(WalletError::NonPositiveAmount(-5)),
            "amountCents",
        ),
    ] {
        let ToolFailure::Rpc(f) = e.failure() else {
            panic!("{e:?} is not -32602")
        };
        assert_eq!(f.code, INVALID_PARAMS);
        assert!(
            f.message.starts_with(&format!("Invalid params: {field}: ")),
            "{}",
            f.message
        );
    }
}

#[test]
fn invite_acceptance_statuses() {
    use poem::http::StatusCode;
    for (e, _) in every_org_error() {
        let status = accept_invite_status(&e);
        let expected = match &e {
            OrgServiceError::Invite(InviteError::NotFound) => Some(StatusCode::NOT_FOUND),
            OrgServiceError::Invite(InviteError::Revoked | InviteError::Expired) => Some(StatusCode::GONE),
            OrgServiceError::Invite(InviteError::AlreadyAccepted) => Some(StatusCode::CONFLICT),
            _ => None,
        };
        assert_eq!(status, expected, "{e:?}");
    }
}

#[test]
fn every_agent_error_lands_where_the_table_says() {
    let all = vec![
        AgentError::SessionNotFound,
        AgentError::InvalidParams {
            field: "props.title".into(),
            rule: "must be a string".into(),
        },
        AgentError::OverBudget {
            field: "blueprintDraft.contract".into(),
            over: over(),
        },
        AgentError::ContractViolation {
            target: "props".into(),
            violations: Default::default(),
        },
        AgentError::NoSource("the render failed".into()),
        AgentError::AppAccessDenied,
        AgentError::Overloaded { retry_after_seconds: 3 },
        AgentError::Internal(anyhow::anyhow!("boom")),
        AgentError::Busy(CpuBusy { retry_after_seconds: 2 }),
    ];
    // Every variant is in the list above, exactly once.
    let mut seen: Vec<usize> = all.iter().map(agent_variant).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..9).collect::<Vec<_>>());
    for e in all {
        let described = format!("{e:?}");
        match (agent_variant(&e), map_agent_error(e)) {
            (0, ToolFailure::Rpc(f)) => assert_eq!(f.code, SESSION_NOT_FOUND),
            (1, ToolFailure::Rpc(f)) => {
                assert_eq!(f.message, "Invalid params: props.title: must be a string")
            }
            (2, ToolFailure::Rpc(f)) => {
                assert_eq!(f.code, INVALID_PARAMS);
                assert_eq!(f.data.unwrap()["code"], "over_budget");
            }
            (3, ToolFailure::Result(r)) => {
                assert_eq!(r["structuredContent"]["error"]["code"], "contract_violation")
            }
            (4, ToolFailure::Result(r)) => {
                assert_eq!(
                    r["structuredContent"],
                    json!({ "error": { "code": "no_source", "message": "the render failed" } })
                )
            }
            (5, ToolFailure::Result(r)) => {
                assert_eq!(r["structuredContent"]["error"]["code"], "app_access_denied")
            }
            (6, ToolFailure::Rpc(f)) => assert_eq!(f.code, GENERATION_OVERLOADED),
            (7, ToolFailure::Rpc(f)) => {
                assert_eq!((f.code, f.message.as_str()), (INTERNAL_ERROR, "Internal error"))
            }
            (8, ToolFailure::Rpc(f)) => {
                assert_eq!(
                    (f.code, f.status),
                    (GENERATION_OVERLOADED, poem::http::StatusCode::SERVICE_UNAVAILABLE)
                );
                assert_eq!(f.data.unwrap()["code"], "SERVER_BUSY");
                assert_eq!(f.headers, vec![("retry-after", "2".to_owned())]);
            }
            _ => panic!("{described} answered the wrong way"),
        }
    }
}

/// The variant's place in the walk above; no wildcard, so a new variant must be placed.
fn agent_variant(e: &AgentError) -> usize {
    match e {
        AgentError::SessionNotFound => 0,
        AgentError::InvalidParams { .. } => 1,
        AgentError::OverBudget { .. } => 2,
        AgentError::ContractViolation { .. } => 3,
        AgentError::NoSource(_) => 4,
        AgentError::AppAccessDenied => 5,
        AgentError::Overloaded { .. } => 6,
        AgentError::Internal(_) => 7,
        AgentError::Busy(_) => 8,
    }
}
