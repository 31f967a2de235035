//! Result bodies several operator tools share, from the application's records.

use svc_application::ports::agent::AppRecord;
use svc_application::services::operator::{BlueprintOptions, source_model};
use svc_domain::blueprint::SourceKind;
use svc_domain::connector_key::ConnectorKeySummary;
use svc_protocol::ops_results::{AppBody, BlueprintSourceBody, ConnectorKeyBody};
use svc_protocol::ops_tools::BlueprintOptionsArgs;

use crate::tools::iso;

/// `AppRecord`: `systemPrompt` is omitted when there is none.
pub fn app(app: &AppRecord) -> AppBody {
    AppBody {
        app_id: app.app_id.clone(),
        display_name: app.display_name.clone(),
        created_at: iso(app.created_at),
        updated_at: iso(app.updated_at),
        system_prompt: app.system_prompt.clone(),
    }
}

pub fn connector_key(key: &ConnectorKeySummary) -> ConnectorKeyBody {
    ConnectorKeyBody {
        id: key.id.clone(),
        api_key_prefix: key.api_key_prefix.clone(),
        name: key.name.as_ref().map(|n| n.as_str().to_owned()),
        app_id: key.app_id.clone(),
        status: key.status.as_str().to_owned(),
        created_at: iso(key.created_at),
        last_used_at: key.last_used_at.map(iso),
        expires_at: key.expires_at.map(iso),
    }
}

/// `{ kind: 'llm', generator, model }` or `{ kind: 'user' }`.
pub fn blueprint_source(kind: SourceKind, generator: &str, model: Option<&str>) -> BlueprintSourceBody {
    match kind {
        SourceKind::User => BlueprintSourceBody::User,
        SourceKind::Llm => BlueprintSourceBody::Llm {
            generator: generator.to_owned(),
            model: source_model(generator, model),
        },
    }
}

/// The optional fields generate and register share.
pub fn blueprint_options(a: BlueprintOptionsArgs) -> BlueprintOptions {
    BlueprintOptions {
        generator: a.generator,
        persona: a.persona,
        aesthetic: a.aesthetic,
        context: a.context,
        seed_prompt: a.seed_prompt,
        set_as_operator_default: a.set_as_operator_default.unwrap_or(false),
        for_caller: None,
    }
}

/// Document 3's ProviderKeySummary.
pub fn provider_key(
    s: svc_application::services::hosted::ProviderKeySummary,
) -> svc_protocol::ops_results::ProviderKeySummaryBody {
    svc_protocol::ops_results::ProviderKeySummaryBody {
        provider: s.provider.to_owned(),
        label: s.label,
        last_four: s.last_four,
        created_at: crate::tools::iso(s.created_at),
        last_used_at: s.last_used_at.map(crate::tools::iso),
    }
}
