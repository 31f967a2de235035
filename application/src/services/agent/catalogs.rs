use svc_domain::contract::Contract;
use svc_domain::gadgets::{self, GadgetBundle, GadgetDescriptor};
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

    /// The declared bundles a session's component may need: those of the packages its contract
    /// lets it import (the same rule the compiler applies to its imports).
    pub fn gadget_bundles(&self, contract: &Contract) -> Vec<GadgetBundle> {
        gadgets::bundles_for(&self.declared_gadgets, &contract.importable_packages())
    }

    /// `(resourceDomains, connectDomains)` additions for a mount: the declared packages a session's
    /// contract can import, or every declared package for the shell (`contract` `None`), which
    /// mounts any render.
    pub fn gadget_csp_origins(&self, contract: Option<&Contract>) -> (Vec<String>, Vec<String>) {
        match contract {
            None => gadgets::csp_origins(&self.declared_gadgets),
            Some(contract) => {
                let importable = contract.importable_packages();
                gadgets::csp_origins(self.declared_gadgets.iter().filter(|d| importable.contains(&d.package)))
            }
        }
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
