//! Which mount each blueprint's sessions are (`render` or `mcpApps`), remembered: a session read
//! needs only that, and fetching and parsing the whole blueprint row for it was the largest part
//! of `svc_get_session`. The variant follows from the blueprint's generator, which is fixed when
//! the blueprint is stored; an operator replacing a blueprint under the same id is seen within
//! [`REMEMBERED_FOR`].

use std::sync::Arc;
use std::time::Duration;

use svc_domain::session::SessionVariant;

use super::AgentError;
use crate::ports::agent::BlueprintRepository;

const REMEMBERED_FOR: Duration = Duration::from_secs(60);
const MAX_BLUEPRINTS: u64 = 100_000;

/// Session variants by blueprint id; clones share the memory.
#[derive(Clone)]
pub struct SessionVariants {
    by_blueprint: moka::sync::Cache<String, SessionVariant>,
}

impl Default for SessionVariants {
    fn default() -> Self {
        Self {
            by_blueprint: moka::sync::Cache::builder()
                .max_capacity(MAX_BLUEPRINTS)
                .time_to_live(REMEMBERED_FOR)
                .build(),
        }
    }
}

impl SessionVariants {
    /// The variant of a session rendered from `blueprint_id` (`None`: a failed render, which
    /// has no blueprint, is `render`; so is a blueprint no longer stored).
    pub async fn of(
        &self,
        blueprints: &Arc<dyn BlueprintRepository>,
        blueprint_id: Option<&str>,
    ) -> Result<SessionVariant, AgentError> {
        let Some(id) = blueprint_id else {
            return Ok(SessionVariant::Render);
        };
        if let Some(known) = self.by_blueprint.get(id) {
            return Ok(known);
        }
        let variant = blueprints
            .get(id)
            .await?
            .map_or(SessionVariant::Render, |bp| bp.session_variant());
        self.by_blueprint.insert(id.to_owned(), variant);
        Ok(variant)
    }
}
