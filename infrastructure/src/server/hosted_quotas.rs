//! The per-account quotas of hosted mode (docs/hosted.md, "Quotas"), each applied only with
//! hosted mode on: what every account shares (the generation queue, the mail outbox, the key
//! and session tables) must not be exhausted by one. A self-hosted server has one operator.
//! The settings' ranges are checked at start-up with every other setting's (`settings::bounds`).

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use svc_application::services::agent::GenerationQueue;
use svc_application::services::console::ConsoleSessions;
use svc_application::services::operator::{ConnectorKeyService, InviteBudget, OrgService};

use crate::settings::Settings;

/// Generations one principal holds in this replica's queue, running plus waiting.
pub(super) fn generation_queue(settings: &Settings, queue: GenerationQueue) -> GenerationQueue {
    if settings.hosted.enabled {
        queue.with_principal_cap(settings.hosted.generations_per_principal)
    } else {
        queue
    }
}

/// Live connector keys per account: each sign-in mints one, so a mint past the cap revokes the
/// account's oldest.
pub(super) fn connector_keys(settings: &Settings, keys: ConnectorKeyService) -> ConnectorKeyService {
    if settings.hosted.enabled {
        keys.with_keys_per_account(settings.hosted.connector_keys_per_account)
    } else {
        keys
    }
}

/// Invite mails per account and hour (counted in the shared windows), and orgs per account.
pub(super) fn orgs(settings: &Settings, db: &DatabaseConnection, orgs: OrgService) -> OrgService {
    if !settings.hosted.enabled {
        return orgs;
    }
    orgs.with_invite_budget(InviteBudget::new(
        Arc::new(svc_sql::SqlSharedWindows::new(db.clone())),
        settings.hosted.invite_mails_per_hour,
    ))
    .with_orgs_per_account(settings.hosted.orgs_per_account)
}

/// Open console sessions per account: a sign-in past the cap ends the account's oldest.
pub(super) fn console_sessions(settings: &Settings, console: ConsoleSessions) -> ConsoleSessions {
    if settings.hosted.enabled {
        console.with_sessions_per_account(settings.hosted.console_sessions_per_account)
    } else {
        console
    }
}
