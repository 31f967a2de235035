//! Operator-plane services: orgs and invites, connector keys, coupons, credits, blueprints. Each orchestrates
//! the pure domain through the ports of `crate::ports::operator`, and answers errors whose
//! `code()` is the snake_case code of the operator route.

mod blueprints;
mod connector_keys;
mod coupons;
mod credits;
mod invite_budget;
mod key_cache;
mod orgs;
mod redemption_budget;

pub use blueprints::{
    BlueprintOptions, BlueprintPage, ListBlueprints, OpsBlueprintError, OpsBlueprintPorts, OpsBlueprintService,
    StoredBlueprint, UpdateBlueprint, source_model,
};
pub use connector_keys::{
    ConnectorKeyService, ConnectorKeyServiceError, IssueConnectorKey, IssuedConnectorKey, RevokeConnectorKey,
    RevokedConnectorKey,
};
pub use coupons::{CouponService, CouponServiceError, IssueCoupon, RedeemCoupon};
pub use credits::{
    CreditService, CreditServiceError, CreditTransactionsPage, GrantCredit, GrantKind, ListCreditTransactions,
};
pub use invite_budget::{INVITE_MAIL_QUOTA, InviteBudget, InvitesLimited};
pub use orgs::{
    AcceptInvite, CreateOrg, INVITE_PATH, InviteIssued, InviteLinks, InviteRevoked, InviteToOrg, OrgService,
    OrgServiceError, OwnedOrgsFull, RevokeInvite,
};
pub use redemption_budget::{REDEEM_QUOTA, RedeemLimited};

/// Code of every storage failure: its cause is logged, never shown.
pub const INTERNAL_ERROR_CODE: &str = "internal_error";
