use svc_domain::gadgets::{self, GadgetDescriptor};
use svc_domain::themes::ThemeEntry;

use super::{AgentError, AgentService, Caller};

impl AgentService {
    /// The standard package with the app's declared gadgets layered on top.
    pub fn list_gadgets(&self, caller: &Caller, app_id: Option<&str>) -> Result<Vec<GadgetDescriptor>, AgentError> {
        ensure_own_app(caller, app_id)?;
        Ok(gadgets::layer(
            gadgets::standard_package(),
            self.declared_gadgets.clone(),
        ))
    }

    /// The theme catalog, filtered by the app's allowlist.
    pub fn list_themes(&self, caller: &Caller, app_id: Option<&str>) -> Result<Vec<ThemeEntry>, AgentError> {
        ensure_own_app(caller, app_id)?;
        Ok(self.theme_catalog())
    }
}

fn ensure_own_app(caller: &Caller, app_id: Option<&str>) -> Result<(), AgentError> {
    match app_id {
        Some(id) if id != caller.app_id => Err(AgentError::AppAccessDenied),
        _ => Ok(()),
    }
}
