//! Apps as their owner manages them on `/ops`: list, create, rename, delete, pick the default,
//! set the system prompt that `/mcp`'s `initialize` appends to the agent instructions.
//!
//! Every method takes the owner's identity and touches only that owner's apps: another owner's
//! app answers exactly like a missing one.

use std::sync::Arc;

pub use svc_domain::app::{APP_NAME_MAX_CHARS, DEFAULT_APP_NAME, OWNER_APPS_MAX, SYSTEM_PROMPT_MAX_CHARS};
use svc_domain::app::{App, AppError, OwnerAppsFull};
use svc_domain::name::NameError;

use super::auth::APP_ID_LEN;
use super::operator::INTERNAL_ERROR_CODE;
use crate::ports::agent::{AppRecord, AppRepository};
use crate::ports::{BoundedInsert, Clock, Ids, RepositoryError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateApp {
    pub owner_id: String,
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameApp {
    pub owner_id: String,
    pub app_id: String,
    pub display_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAppSystemPrompt {
    pub owner_id: String,
    pub app_id: String,
    /// Empty clears the prompt.
    pub system_prompt: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AppServiceError {
    #[error("display name {0}")]
    InvalidName(NameError),
    #[error("system prompt must be at most {SYSTEM_PROMPT_MAX_CHARS} characters, got {chars}")]
    SystemPromptTooLong { chars: usize },
    /// Missing, or another owner's: the same answer, so existence never leaks.
    #[error("no such app")]
    NotFound,
    /// The owner holds as many apps as one may.
    #[error(transparent)]
    OwnerFull(#[from] OwnerAppsFull),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl AppServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidName(_) => "invalid_app_name",
            Self::SystemPromptTooLong { .. } => "system_prompt_too_long",
            Self::NotFound => "app_not_found",
            Self::OwnerFull(_) => "app_limit_reached",
            Self::Storage(_) => INTERNAL_ERROR_CODE,
        }
    }
}

impl From<AppError> for AppServiceError {
    fn from(e: AppError) -> Self {
        match e {
            AppError::InvalidName(e) => Self::InvalidName(e),
            AppError::SystemPromptTooLong { chars } => Self::SystemPromptTooLong { chars },
        }
    }
}

/// A display name (the rule is the domain's: `svc_domain::app::app_name`).
pub fn app_name(raw: &str) -> Result<String, AppServiceError> {
    Ok(svc_domain::app::app_name(raw)?)
}

/// A system prompt to store: `None` for the empty string, which clears it.
pub fn system_prompt(raw: &str) -> Result<Option<String>, AppServiceError> {
    Ok(svc_domain::app::system_prompt(raw)?)
}

#[derive(Clone)]
pub struct AppService {
    apps: Arc<dyn AppRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl AppService {
    pub fn new(apps: Arc<dyn AppRepository>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        Self { apps, clock, ids }
    }

    /// The owner's apps, oldest first.
    pub async fn list(&self, owner_id: &str) -> Result<Vec<AppRecord>, AppServiceError> {
        Ok(self.apps.list_by_owner(owner_id).await?)
    }

    /// The owner's app, or `NotFound` (also for another owner's).
    pub async fn owned(&self, owner_id: &str, app_id: &str) -> Result<AppRecord, AppServiceError> {
        match self.apps.get(app_id).await? {
            Some(app) if app.owner_id == owner_id => Ok(app),
            _ => Err(AppServiceError::NotFound),
        }
    }

    /// A new app with a server-minted base62 id, unless the owner holds [`OWNER_APPS_MAX`]
    /// apps (counted with the insert, so concurrent creations never pass it).
    pub async fn create(&self, command: CreateApp) -> Result<AppRecord, AppServiceError> {
        let app = App::new(
            self.ids.base62(APP_ID_LEN),
            command.owner_id,
            command.display_name.as_deref(),
            self.clock.now(),
        )?;
        match self.apps.insert_bounded(&app, OWNER_APPS_MAX).await? {
            BoundedInsert::Inserted => Ok(app),
            BoundedInsert::Full { stored } => Err(OwnerAppsFull { stored }.into()),
        }
    }

    pub async fn rename(&self, command: RenameApp) -> Result<AppRecord, AppServiceError> {
        // A bad name is refused before the lookup, whoever owns the app.
        app_name(&command.display_name)?;
        let mut app = self.owned(&command.owner_id, &command.app_id).await?;
        app.rename(&command.display_name, self.clock.now())?;
        self.save(app).await
    }

    pub async fn set_system_prompt(&self, command: SetAppSystemPrompt) -> Result<AppRecord, AppServiceError> {
        system_prompt(&command.system_prompt)?;
        let mut app = self.owned(&command.owner_id, &command.app_id).await?;
        app.set_system_prompt(&command.system_prompt, self.clock.now())?;
        self.save(app).await
    }

    /// Deletes the owner's app; a missing or foreign id is a no-op, so deleting is idempotent.
    pub async fn delete(&self, owner_id: &str, app_id: &str) -> Result<(), AppServiceError> {
        Ok(self.apps.delete(owner_id, app_id).await?)
    }

    /// Makes one of the owner's apps their default; returns its id.
    pub async fn set_default(&self, owner_id: &str, app_id: &str) -> Result<String, AppServiceError> {
        if self.apps.set_default(owner_id, app_id).await? {
            Ok(app_id.to_owned())
        } else {
            Err(AppServiceError::NotFound)
        }
    }

    async fn save(&self, app: App) -> Result<AppRecord, AppServiceError> {
        // A delete may land between the read and this write.
        if self.apps.update(&app).await? {
            Ok(app)
        } else {
            Err(AppServiceError::NotFound)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_counted_in_characters() {
        assert_eq!(app_name("  Shop  ").unwrap(), "Shop");
        assert_eq!(app_name(&"é".repeat(120)).unwrap().chars().count(), 120);
        let rows = [("", 0), ("   ", 0), (&*"x".repeat(121), 121)];
        for (raw, chars) in rows {
            let error = app_name(raw).unwrap_err();
            assert!(
                matches!(error, AppServiceError::InvalidName(NameError::Length { chars: c, .. }) if c == chars),
                "{raw:?}"
            );
            assert_eq!(error.code(), "invalid_app_name");
        }
    }

    #[test]
    fn an_empty_prompt_clears_and_a_long_one_is_refused() {
        assert_eq!(system_prompt("").unwrap(), None);
        assert_eq!(system_prompt("Be brief.").unwrap().as_deref(), Some("Be brief."));
        assert!(system_prompt(&"é".repeat(10_000)).unwrap().is_some());
        assert_eq!(
            system_prompt(&"x".repeat(10_001)).unwrap_err().code(),
            "system_prompt_too_long"
        );
    }
}

#[cfg(all(test, feature = "testing"))]
mod capacity_tests {
    use super::*;
    use crate::testing::AgentFakes;

    fn create(owner: &str) -> CreateApp {
        CreateApp {
            owner_id: owner.to_owned(),
            display_name: None,
        }
    }

    #[tokio::test]
    async fn an_owner_at_the_cap_creates_no_more_apps_until_one_is_deleted() {
        let fakes = AgentFakes::default();
        let apps = AppService::new(fakes.store.clone(), fakes.clock.clone(), fakes.ids.clone());
        let mut created = Vec::new();
        for _ in 0..OWNER_APPS_MAX {
            created.push(apps.create(create("owner")).await.unwrap().app_id);
        }
        let refused = apps.create(create("owner")).await.unwrap_err();
        assert_eq!(refused.code(), "app_limit_reached");
        assert_eq!(
            refused.to_string(),
            "you hold 100 apps, the most one may hold is 100: delete one first"
        );
        assert_eq!(apps.list("owner").await.unwrap().len(), 100, "nothing was stored");
        apps.create(create("another owner")).await.unwrap();
        apps.delete("owner", &created[0]).await.unwrap();
        apps.create(create("owner")).await.unwrap();
    }
}
