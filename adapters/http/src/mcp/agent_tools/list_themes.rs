//! `svc_list_themes`: the theme presets a render may use.

use svc_protocol::AppScopedArgs;
use svc_protocol::agent_results::{ThemeRow, ThemesResult};

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListThemes;

impl ToolDefinition for ListThemes {
    const NAME: &'static str = "svc_list_themes";
    const DESCRIPTION: &'static str = "List the theme presets a render may use as themeId.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = AppScopedArgs;
    type Output = ThemesResult;
}

impl AgentTool for ListThemes {
    async fn call(ctx: &AgentCtx<'_>, a: AppScopedArgs) -> Result<Answer<ThemesResult>, ToolFailure> {
        let themes = ctx
            .state
            .agent
            .list_themes(ctx.caller, a.app_id.as_deref())
            .map_err(map_agent_error)?;
        let themes = themes
            .into_iter()
            .map(|t| ThemeRow {
                id: t.id,
                name: t.name,
                description: t.description,
                modes: t.modes.iter().map(|m| m.as_str().to_owned()).collect(),
            })
            .collect();
        Ok(Answer::ok(ThemesResult { themes }, "theme catalog attached"))
    }
}
