//! A blueprint's compiled component, or the HTML document of an `mcpApps` session, as the
//! blueprint store answered it: the record shared (with the store's read cache), not its code
//! copied, for each render and card read that hands it on.

use std::sync::Arc;

use crate::ports::blueprints::BlueprintRecord;

#[derive(Debug, Clone)]
pub struct ComponentCode(Arc<BlueprintRecord>);

impl From<Arc<BlueprintRecord>> for ComponentCode {
    fn from(record: Arc<BlueprintRecord>) -> Self {
        Self(record)
    }
}

impl std::ops::Deref for ComponentCode {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0.code
    }
}

/// Two are the same component when their code is.
impl PartialEq for ComponentCode {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}
