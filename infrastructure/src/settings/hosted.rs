//! `[hosted]`: the multi-tenant plane (`svc serve --hosted`, docs/hosted.md).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SecretList;

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct HostedSettings {
    /// Hosted mode: PostgreSQL required, OAuth on, provider keys and credits on `/ops`, renders
    /// kept indefinitely unless they ask for a `ttlSeconds`.
    pub enabled: bool,
    /// Credit granted once to a user's wallet on its first use (`free_credit`).
    pub free_credit_cents: i64,
    /// Price of one cold generation, whatever the generator (cache hits are free).
    pub render_price_cents: i64,
    /// Prices by model route (`openai:gpt-5`) or generator slug (`builtin`), overriding
    /// `render_price_cents`.
    pub model_price_cents: BTreeMap<String, i64>,
    /// Master keys sealing provider keys at rest, `id:base64-of-32-bytes`: the first seals, every
    /// one opens (rotate with `svc hosted rotate-master-key`).
    pub master_keys: SecretList,
    /// Who may create an account: `closed` (only `svc users create`), `invite` (an org invite's
    /// acceptance) or `open` (anyone, on the sign-in page).
    pub signup: String,
    /// The longest a paid cold render runs, from its charge to its component stored: past it the
    /// render fails and is refunded, and a reservation still open twice this long after its
    /// charge (its process died) is refunded by the sweep. 0: derived from `[generation]`. At
    /// most 30 days.
    #[schemars(range(max = 2_592_000))]
    pub render_deadline_seconds: u64,
    /// Generations one principal (an account's user id, else the app id) holds in this
    /// replica's generation queue at once, running plus waiting; past it `svc_render` and
    /// `svc_ops_generate_blueprint` are refused as when the queue is saturated (-32014).
    #[schemars(range(min = 1, max = 1024))]
    pub generations_per_principal: usize,
    /// Org invites one account may send in a fixed hour (each queues a mail); past it
    /// `svc_ops_invite_to_org` answers `rate_limited` with `retryAfterMs`.
    #[schemars(range(min = 1, max = 10_000))]
    pub invite_mails_per_hour: u32,
    /// Orgs one account may own (create); past it `svc_ops_create_org` answers
    /// `org_limit_reached`.
    #[schemars(range(min = 1, max = 100_000))]
    pub orgs_per_account: u64,
    /// Connector keys one account holds live (each sign-in at the consent page mints one, as
    /// does `svc_ops_issue_connector_key`); minting past it revokes the account's oldest.
    #[schemars(range(min = 1, max = 10_000))]
    pub connector_keys_per_account: u64,
    /// Console sessions one account holds open (each console sign-in opens one); opening past
    /// it ends the account's oldest.
    #[schemars(range(min = 1, max = 10_000))]
    pub console_sessions_per_account: u64,
    /// Sign-in with an external OpenID Connect provider at the consent page (off while `issuer`
    /// is empty).
    pub oidc: HostedOidcSettings,
}

/// `[hosted.oidc]`: the external OpenID Connect provider svc is a client of (docs/hosted.md,
/// "Signing in with an identity provider").
#[derive(Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct HostedOidcSettings {
    /// The provider's issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`).
    /// Empty: no provider sign-in.
    pub issuer: String,
    /// svc's client id at the provider.
    pub client_id: String,
    /// svc's client secret at the provider (`client_secret_basic`).
    pub client_secret: String,
    /// The provider's name on the consent page's button, "Sign in with <display_name>".
    pub display_name: String,
}

impl Default for HostedSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            free_credit_cents: 100,
            render_price_cents: 5,
            model_price_cents: BTreeMap::new(),
            master_keys: SecretList::Many(Vec::new()),
            signup: "closed".into(),
            render_deadline_seconds: 0,
            generations_per_principal: 4,
            invite_mails_per_hour: 20,
            orgs_per_account: 10,
            connector_keys_per_account: 10,
            console_sessions_per_account: 10,
            oidc: HostedOidcSettings::default(),
        }
    }
}

impl Default for HostedOidcSettings {
    fn default() -> Self {
        Self {
            issuer: String::new(),
            client_id: String::new(),
            client_secret: String::new(),
            display_name: "your identity provider".into(),
        }
    }
}

/// Never the client secret: settings reach logs and error messages.
impl std::fmt::Debug for HostedOidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedOidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &if self.client_secret.is_empty() { "" } else { "<secret>" },
            )
            .field("display_name", &self.display_name)
            .finish()
    }
}
