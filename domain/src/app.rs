//! An app: the tenancy unit of sessions and blueprints, and the rules of what its owner may set.

use chrono::{DateTime, Utc};

use crate::name::{NameError, parse_name};

/// Name of an app created without one.
pub const DEFAULT_APP_NAME: &str = "My app";
/// Longest display name, in characters.
pub const APP_NAME_MAX_CHARS: usize = 120;
/// Longest system prompt, in characters.
pub const SYSTEM_PROMPT_MAX_CHARS: usize = 10_000;
/// Apps one owner (a hosted account, or the self-hosted operator) may hold: `svc_ops_list_apps`
/// answers all of them at once, each with up to 10,000 characters of system prompt, and every
/// app is a tenancy of sessions and blueprints. The default app created on a first request is
/// never refused (an owner without apps always gets one).
pub const OWNER_APPS_MAX: u64 = 100;

/// An owner holding [`OWNER_APPS_MAX`] apps (or more) asked for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("you hold {stored} apps, the most one may hold is {OWNER_APPS_MAX}: delete one first")]
pub struct OwnerAppsFull {
    pub stored: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub app_id: String,
    pub owner_id: String,
    pub display_name: String,
    /// Appended to the agent instructions by `/mcp`'s `initialize`; never empty when present.
    pub system_prompt: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("display name {0}")]
    InvalidName(NameError),
    #[error("system prompt must be at most {SYSTEM_PROMPT_MAX_CHARS} characters, got {chars}")]
    SystemPromptTooLong { chars: usize },
}

/// A display name: 1 to [`APP_NAME_MAX_CHARS`] characters once surrounding whitespace is
/// trimmed, no control characters.
pub fn app_name(raw: &str) -> Result<String, AppError> {
    parse_name(raw, APP_NAME_MAX_CHARS).map_err(AppError::InvalidName)
}

/// A system prompt to store: `None` for the empty string, which clears it.
pub fn system_prompt(raw: &str) -> Result<Option<String>, AppError> {
    let chars = raw.chars().count();
    if chars > SYSTEM_PROMPT_MAX_CHARS {
        return Err(AppError::SystemPromptTooLong { chars });
    }
    Ok((!raw.is_empty()).then(|| raw.to_owned()))
}

impl App {
    /// A new app; without a name it is called [`DEFAULT_APP_NAME`].
    pub fn new(
        app_id: String,
        owner_id: String,
        display_name: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Self, AppError> {
        Ok(Self {
            app_id,
            owner_id,
            display_name: display_name.map_or_else(|| Ok(DEFAULT_APP_NAME.to_owned()), app_name)?,
            system_prompt: None,
            created_at: now,
            updated_at: now,
        })
    }

    pub fn rename(&mut self, raw: &str, now: DateTime<Utc>) -> Result<(), AppError> {
        self.display_name = app_name(raw)?;
        self.updated_at = now;
        Ok(())
    }

    /// Sets the system prompt; the empty string clears it.
    pub fn set_system_prompt(&mut self, raw: &str, now: DateTime<Utc>) -> Result<(), AppError> {
        self.system_prompt = system_prompt(raw)?;
        self.updated_at = now;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, hour, 0, 0).unwrap()
    }

    #[test]
    fn a_new_app_without_a_name_takes_the_default_and_a_bad_name_is_refused() {
        let app = App::new("a".into(), "o".into(), None, at(1)).unwrap();
        assert_eq!(app.display_name, DEFAULT_APP_NAME);
        assert_eq!((app.created_at, app.updated_at), (at(1), at(1)));
        let named = App::new("a".into(), "o".into(), Some("  Shop "), at(1)).unwrap();
        assert_eq!(named.display_name, "Shop");
        assert!(matches!(
            App::new("a".into(), "o".into(), Some(" "), at(1)),
            Err(AppError::InvalidName(NameError::Length { chars: 0, .. }))
        ));
    }

    #[test]
    fn renaming_and_prompting_move_updated_at_and_keep_the_limits() {
        let mut app = App::new("a".into(), "o".into(), None, at(1)).unwrap();
        app.rename("Orders", at(2)).unwrap();
        assert_eq!((app.display_name.as_str(), app.updated_at), ("Orders", at(2)));
        assert_eq!(
            app.rename(&"x".repeat(APP_NAME_MAX_CHARS + 1), at(3)),
            Err(AppError::InvalidName(NameError::Length {
                chars: APP_NAME_MAX_CHARS + 1,
                max: APP_NAME_MAX_CHARS
            }))
        );
        assert_eq!(app.updated_at, at(2), "a refused change changes nothing");
        app.set_system_prompt("Be brief.", at(4)).unwrap();
        assert_eq!(app.system_prompt.as_deref(), Some("Be brief."));
        app.set_system_prompt("", at(5)).unwrap();
        assert_eq!(app.system_prompt, None, "the empty prompt clears it");
        let too_long = "p".repeat(SYSTEM_PROMPT_MAX_CHARS + 1);
        assert_eq!(
            app.set_system_prompt(&too_long, at(6)),
            Err(AppError::SystemPromptTooLong {
                chars: SYSTEM_PROMPT_MAX_CHARS + 1
            })
        );
    }

    #[test]
    fn the_full_owner_message_names_the_cap() {
        assert_eq!(
            OwnerAppsFull { stored: OWNER_APPS_MAX }.to_string(),
            "you hold 100 apps, the most one may hold is 100: delete one first"
        );
    }
}
