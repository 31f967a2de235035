//! Settings whose form can be checked without using them: a URL that does not parse, a sender
//! that is not a mailbox, a model route not in the registry. Checked whether or not the feature
//! they belong to is on, as [`super::bounds`] checks ranges: a typo is refused when it is
//! written, not on the day the feature is turned on. Whether a server answers (the database,
//! the NATS broker, the SMTP relay) is known only by connecting, when the feature is used.

use super::Settings;

/// The first setting of `settings` whose form cannot work, as one line naming it.
pub fn check(settings: &Settings) -> Result<(), String> {
    // As the OAuth surface reads it: any non-empty value is the URL.
    if !settings.oauth.consent_url.is_empty() {
        svc_http::parse_consent_url(&settings.oauth.consent_url)?;
    }
    // Empty is unset, as for the consent URL: a deployment without mail or NATS may blank them.
    if !settings.mail.from.trim().is_empty() {
        svc_mail::sender(&settings.mail.from).map_err(|e| e.to_string())?;
    }
    if !settings.nats.url.trim().is_empty() {
        svc_events_nats::check_url(&settings.nats.url)?;
    }
    crate::generation::registry_with_default_model(&settings.generation)?;
    crate::hosted::check(settings)
}
