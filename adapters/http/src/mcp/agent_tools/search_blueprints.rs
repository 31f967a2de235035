//! `svc_search_blueprints`: manifest UIs and cached blueprints by name, description and meaning.

use svc_protocol::SearchBlueprintsArgs;
use svc_protocol::agent_results::{SearchBlueprintsResult, SearchHit};

use super::featured_blueprints::blueprint_entry;
use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct SearchBlueprints;

impl ToolDefinition for SearchBlueprints {
    const NAME: &'static str = "svc_search_blueprints";
    const DESCRIPTION: &'static str =
        "Search manifest UIs and cached blueprints by name, description and meaning; best first, score 0 to 1.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = SearchBlueprintsArgs;
    type Output = SearchBlueprintsResult;
}

impl AgentTool for SearchBlueprints {
    async fn call(ctx: &AgentCtx<'_>, a: SearchBlueprintsArgs) -> Result<Answer<SearchBlueprintsResult>, ToolFailure> {
        let page = ctx
            .state
            .agent
            .search_blueprints(ctx.caller, &a.query, a.limit)
            .await
            .map_err(map_agent_error)?;
        let results: Vec<SearchHit> = page
            .rows
            .iter()
            .map(|r| SearchHit {
                entry: blueprint_entry(&r.entry),
                relevance: "match".to_owned(),
                score: r.score,
            })
            .collect();
        let text = format!(
            "{} of {} blueprint(s) matching \"{}\"",
            results.len(),
            page.total,
            a.query
        );
        let body = SearchBlueprintsResult {
            results,
            total: page.total,
            query: a.query,
        };
        Ok(Answer::ok(body, text))
    }
}
