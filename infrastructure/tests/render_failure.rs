//! A render whose generation fails: the `failed` outcome commits an error session with the
//! failure message, consumes the handshake, and mints no blueprint. The built-in generator never
//! fails, so this drives the agent service with a failing generator over the real SQLite adapters.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use svc::in_process_bus::InProcessEventBus;
use svc::system::{RandomIds, SystemClock};
use svc_application::ports::agent::{AppRepository, HostSession};
use svc_application::ports::generation::{GeneratedComponent, GenerationError, GenerationRequest, Generator};
use svc_application::services::agent::{
    AgentError, AgentPorts, AgentService, AgentSettings, Caller, GenerationQueue, HandshakeCommand, HandshakeOutcome,
    RenderCommand, RenderResult,
};
use svc_sql::agent::{
    SeaOrmAppRepository, SeaOrmBlueprintRepository, SeaOrmEventRepository, SeaOrmHandshakeRepository,
    SeaOrmSessionRepository,
};

/// Fails the way a language model can: with nothing usable, or with code that does not compile.
enum Broken {
    Nothing,
    BadCode,
}

#[async_trait::async_trait]
impl Generator for Broken {
    async fn generate(&self, _: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
        match self {
            Broken::Nothing => Err(GenerationError::ProductionFailed(
                "the model returned no component".into(),
            )),
            Broken::BadCode => Ok(GeneratedComponent {
                source: "export const NotDefault = () => fetch('https://evil.example');".into(),
                generator: "broken".into(),
                model: None,
                validator_score: None,
                compiled: None,
            }),
        }
    }
}

async fn service(generator: Broken) -> (AgentService, Caller) {
    let db = svc_sql::connect_and_migrate("sqlite::memory:").await.unwrap();
    let apps = Arc::new(SeaOrmAppRepository::new(db.clone()));
    let app = apps
        .default_app("tester", &|| "app1".to_owned(), chrono::Utc::now())
        .await
        .unwrap();
    let ports = AgentPorts {
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds),
        apps,
        handshakes: Arc::new(SeaOrmHandshakeRepository::new(db.clone())),
        sessions: Arc::new(SeaOrmSessionRepository::new(db.clone())),
        events: Arc::new(SeaOrmEventRepository::new(db.clone())),
        blueprints: Arc::new(SeaOrmBlueprintRepository::new(db.clone())),
        bus: Arc::new(InProcessEventBus::default()),
        generator: Arc::new(generator),
        compiler: Arc::new(svc_compiler::OxcCompiler::new()),
    };
    let settings = AgentSettings {
        default_session_ttl_seconds: 3600,
        model_registry: vec![],
        available_theme_ids: vec![],
        default_theme_id: "default".into(),
        replay_buffer: 100,
    };
    let service = AgentService::new(ports, settings, GenerationQueue::new(1, 1, Duration::from_secs(1)));
    (
        service,
        Caller {
            principal_id: "tester".into(),
            app_id: app.app_id.clone(),
            key_id: None,
        },
    )
}

async fn failed_render(generator: Broken) -> (AgentService, Caller, String, String, &'static str, String) {
    let (agent, caller) = service(generator).await;
    let hs = agent
        .handshake(
            &caller,
            HandshakeCommand {
                intent: "x".into(),
                contract: json!({}),
                variance: None,
                generator: None,
                force_create: false,
            },
        )
        .await
        .unwrap();
    let HandshakeOutcome::Agreed(hs) = hs else {
        panic!("agreed")
    };
    let cmd = RenderCommand {
        handshake_id: hs.handshake_id.clone(),
        props: json!({}),
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: HostSession::default(),
        origin: None,
        progress: None,
    };
    let RenderResult::Failed {
        identity,
        code,
        message,
    } = agent.render(&caller, cmd).await.unwrap()
    else {
        panic!("the render fails")
    };
    (agent, caller, hs.handshake_id, identity.session_id, code, message)
}

#[tokio::test]
async fn a_generation_failure_commits_an_error_session() {
    let (agent, caller, handshake_id, session_id, code, message) = failed_render(Broken::Nothing).await;
    assert_eq!(code, "PRODUCTION_FAILED");
    assert!(message.contains("no component"), "{message}");
    let session = agent.session_for(&caller, &session_id).await.unwrap();
    assert_eq!(
        session.failure.as_ref().unwrap().message,
        message,
        "the failure message is kept"
    );
    assert!(session.blueprint_id.is_none());
    let consumed = agent.consume(&caller, &session_id, 0).await.unwrap();
    assert_eq!(consumed.status.as_str(), "expired");
    assert!(matches!(
        agent.get_render_source(&caller, &session_id).await,
        Err(AgentError::NoSource(_))
    ));
    // The failed render consumed its handshake.
    let again = RenderCommand {
        handshake_id,
        props: json!({}),
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: HostSession::default(),
        origin: None,
        progress: None,
    };
    assert!(matches!(
        agent.render(&caller, again).await,
        Err(AgentError::InvalidParams { .. })
    ));
}

#[tokio::test]
async fn code_that_fails_the_compiler_checks_is_validation_error_with_the_findings() {
    let (_, _, _, _, code, message) = failed_render(Broken::BadCode).await;
    assert_eq!(code, "VALIDATION_ERROR");
    assert!(message.contains("default export"), "{message}");
    assert!(message.contains("fetch"), "{message}");
}
