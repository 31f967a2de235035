//! `/ops`: the operator tools of Document 3 over the same JSON-RPC shapes and the same bearer
//! check as `/mcp`, disjoint from it. Each domain is wired by one option of [`OpsDomains`]; an
//! unwired domain's tools are absent, and with nothing wired the route still answers
//! `initialize` and `ping` but `tools/list` and `tools/call` are -32601 Method not found.
//!
//! Every tool acts for one identity: the caller's user id, else its app id. Every read and write
//! is scoped to it; another identity's rows answer exactly like missing ones.

mod invites;
pub(crate) mod tools;
mod wire;

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{Body, Request, Response, handler};
use serde_json::{Value, json};
use svc_application::services::agent::Caller;
use svc_application::services::apps::{AppService, AppServiceError};
use svc_application::services::auth::{AuthError, Authenticated};
use svc_application::services::hosted::ProviderKeyService;
use svc_application::services::operator::{
    ConnectorKeyService, CouponService, CreditService, OpsBlueprintService, OrgService,
};
use svc_protocol::{INTERNAL_ERROR, METHOD_NOT_FOUND};

use crate::content_coding::ContentCoding;
use crate::errors::ToolFailure;
use crate::errors::auth_failure;
use crate::mcp::jsonrpc::{Reply, RpcFailure};
use crate::mcp::{ToolCall, answer, bearer, cancel_scope, protocol_version, tool_call};
use crate::route_states::OpsRoutes;
pub use invites::accept_invite;
use tools::{OpsCtx, OpsDomain};

/// The wired domains of `/ops` (`opsApps`, `opsOrgs`, `opsConnectorKeys`, `opsCoupon`).
/// `Default` wires nothing.
#[derive(Default)]
pub struct OpsDomains {
    pub apps: Option<AppService>,
    pub orgs: Option<OrgService>,
    pub connector_keys: Option<OpsConnectorKeys>,
    pub coupons: Option<CouponService>,
    /// The blueprint dependency bundle: the cache, the embedder, the generators and the compiler.
    pub blueprints: Option<OpsBlueprintService>,
    /// Hosted deployments only: the caller's provider keys.
    pub provider_keys: Option<ProviderKeyService>,
    /// Hosted deployments only: the caller's credit wallet and ledger.
    pub credits: Option<Arc<CreditService>>,
}

/// The connector-keys domain: the keys, and the apps a key may be locked to.
pub struct OpsConnectorKeys {
    pub keys: ConnectorKeyService,
    pub apps: AppService,
}

impl OpsDomains {
    fn wired(&self, domain: OpsDomain) -> bool {
        match domain {
            OpsDomain::Apps => self.apps.is_some(),
            OpsDomain::Orgs => self.orgs.is_some(),
            OpsDomain::ConnectorKeys => self.connector_keys.is_some(),
            OpsDomain::Coupons => self.coupons.is_some(),
            OpsDomain::Blueprints => self.blueprints.is_some(),
            OpsDomain::ProviderKeys => self.provider_keys.is_some(),
            OpsDomain::Credits => self.credits.is_some(),
        }
    }

    fn any_wired(&self) -> bool {
        OpsDomain::ALL.into_iter().any(|d| self.wired(d))
    }
}

/// Who an operator tool acts for.
pub struct OpsCaller {
    /// The user id, else the app id: the owner of every row the tool reads or writes.
    pub identity: String,
    pub caller: Caller,
    /// The bearer is locked to `caller.app_id`.
    pub app_locked: bool,
}

impl OpsCaller {
    /// The one app a locked key may reach; `None` for a universal key (every app of its owner).
    pub fn locked_app(&self) -> Option<&str> {
        self.app_locked.then_some(self.caller.app_id.as_str())
    }

    /// A locked key reaches only its own app: another app of the same owner answers exactly like
    /// a missing one (`app_not_found`).
    pub fn ensure_reaches_app(&self, app_id: &str) -> Result<(), AppServiceError> {
        match self.locked_app() {
            Some(own) if own != app_id => Err(AppServiceError::NotFound),
            _ => Ok(()),
        }
    }
}

impl OpsCaller {
    /// Neither a user id nor an app id is a server-side failure, never an empty answer.
    fn new(authenticated: &Authenticated) -> Result<Self, RpcFailure> {
        let caller = &authenticated.caller;
        let identity = [&caller.principal_id, &caller.app_id]
            .into_iter()
            .find(|id| !id.is_empty())
            .ok_or_else(|| {
                tracing::error!("an authenticated caller has neither a user id nor an app id");
                RpcFailure::new(INTERNAL_ERROR, "Internal error").with_status(StatusCode::INTERNAL_SERVER_ERROR)
            })?;
        Ok(Self {
            identity: identity.clone(),
            caller: caller.clone(),
            app_locked: authenticated.app_locked,
        })
    }
}

#[handler]
pub async fn post_ops(req: &Request, body: Body, Data(state): Data<&Arc<OpsRoutes>>) -> Response {
    // The caller first, as on `/mcp`: an unauthenticated request is challenged and a key bound
    // to a deprovisioned app refused as such, whatever protocol version it names.
    let authenticated = match state.gate.auth.authenticate_scoped(bearer(req).as_deref()).await {
        Ok(a) => a,
        Err(AuthError::AppDeprovisioned(app_id)) => {
            return crate::mcp::app_endpoint::deprovisioned_response(app_id, body).await;
        }
        Err(error) => return state.gate.challenges.with_ops_challenge(auth_failure(error)),
    };
    if let Some(refusal) = crate::mcp::unsupported_protocol_version(req) {
        return refusal;
    }
    answer_as(state, req, body, authenticated).await
}

/// Answers one `/ops` JSON-RPC message for an authenticated caller: the bearer of `/ops`, or the
/// session of the console (`/console/ops`), through the one tool dispatch.
pub(crate) async fn answer_as(state: &OpsRoutes, req: &Request, body: Body, authenticated: Authenticated) -> Response {
    let scope = cancel_scope(&state.gate, req, "ops", &authenticated.caller);
    answer(
        &state.gate,
        body,
        scope,
        ContentCoding::accepted_by(req),
        |method, params| async move { dispatch(state, &authenticated, &method, params).await },
    )
    .await
}

pub(crate) fn method_not_found(method: &str) -> RpcFailure {
    RpcFailure::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
}

async fn dispatch(
    state: &OpsRoutes,
    authenticated: &Authenticated,
    method: &str,
    params: Value,
) -> Result<Reply, RpcFailure> {
    let domains = &state.ops;
    match method {
        "initialize" => Ok(initialize(domains, &params).into()),
        "ping" => Ok(json!({}).into()),
        "tools/list" | "tools/call" if !domains.any_wired() => Err(method_not_found(method)),
        "tools/list" => Ok(Reply::Shared(tools::list(domains, authenticated.app_locked))),
        "tools/call" => {
            let caller = OpsCaller::new(authenticated)?;
            let ToolCall { tool, arguments, .. } = tool_call(params, |name| {
                tools::visible(domains, caller.app_locked).find(|t| t.name() == name)
            })?;
            let ctx = OpsCtx {
                domains,
                caller: &caller,
            };
            match tool.call(&ctx, arguments).await {
                Ok(result) | Err(ToolFailure::Result(result)) => Ok(result.into()),
                Err(ToolFailure::Rpc(failure)) => Err(failure),
            }
        }
        _ => Err(method_not_found(method)),
    }
}

fn initialize(domains: &OpsDomains, params: &Value) -> Value {
    let mut capabilities = json!({});
    if domains.any_wired() {
        capabilities["tools"] = json!({ "listChanged": false });
    }
    json!({
        "protocolVersion": protocol_version(params),
        "capabilities": capabilities,
        "serverInfo": { "name": "svc-ops", "title": "svc operator tools", "version": env!("CARGO_PKG_VERSION") },
        "instructions": "Operator tools of this svc server: manage the caller's apps, orgs and invites, connector keys, coupons and blueprints. Every tool acts only on the caller's own rows.",
    })
}
