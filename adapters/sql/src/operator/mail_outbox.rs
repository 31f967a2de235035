use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use svc_application::ports::RepositoryError;
use svc_application::ports::accounts::{AccountLink, AccountMailer};
use svc_application::ports::operator::{Mailer, MailerError};
use svc_domain::invite::Invite;

use super::entities::mail_outbox;
use crate::errors::repository_error;

/// A [`Mailer`] that queues each email as a `mail_outbox` row in the service's own database, and
/// logs it; a delivery worker sends the rows and stamps `sent_at`. Queueing lives in the same store as
/// the invite, so it fails only when the store does.
pub struct SeaOrmMailOutbox {
    db: DatabaseConnection,
}

impl SeaOrmMailOutbox {
    pub const INVITE_KIND: &'static str = "org_invite";

    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    pub(super) fn db(&self) -> &DatabaseConnection {
        &self.db
    }
}

#[async_trait::async_trait]
impl AccountMailer for SeaOrmMailOutbox {
    async fn queue_link(&self, link: &AccountLink) -> Result<(), RepositoryError> {
        let row = mail_outbox::ActiveModel {
            id: Set(link.id.clone()),
            kind: Set(link.purpose.as_str().to_owned()),
            recipient: Set(link.recipient.clone()),
            payload: Set(serde_json::json!({ "url": link.url })),
            created_at: Set(link.created_at),
            sent_at: Set(None),
            ..Default::default()
        };
        mail_outbox::Entity::insert(row)
            .on_conflict_do_nothing()
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl Mailer for SeaOrmMailOutbox {
    async fn send_invite(&self, invite: &Invite, accept_url: Option<&str>) -> Result<(), MailerError> {
        let mut payload = serde_json::to_value(invite).map_err(|error| MailerError(error.into()))?;
        if let (Some(url), Some(fields)) = (accept_url, payload.as_object_mut()) {
            fields.insert("url".into(), url.into());
        }
        let row = mail_outbox::ActiveModel {
            // One row per invite, so a retried send queues the email once.
            id: Set(format!("{}:{}", Self::INVITE_KIND, invite.invite_id)),
            kind: Set(Self::INVITE_KIND.to_owned()),
            recipient: Set(invite.email.as_str().to_owned()),
            payload: Set(payload),
            created_at: Set(invite.created_at),
            sent_at: Set(None),
            ..Default::default()
        };
        mail_outbox::Entity::insert(row)
            .on_conflict_do_nothing()
            .exec_without_returning(&self.db)
            .await
            .map_err(|error| MailerError(error.into()))?;
        tracing::info!(
            kind = Self::INVITE_KIND,
            invite_id = %invite.invite_id,
            org_id = %invite.org_id,
            role = invite.role.as_str(),
            expires_at = %invite.expires_at,
            "invite email queued in the mail outbox"
        );
        Ok(())
    }

    async fn invite_queued(&self, invite_id: &str) -> Result<bool, MailerError> {
        let row = mail_outbox::Entity::find_by_id(format!("{}:{invite_id}", Self::INVITE_KIND))
            .one(&self.db)
            .await
            .map_err(|error| MailerError(error.into()))?;
        Ok(row.is_some())
    }
}
